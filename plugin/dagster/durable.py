"""Durable materializations: a re-execution of a run whose worker died resumes the step's Spark Connect operations,
and a terminated run interrupts them on the server.

Where the state lives: the Dagster instance's key-value store (its run storage's `kvs` table, what the daemons keep
their cursors in: `get_cursor_values` / `set_cursor_values`), under the step's run key (`run.run_key`: the root
run, the asset op, the partition). Why there, and not in the run's event log: each `set` is one SQL statement
committed before it returns — the engine records an operation's id before it submits it, so the record is there
whatever instant the worker is SIGKILLed — and a `get` reads one row by key from any process that has the instance
(the re-execution's run worker), where the event log is append-only and would be scanned run by run, and its
events would show in the UI as the step's own. A re-execution keeps its parent's root run id, so it finds the
state: a step its parent left unfinished (the worker died) is resumed; a step its parent finished starts afresh
(`step_state`: re-executing it is asking for it again); a new run starts its own.

Termination: Dagster stops a run by a SIGINT to the process running the step (`dagster dev`'s Terminate, the run
monitor) or a SIGTERM it maps to SIGINT (a container stopped, `kill` of `dagster asset materialize`), raised in
the step as `DagsterExecutionInterruptedError`. A detached Connect operation would go on running on the server:
`interrupting_operations` interrupts the operations the step waits for before that error unwinds the step.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from substrait_spark.hooks.durable import RunState

STATE_PREFIX = "substrait_spark"  # the instance's keys: substrait_spark/<run key>/<state key>
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class DagsterStore:
    """A `hooks/durable.Store` in the Dagster instance's key-value store, the keys under `scope` (a run key)."""

    def __init__(self, instance: Any, scope: str) -> None:
        self.instance, self.scope = instance, scope

    def _key(self, key: str) -> str:
        return f"{STATE_PREFIX}/{self.scope}/{key}"

    def get(self, key: str) -> Any:
        name = self._key(key)
        raw = self.instance.run_storage.get_cursor_values({name}).get(name)
        return json.loads(raw) if raw is not None else None

    def set(self, key: str, value: Any) -> None:
        self.instance.run_storage.set_cursor_values({self._key(key): json.dumps(value)})


def run_state(instance: Any, run_key: str) -> RunState:
    """The durable state of the step with `run_key` (`run.run_key`), kept in `instance`."""
    return RunState(DagsterStore(instance, run_key))


def step_state(context: Any, run_key: str) -> RunState:
    """The state of the step `context` runs: what an earlier run of the same root left unfinished is resumed (a
    re-execution from failure after its worker died); a step its parent run finished, re-executed (the user asked
    for it again), starts afresh — as clearing an Airflow task does — instead of reporting that run's result."""
    state = run_state(context.instance, run_key)
    if _finished_in_parent(context):
        state.forget()
    return state


def _finished_in_parent(context: Any) -> bool:
    from dagster import DagsterEventType

    parent = context.run.parent_run_id
    if parent is None:
        return False
    step = context.get_step_execution_context().step.key
    found = context.instance.get_records_for_run(parent, of_type=DagsterEventType.STEP_SUCCESS).records
    return any(r.event_log_entry.step_key == step for r in found)


Handler = Callable[[int, FrameType | None], Any] | int | None


@contextlib.contextmanager
def interrupting_operations(log: Callable[..., Any]) -> Iterator[None]:
    """Around a run in a step: a SIGINT or SIGTERM (a terminated run) first interrupts on the server the Spark
    Connect operations the step waits for, then does what the handler before it did (Dagster's raises
    `DagsterExecutionInterruptedError`), so the interruption goes on as Dagster's. In the signal handler itself:
    once the error unwinds the step, this process no longer knows which operations it waited for. Only the main
    thread can set signal handlers (as Dagster's own): elsewhere the run is left as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from substrait_spark.consumer.running.connect_operations import interrupt_in_flight

    # A handler not set from Python (None) cannot be put back; an ignored signal stops nothing.
    found = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    previous: dict[int, Handler] = {s: h for s, h in found.items() if h is not None and h is not signal.SIG_IGN}
    stopped: list[str] = []

    def handler(signo: int, frame: FrameType | None) -> None:
        stopped.extend(interrupt_in_flight())
        _delegate(signo, frame, previous[signo])

    for signo in previous:
        signal.signal(signo, handler)
    try:
        yield
    except BaseException:
        if stopped:
            log("Interrupted Spark Connect operation(s) %s: the run was stopped", ", ".join(stopped))
        raise
    finally:
        for signo, before in previous.items():
            signal.signal(signo, before)


def _delegate(signo: int, frame: FrameType | None, before: Handler) -> None:
    """What the signal would have done without `interrupting_operations`."""
    if callable(before):
        before(signo, frame)
    elif before == signal.SIG_DFL:  # the default action (SIGTERM: the process ends)
        signal.signal(signo, signal.SIG_DFL)
        os.kill(os.getpid(), signo)
