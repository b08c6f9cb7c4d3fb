"""DdlRel on views: CREATE, CREATE_OR_REPLACE, ALTER (a new definition for an existing view), DROP and
DROP_IF_EXIST — each one atomic catalog commit through the `ViewTarget` interface (Iceberg views, in hooks).

The view keeps its definition as a Substrait plan (`consumer/translation/views.py`); a later plan reads it through a
NamedTable. The definition is translated when the view is defined, so a definition that would not read (an
unknown table, a type that does not fit `table_schema`) is refused before anything is committed. Every version
carries the step's idempotency key in its summary, so a retried step finds its own commit. A view step never
replaces or drops a table of the same name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ...errors import ExecutionError, PlanInvalidError, ResolutionError, TargetRefusedError
from ...translation.steps import PendingStep
from ..report import Skip, Step, StepKind
from . import common as c
from .log import StepLog
from .targets import ViewTarget

if TYPE_CHECKING:
    from ...translation.consumer import SubstraitConsumer

DdlRel = alg.DdlRel
Op = Callable[[ViewTarget, str, T.StructType, StepLog, Step, str], None]


def execute_view_ddl(cx: SubstraitConsumer, log: StepLog, pending: PendingStep) -> None:
    """Run a view DDL step: its definition was translated (and checked) with the plan (`translation/steps.py`)."""
    path = pending.path
    target = _locate(cx, log, pending.target, f"{path}.named_object")
    kind = StepKind.of_op(pending.op, "view")
    with log.step(kind, target, path) as step:  # type: ignore[arg-type]  # a ViewTarget reports like a table
        if not log.already_committed(step, target):
            _OPS[pending.rel.op](target, pending.definition, pending.schema, log, step, path)
    cx.forget_table(target.identity)


def _locate(cx: SubstraitConsumer, log: StepLog, names: Sequence[str], path: str) -> ViewTarget:
    if not names:
        raise PlanInvalidError("view DDL with no name", path)
    find = getattr(log.targets, "view_target", None)
    if find is None:
        raise TargetRefusedError("DDL on views needs a catalog that keeps views (an Iceberg catalog)", path)
    try:
        return find(cx.spark, list(names))
    except ResolutionError as exc:
        raise exc.at(path) from None


def _no_table(target: ViewTarget, what: str, path: str) -> None:
    if target.table_exists():
        raise ExecutionError(f"{target.identity} is a table, not a view ({what})", f"{path}.object")


def _create(target: ViewTarget, definition: str, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    _no_table(target, "DDL_OP_CREATE", path)
    if target.exists():
        raise ExecutionError(f"view {target.identity} already exists (DDL_OP_CREATE)", f"{path}.op")
    target.commit(definition, schema, log.snapshot_properties(step))


def _create_or_replace(
    target: ViewTarget, definition: str, schema: T.StructType, log: StepLog, step: Step, path: str
) -> None:
    _no_table(target, "DDL_OP_CREATE_OR_REPLACE", path)
    target.commit(definition, schema, log.snapshot_properties(step))


def _alter(target: ViewTarget, definition: str, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    _no_table(target, "DDL_OP_ALTER", path)
    if not target.exists():
        raise ExecutionError(f"view {target.identity} does not exist (DDL_OP_ALTER)", f"{path}.op")
    target.commit(definition, schema, log.snapshot_properties(step))


def _drop(target: ViewTarget, definition: str, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    _no_table(target, "DDL_OP_DROP", path)
    c.drop_once(target, log, step, "view", path)


def _drop_if_exist(
    target: ViewTarget, definition: str, schema: T.StructType, log: StepLog, step: Step, path: str
) -> None:
    _no_table(target, "DDL_OP_DROP_IF_EXIST", path)
    if not target.exists():
        step.skipped(Skip.ABSENT, "view does not exist (DDL_OP_DROP_IF_EXIST)")
        return
    target.drop()


_OPS: dict[int, Op] = {
    DdlRel.DDL_OP_CREATE: _create,
    DdlRel.DDL_OP_CREATE_OR_REPLACE: _create_or_replace,
    DdlRel.DDL_OP_ALTER: _alter,
    DdlRel.DDL_OP_DROP: _drop,
    DdlRel.DDL_OP_DROP_IF_EXIST: _drop_if_exist,
}
