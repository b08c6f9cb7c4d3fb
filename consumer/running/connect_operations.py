"""Spark Connect commands of a run as reattachable executions whose operation ids the run chooses and records.

Why: an orchestrator's worker can die while the server runs a write. The server keeps the execution going
(reattachable execution is on by default; a detached one is kept for `spark.connect.execute.manager.
detachedTimeout`), so a later try that knows the operation id can reattach to it — or collect its finished result
— instead of submitting the query again. pyspark's own iterator picks a random id and releases each response as
it reads it, so neither is possible through it: here each command a run's output sends (`DataFrameWriter.save`,
`saveAsTable`, the `noop` count) goes through `CommandRunner`, which
- records `{operation_id, session_id, user_id, status: started}` in a `Ledger` before `ExecutePlan`;
- reads the response stream without releasing it until the result is complete (a reattach from the start of the
  stream then sees every response), reattaching from the last response id when the server ends a stream early;
- reads the observed metrics (the output's row count) from the same stream, on every client — pyspark 3.5's
  Connect client cannot read them itself, which used to cost a second scan (`observe.py`);
- records `{status: done, observed}` when the result is complete, and only then releases the execution.
A later try asks the ledger first: done → not run again (`Resume.EARLIER`); started → `ReattachExecute` from the
start (`REATTACHED`); the server no longer has it (`INVALID_HANDLE.*`, `INVALID_CURSOR.*`) → run again under a new
id (`RERUN`). The ledger is the caller's: a dict for one process, the task state store for an Airflow task.

Gap stated: pyspark has no public API for a client-chosen operation id or for reattaching from another process,
so this module uses the Connect client's own request builder, stub, channel metadata and error mapping
(`_execute_plan_request_with_metadata`, `_stub`, `_builder`, `_session_id`, `_user_id`, `_handle_error`), the same
on pyspark 3.5 and 4.x (both clients run the durable-run tests against a Spark 4 server).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from ..errors import ExecutionError
from . import connect_progress
from .report import Operation, Resume

STARTED, DONE = "started", "done"
# What the server says when it no longer holds an execution (or its session): the operation runs again.
GONE = ("INVALID_HANDLE.", "INVALID_CURSOR.")


class Ledger(Protocol):
    """Where a run keeps what a later try needs: JSON values by key (the task state store, a dict). A ledger may
    also have `detach(record)`: then a submitted execution is not waited for here — `detach` raises (a deferrable
    task defers to a trigger that waits for the operation `record` names) and a later try collects the result."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, value: dict[str, Any]) -> None: ...


class MemoryLedger:
    """A ledger for one process (the CLI, a test): a later try in another process starts afresh."""

    def __init__(self) -> None:
        self.values: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.values.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.values[key] = dict(value)


_active: contextvars.ContextVar[CommandRunner | None] = contextvars.ContextVar("substrait_commands", default=None)


# The operations this process is waiting for (submitted or reattached), by operation id: what `interrupt_in_flight`
# stops. A reattached operation carries an earlier try's tags, so interrupting by this try's tag would miss it.
_in_flight: dict[str, tuple[Any, dict[str, Any]]] = {}


def interrupt_in_flight() -> list[str]:
    """Interrupt on the server every operation this process is waiting for (a task being killed); their ids."""
    stopped = []
    for op_id, (runner, record) in list(_in_flight.items()):
        with contextlib.suppress(Exception):  # the operation may have ended meanwhile
            runner._interrupt(record)
            stopped.append(op_id)
    return stopped


def active_runner() -> CommandRunner | None:
    """The runner the commands of this context go through (None outside a run on Spark Connect)."""
    return _active.get()


class _Gone(Exception):
    """The server does not hold the execution any more."""


def _pb2() -> Any:
    import pyspark.sql.connect.proto as pb2

    return pb2


def _literal(lit: Any) -> Any:
    """An observed metric's value as a JSON value (the ledger keeps it): numbers, text and booleans as they are,
    anything else as its text."""
    kind = lit.WhichOneof("literal_type")
    if kind in (None, "null"):
        return None
    value = getattr(lit, kind)
    return value if isinstance(value, bool | int | float | str) else str(value)


