"""Progress of a plan's Spark jobs while it runs: a line at most every `every_s` seconds once the run has taken
longer than `after_s`, from what Spark reports of its stages (tasks done of all, tasks running).

Where the stages come from depends on the client (hooks may use the SparkContext; the engine may not):
- classic Spark: a daemon thread polls `sparkContext.statusTracker()` (active stages and their task counts);
- Spark Connect with pyspark 4: `spark.registerProgressHandler` (the server streams each operation's stages);
- Spark Connect with the pyspark 3.5 client: no progress API exists; the engine's command runner reads the
  server's progress messages from the response stream itself (`consumer/running/connect_progress.py`).
Lines are plain, one per report, never carriage-return animations: logs and terminals read them alike.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from substrait_spark.consumer.clients import is_connect
from substrait_spark.consumer.running import connect_progress

AFTER_S = 10.0  # a plan faster than this prints no stage progress
EVERY_S = 5.0  # at most one progress line per this many seconds
POLL_S = 0.5  # how often the classic watcher asks the status tracker


class ProgressKind(StrEnum):
    """Where a session's progress comes from."""

    STATUS_TRACKER = "status tracker"  # classic Spark
    CONNECT_HANDLER = "connect progress handler"  # Spark Connect, pyspark >= 4
    CONNECT_STREAM = "connect progress messages"  # Spark Connect through the pyspark 3.5 client (the engine's)


@dataclass(frozen=True)
class StageState:
    """One stage as Spark reports it."""

    stage_id: int
    tasks: int
    done: int
    running: int | None = None  # the Connect handler reports running tasks for the whole operation only


def progress_text(label: str, elapsed_s: float, stages: Iterable[StageState], running: int | None = None) -> str:
    """`q01.bin: 23 s, stage 4: 120/200 tasks done (8 running), stage 5: 0/10 tasks done`."""
    parts = []
    for s in sorted(stages, key=lambda s: s.stage_id):
        part = f"stage {s.stage_id}: {s.done}/{s.tasks} tasks done"
        parts.append(part + (f" ({s.running} running)" if s.running else ""))
    tail = f", {running} task(s) running" if running else ""
    return f"{label}: {elapsed_s:.0f} s, " + (", ".join(parts) or "no stage running") + tail


def progress_kind(spark: Any) -> ProgressKind:
    if not is_connect(spark):
        return ProgressKind.STATUS_TRACKER
    return ProgressKind.CONNECT_HANDLER if hasattr(spark, "registerProgressHandler") else ProgressKind.CONNECT_STREAM


class StageProgress:
    """A context manager around a plan's run that calls `emit` with progress lines (see the module docstring)."""

    def __init__(
        self,
        spark: Any,
        label: str,
        emit: Callable[[str], None],
        *,
        after_s: float | None = None,
        every_s: float | None = None,
        poll_s: float | None = None,
        job_group: str | None = None,
    ):
        self.spark, self.label, self.emit = spark, label, emit
        self.job_group = job_group  # classic: only the stages of this job group's jobs (a session shared by tasks)
        # Read at call time, not bound as defaults: a test (or a user's wrapper) can set the module's values.
        self.after_s = AFTER_S if after_s is None else after_s
        self.every_s = EVERY_S if every_s is None else every_s
        self.poll_s = POLL_S if poll_s is None else poll_s
        self.kind = progress_kind(spark)
        self._start = 0.0
        self._last: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> StageProgress:
        self._start = time.monotonic()
        if self.kind is ProgressKind.STATUS_TRACKER:
            tracker = _tracker(self.spark)
            if tracker is not None:
                self._thread = threading.Thread(target=self._poll, args=(tracker,), daemon=True, name="stage-progress")
                self._thread.start()
        elif self.kind is ProgressKind.CONNECT_HANDLER:
            self.spark.registerProgressHandler(self._handle)
        else:
            connect_progress.add_listener(self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.kind is ProgressKind.CONNECT_HANDLER:
            self.spark.removeProgressHandler(self._handle)
        elif self.kind is ProgressKind.CONNECT_STREAM:
            connect_progress.remove_listener(self._handle)

    def _due(self) -> float | None:
        """The elapsed seconds when a line is due now (past `after_s`, `every_s` since the last), else None."""
        now = time.monotonic()
        elapsed = now - self._start
        if elapsed < self.after_s or (self._last is not None and now - self._last < self.every_s):
            return None
        return elapsed

    def _say(self, elapsed: float, stages: list[StageState], running: int | None = None) -> None:
        with self._lock:
            self._last = time.monotonic()
        self.emit(progress_text(self.label, elapsed, stages, running))

    def _poll(self, tracker: Any) -> None:
        while not self._stop.wait(self.poll_s):
            elapsed = self._due()
            if elapsed is None:
                continue
            try:
                stages = [_classic_stage(tracker, i) for i in _active_stages(tracker, self.job_group)]
            except Exception:  # the session stopped under us: no more progress to report
                return
            active = [s for s in stages if s is not None]
            if active:
                self._say(elapsed, active)

    def _handle(
        self, stages: Any = None, inflight_tasks: int = 0, operation_id: Any = None, done: bool = False
    ) -> None:
        """pyspark 4's Connect `ProgressHandler` (called with keywords on the thread running the operation)."""
        elapsed = None if done else self._due()
        if elapsed is None:
            return
        states = [StageState(s.stage_id, s.num_tasks, s.num_completed_tasks) for s in (stages or []) if not s.done]
        if states:
            self._say(elapsed, states, inflight_tasks)


def _tracker(spark: Any) -> Any:
    try:
        return spark.sparkContext.statusTracker()
    except Exception:  # no SparkContext on this session
        return None


def _active_stages(tracker: Any, job_group: str | None) -> list[int]:
    """The active stages (of the job group's running jobs, when one is given)."""
    active = list(tracker.getActiveStageIds())
    if job_group is None:
        return active
    mine: set[int] = set()
    for job in tracker.getJobIdsForGroup(job_group):
        info = tracker.getJobInfo(job)
        if info is not None:
            mine.update(info.stageIds)
    return [i for i in active if i in mine]


def _classic_stage(tracker: Any, stage_id: int) -> StageState | None:
    info = tracker.getStageInfo(stage_id)
    if info is None:
        return None
    return StageState(stage_id, info.numTasks, info.numCompletedTasks, info.numActiveTasks)
