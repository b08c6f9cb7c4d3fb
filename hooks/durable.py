"""Durable runs: what a later try of a plan run needs, kept in a store that outlives the worker.

A run's state is a header and the engine's ledger entries (`consumer/running/connect_operations.py`: each Spark
Connect operation's id and session before it starts, its end; each output delivered), all under one prefix in a
key-value store the orchestrator keeps per task: Airflow's task state store (Airflow >= 3.3), a JSON file for the
CLI (`--state FILE`), Dagster's instance key-value store for a run and its re-executions.

The header says which plan the state belongs to (sha256 and version id), where its run got to (`RunPhase`) and a
generation id that prefixes every ledger key. A try of the same plan bytes resumes a running generation and takes a
finished one's stored report (nothing run again); a try whose plan bytes differ, or after a failure no try can fix,
starts a new generation, so state of another plan is never resumed. Clearing an Airflow task discards its state:
the next try starts fresh.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol


class Store(Protocol):
    """A key-value store of JSON values that outlives the process (Airflow's `task_state_store` has this shape)."""

    def get(self, key: str) -> Any: ...

    def set(self, key: str, value: Any) -> None: ...


class RunPhase(StrEnum):
    """Where the run of a generation got to: an earlier try `RUNNING` (it died, or is resumable) is resumed."""

    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"


HEADER_KEY = "substrait_run"


@dataclass(frozen=True)
class Generation:
    """The header of one generation of a run's state: the plan it ran and where it got to."""

    id: str
    plan_sha256: str | None
    plan_version_id: str | None
    phase: RunPhase = RunPhase.RUNNING

    def to_dict(self) -> dict[str, Any]:
        return {
            "generation": self.id,
            "plan_sha256": self.plan_sha256,
            "plan_version_id": self.plan_version_id,
            "phase": self.phase.value,
        }

    @classmethod
    def of(cls, value: Any) -> Generation | None:
        if not isinstance(value, Mapping) or not value.get("generation"):
            return None
        try:
            phase = RunPhase(value.get("phase", RunPhase.RUNNING))
        except ValueError:
            return None
        return cls(str(value["generation"]), value.get("plan_sha256"), value.get("plan_version_id"), phase)


class RunState:
    """A plan run's state in `store`: `resume_or_start` picks the generation, `ledger` is what the engine writes."""

    def __init__(
        self, store: Store, *, header_key: str = HEADER_KEY, detach: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.store, self.header_key = store, header_key
        # Hands the wait for a submitted operation to another process (it raises: a deferrable task defers).
        self.detach = detach
        self.generation: Generation | None = None
        self.resumed = False  # an earlier try's generation is being resumed

    def stored(self) -> Generation | None:
        return Generation.of(self.store.get(self.header_key))

    def resume_or_start(self, plan_sha256: str | None, plan_version_id: str | None) -> Generation:
        """The earlier try's generation when it ran these plan bytes and did not finish, else a new one."""
        found = self.stored()
        if found is not None and found.phase is RunPhase.RUNNING and found.plan_sha256 == plan_sha256:
            self.generation, self.resumed = found, True
            return found
        self.generation = Generation(uuid.uuid4().hex, plan_sha256, plan_version_id)
        self.store.set(self.header_key, self.generation.to_dict())
        return self.generation

    def finish(self, phase: RunPhase, report: Mapping[str, Any] | None = None) -> None:
        """The generation ended: a later try starts a new one (a failed run is run again, its committed steps
        skipped by their idempotency keys; a finished one is not resumed). A successful run's `report` is kept for
        a try that finds the run finished (its worker died before the task ended): it publishes that report."""
        if self.generation is not None:
            if report is not None:
                self.store.set(self._report_key, dict(report))
            self.generation = Generation(
                self.generation.id, self.generation.plan_sha256, self.generation.plan_version_id, phase
            )
            self.store.set(self.header_key, self.generation.to_dict())

    def forget(self) -> None:
        """Start afresh: the stored generation is no longer resumed nor reported (what clearing an Airflow task
        does to its state; a Dagster step re-executed after its parent run finished it)."""
        self.store.set(self.header_key, None)
        self.generation, self.resumed = None, False

    @property
    def _report_key(self) -> str:
        return f"{self.header_key}.report"

    def finished_report(self, plan_sha256: str | None = None) -> dict[str, Any] | None:
        """The report of the stored generation when it finished successfully (running `plan_sha256`, when
        given), else None."""
        found = self.stored()
        if found is None or found.phase is not RunPhase.SUCCESS:
            return None
        if plan_sha256 is not None and found.plan_sha256 != plan_sha256:
            return None
        value = self.store.get(self._report_key)
        return dict(value) if isinstance(value, Mapping) else None

    def ledger(self) -> StoreLedger:
        assert self.generation is not None, "resume_or_start first"
        ledger = StoreLedger(self.store, f"{self.header_key}.{self.generation.id}.")
        if self.detach is not None:
            ledger.detach = self.detach  # type: ignore[attr-defined]  # the engine looks for it (`Ledger`)
        return ledger


class StoreLedger:
    """The engine's `Ledger` over a `Store`, keys under a generation's prefix."""

    def __init__(self, store: Store, prefix: str) -> None:
        self.store, self.prefix = store, prefix

    def get(self, key: str) -> dict[str, Any] | None:
        value = self.store.get(self.prefix + key)
        return dict(value) if isinstance(value, Mapping) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.store.set(self.prefix + key, value)


class FileStore:
    """A JSON file as the store (the CLI's `--state FILE`): each `set` replaces the file atomically."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def _values(self) -> dict[str, Any]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}  # type: ignore[no-any-return]

    def get(self, key: str) -> Any:
        return self._values().get(key)

    def set(self, key: str, value: Any) -> None:
        values = {**self._values(), key: value}  # read again: the batch's other plans write the same file
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(values, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


class AirflowStore:
    """Airflow's `task_state_store` (3.3+): values kept for every try of the task instance, never expiring while
    it runs (a retry may come long after), discarded when the task is cleared."""

    def __init__(self, accessor: Any) -> None:
        self.accessor = accessor
        try:
            from airflow.sdk.execution_time.context import NEVER_EXPIRE

            self._retention: Any = NEVER_EXPIRE
        except ImportError:
            self._retention = None

    def get(self, key: str) -> Any:
        return self.accessor.get(key)

    def set(self, key: str, value: Any) -> None:
        if self._retention is None:
            self.accessor.set(key, value)
        else:
            self.accessor.set(key, value, retention=self._retention)