class CommandRunner:
    """Runs the Connect commands sent inside `output(key)` blocks as recorded, reattachable executions."""

    def __init__(self, spark: Any, ledger: Ledger, *, prefix: str = "") -> None:
        self.spark, self.ledger, self.prefix = spark, ledger, prefix
        self.client = spark.client
        self._key: str | None = None
        self._count = 0
        self._operations: list[Operation] = []
        self.observed: dict[str, list[Any]] = {}  # observation name → values, of the commands run
        self.last: Operation | None = None

    # ---- the block an output's commands run in -----------------------------------------------------------

    @contextmanager
    def output(self, key: str) -> Iterator[list[Operation]]:
        """Commands sent inside run through this runner, keyed `key.0`, `key.1`, …; yields their operations."""
        self._key, self._count, self._operations = f"{self.prefix}{key}", 0, []
        operations = self._operations
        token = _active.set(self)
        original = vars(self.client).get("execute_command")
        self.client.execute_command = self._execute_command
        try:
            yield operations
        finally:
            _active.reset(token)
            if original is None:
                del self.client.execute_command
            else:
                self.client.execute_command = original
            self._key = None

    def scratch(self, name: str) -> str:
        """A name that stays the same for this block's output on every try (a write's staging folder)."""
        key = f"{self._key}.scratch"
        found = self.ledger.get(key)
        if found is None:
            found = {"name": f"{name}-{uuid.uuid4().hex[:12]}"}
            self.ledger.put(key, found)
        return str(found["name"])

    def finished_earlier(self) -> bool:
        """The last command was finished by an earlier try (and not run now)."""
        return self.last is not None and self.last.resumed is Resume.EARLIER

    # ---- one command ------------------------------------------------------------------------------------

    def _execute_command(self, command: Any, observations: Any = None) -> Any:
        assert self._key is not None
        key = f"{self._key}.{self._count}"
        self._count += 1
        names = _observation_names(command)
        started = time.perf_counter()
        record = self.ledger.get(key)
        if record is not None and record.get("status") == DONE:
            op = Operation(record["operation_id"], record["session_id"], Resume.EARLIER)
            observed = record.get("observed") or []
        else:
            op, observed = self._run(key, command, record)
            op.spark_ms = round((time.perf_counter() - started) * 1000, 1)
        # An earlier try's command (finished, or reattached to) named its observations otherwise: the values, in
        # the order this command names them.
        self.observed.update(zip(names, [values for _, values in observed], strict=False))
        self._operations.append(op)
        self.last = op
        return self._result_shape(op)

    def _run(self, key: str, command: Any, record: dict[str, Any] | None) -> tuple[Operation, list[list[Any]]]:
        if record is not None and record.get("operation_id"):
            try:
                values = self._stream(record, self._reattach(record, None))
                self.ledger.put(key, {**record, "status": DONE, "observed": values})
                return Operation(record["operation_id"], record["session_id"], Resume.REATTACHED), values
            except _Gone:
                resumed = Resume.RERUN
        else:
            resumed = Resume.FRESH
        fresh = {
            "operation_id": str(uuid.uuid4()),
            "session_id": self.client._session_id,
            "user_id": self.client._user_id or "",
            "status": STARTED,
        }
        self.ledger.put(key, fresh)  # before the server hears of it: a later try looks for this id
        try:
            values = self._stream(fresh, self._detach_or_follow(fresh, self._submit(fresh, command)))
        except _Gone as exc:  # the session it was sent in is gone: nothing to resume, the error is the server's
            raise ExecutionError(f"Spark Connect operation {fresh['operation_id']}: {exc}") from None
        self.ledger.put(key, {**fresh, "status": DONE, "observed": values})
        return Operation(fresh["operation_id"], fresh["session_id"], resumed), values

    def _submit(self, record: dict[str, Any], command: Any) -> Any:
        pb2 = _pb2()
        req = self.client._execute_plan_request_with_metadata()
        req.operation_id = record["operation_id"]
        req.plan.command.CopyFrom(command)
        req.request_options.append(
            pb2.ExecutePlanRequest.RequestOption(reattach_options=pb2.ReattachOptions(reattachable=True))
        )
        return self.client._stub.ExecutePlan(req, metadata=self.client._builder.metadata())

    def _detach_or_follow(self, record: dict[str, Any], call: Any) -> Iterator[Any]:
        """The submitted execution's responses to read here — or, where the ledger hands the wait to another
        process (`Ledger.detach`: a deferrable Airflow task's trigger), nothing: once the server has the execution
        (its first response: a Spark 4 server sends progress every few seconds) the stream is closed, the
        execution goes on detached, and `detach` is called (it raises: the task defers). An execution that is
        complete by its first response is read here."""
        detach = getattr(self.ledger, "detach", None)
        if detach is None:
            return iter(call)
        try:
            first = next(call)
        except StopIteration:
            return iter(())
        except Exception as exc:
            if _is_gone(exc):
                raise _Gone(str(exc)) from None
            self.client._handle_error(exc)
        if first.HasField("result_complete"):
            return itertools.chain([first], call)
        call.cancel()  # the execution is reattachable: it goes on without this stream
        detach(record)
        raise AssertionError("Ledger.detach returned instead of raising")

    def _reattach(self, record: dict[str, Any], last_response_id: str | None) -> Any:
        req = _pb2().ReattachExecuteRequest(
            session_id=record["session_id"],
            operation_id=record["operation_id"],
            client_type=self.client._builder.userAgent,
        )
        if record.get("user_id"):
            req.user_context.user_id = record["user_id"]
        if last_response_id:
            req.last_response_id = last_response_id
        return self.client._stub.ReattachExecute(req, metadata=self.client._builder.metadata())

    def _release(self, record: dict[str, Any]) -> None:
        pb2 = _pb2()
        req = pb2.ReleaseExecuteRequest(
            session_id=record["session_id"],
            operation_id=record["operation_id"],
            client_type=self.client._builder.userAgent,
            release_all=pb2.ReleaseExecuteRequest.ReleaseAll(),
        )
        if record.get("user_id"):
            req.user_context.user_id = record["user_id"]
        with contextlib.suppress(Exception):  # the server drops it after its detached timeout anyway
            self.client._stub.ReleaseExecute(req, metadata=self.client._builder.metadata())

    def _interrupt(self, record: dict[str, Any]) -> None:
        pb2 = _pb2()
        req = pb2.InterruptRequest(
            session_id=record["session_id"],
            client_type=self.client._builder.userAgent,
            interrupt_type=pb2.InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID,
            operation_id=record["operation_id"],
        )
        if record.get("user_id"):
            req.user_context.user_id = record["user_id"]
        self.client._stub.Interrupt(req, metadata=self.client._builder.metadata())

    def _stream(self, record: dict[str, Any], responses: Any) -> list[list[Any]]:
        """Read the execution's responses to the end (reattaching where the server ends a stream early); the
        observed metrics, (name, values) in the order the server sent them."""
        values: list[list[Any]] = []
        last_id: str | None = None
        progress = _progress(self.client, record["operation_id"])
        _in_flight[record["operation_id"]] = (self, record)
        try:
            while True:
                complete = False
                try:
                    for response in responses:
                        last_id = response.response_id or last_id
                        for metrics in response.observed_metrics:
                            values.append([metrics.name, [_literal(v) for v in metrics.values]])
                        if progress is not None and response.HasField("execution_progress"):
                            _tick(progress, response)
                        elif progress is None and connect_progress.listening():
                            connect_progress.notify(response)  # the 3.5 client: an unknown field
                        if response.HasField("result_complete"):
                            complete = True
                except Exception as exc:
                    if _is_gone(exc):
                        raise _Gone(str(exc)) from None
                    self.client._handle_error(exc)
                if complete:
                    break
                responses = self._reattach(record, last_id)  # the server ended the stream early: read on
        finally:
            _in_flight.pop(record["operation_id"], None)
            if progress is not None:
                progress.__exit__(None, None, None)
        self._release(record)
        return values

    def _result_shape(self, op: Operation) -> Any:
        """What pyspark's `execute_command` returns to its caller (the writer ignores all but the shape)."""
        try:
            from pyspark.sql.connect.client.core import ExecutionInfo  # type: ignore[attr-defined]  # pyspark 4

            return None, {}, ExecutionInfo([], [], op.operation_id)
        except ImportError:
            return None, {}


def _observation_names(command: Any) -> list[str]:
    """The names of the observations (`CollectMetrics`) in a command's input, outermost first."""
    names: list[str] = []
    rel = None
    for field in ("write_operation", "write_operation_v2"):
        if command.HasField(field):
            rel = getattr(command, field).input
    while rel is not None and rel.WhichOneof("rel_type") == "collect_metrics":
        names.append(rel.collect_metrics.name)
        rel = rel.collect_metrics.input
    return names


def _is_gone(exc: BaseException) -> bool:
    text = str(exc)
    return any(marker in text for marker in GONE)


def _progress(client: Any, operation_id: str) -> Any:
    """pyspark 4's progress object for the handlers registered on the session (none on the 3.5 client)."""
    handlers = getattr(client, "_progress_handlers", None)
    if not handlers:
        return None
    from pyspark.sql.connect.shell.progress import Progress  # type: ignore[import-not-found]  # pyspark 4

    return Progress(handlers=handlers, operation_id=operation_id).__enter__()


def _tick(progress: Any, response: Any) -> None:
    from pyspark.sql.connect.shell.progress import from_proto  # pyspark 4

    stages, inflight = from_proto(response.execution_progress)
    progress.update_ticks(stages, inflight, operation_id=response.operation_id)
