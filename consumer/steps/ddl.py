"""DdlRel on catalog tables: CREATE, CREATE_OR_REPLACE, ALTER, DROP, DROP_IF_EXIST — each one atomic catalog
commit made through the `WriteTarget` interface (pyiceberg), with its idempotency key kept in the table's
properties (a DDL commit has no snapshot to carry it).

- CREATE keeps the plan's nullability (required columns stay required); CREATE_OR_REPLACE of an existing table
  is Spark's atomic replace (an empty table of the new schema; Spark makes its columns optional).
- ALTER compares the after-image (`table_schema`) with the table: new optional columns are added, types widened
  (int→long, float→double, decimal precision up), required columns made optional; anything else — dropping,
  renaming, narrowing, a new required column — is refused with the reason, before anything is changed.
- VIEW: see `view_ddl` (the view keeps its Substrait definition in the catalog).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ..errors import ExecutionError, PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation
from ..report import Step
from ..scope import Scope
from ..types import nullable, schema_of
from . import common as c
from . import view_ddl
from .log import StepLog
from .targets import WriteTarget

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

DdlRel = alg.DdlRel
Op = Callable[["SubstraitConsumer", WriteTarget, T.StructType, StepLog, Step, str], None]


def consume_ddl(cx: SubstraitConsumer, rel: alg.DdlRel, path: str, outer: Scope | None) -> Relation:
    log = c.step_log(cx, path)
    kind = rel.WhichOneof("write_type")
    if kind != "named_object":
        raise (PlanInvalidError if kind is None else UnsupportedFeatureError)(f"DDL on {kind or 'nothing'}", path)
    if rel.object == DdlRel.DDL_OBJECT_VIEW:
        schema = _struct(rel, path) if rel.op in _NEEDS_SCHEMA else T.StructType([])
        return view_ddl.consume_view_ddl(cx, rel, path, outer, schema)
    if rel.object != DdlRel.DDL_OBJECT_TABLE:
        raise PlanInvalidError(f"DDL object {rel.object}", f"{path}.object")
    op = _OPS.get(rel.op)
    if op is None:
        raise PlanInvalidError(f"DDL op {rel.op}", f"{path}.op")
    if rel.HasField("table_defaults") and rel.table_defaults.fields:
        raise UnsupportedFeatureError("DDL table_defaults (column default values)", f"{path}.table_defaults")
    schema = _struct(rel, path) if rel.op in _NEEDS_SCHEMA else T.StructType([])
    target = c.locate(cx, log, rel.named_object.names, f"{path}.named_object")
    kind_name = DdlRel.DdlOp.Name(rel.op).removeprefix("DDL_OP_").lower() + "_table"
    with log.step(kind_name, target, path) as step:
        if not log.already_committed(step, target):
            op(cx, target, schema, log, step, path)
    _refresh(cx, target)
    cx.forget_table(target.identity)
    return c.empty(cx, [f.name for f in schema.fields], [f.dataType for f in schema.fields])


def _struct(rel: alg.DdlRel, path: str) -> T.StructType:
    if not rel.table_schema.names:
        raise PlanInvalidError("DDL with no table_schema", f"{path}.table_schema")
    names, types = schema_of(rel.table_schema, f"{path}.table_schema")
    flags = [nullable(t) for t in rel.table_schema.struct.types]
    return T.StructType([T.StructField(n, t, f) for n, t, f in zip(names, types, flags, strict=True)])


def _refresh(cx: SubstraitConsumer, target: WriteTarget) -> None:
    """Spark's Iceberg catalog caches tables: make it see what pyiceberg changed."""
    with contextlib.suppress(Exception):  # a dropped table: nothing left to refresh
        cx.spark.catalog.refreshTable(target.spark_name)


def _properties(log: StepLog, step: Step) -> dict[str, str]:
    return log.snapshot_properties(step)


def _create(cx, target: WriteTarget, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    if target.exists():
        raise ExecutionError(f"table {target.identity} already exists (DDL_OP_CREATE)", f"{path}.op")
    target.create(schema, _properties(log, step))


def _create_or_replace(cx, target: WriteTarget, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    if not target.exists():
        target.create(schema, _properties(log, step))
        return
    empty = cx.spark.range(0).select(*[F.lit(None).cast(f.dataType).alias(f.name) for f in schema.fields])
    c.writer(empty, target, log, step).createOrReplace()


def _drop(cx, target: WriteTarget, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    if not target.exists():
        raise ExecutionError(f"table {target.identity} does not exist (DDL_OP_DROP)", f"{path}.op")
    target.drop()


def _drop_if_exist(cx, target: WriteTarget, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    if not target.exists():
        step.status, step.reason = "skipped", "table does not exist (DDL_OP_DROP_IF_EXIST)"
        return
    target.drop()


def _alter(cx, target: WriteTarget, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    if not target.exists():
        raise ExecutionError(f"table {target.identity} does not exist (DDL_OP_ALTER)", f"{path}.op")
    current = list(cx.spark.read.table(target.spark_name).schema.fields)
    refused = unsafe_changes(current, list(schema.fields))
    if refused:
        raise UnsupportedFeatureError(f"ALTER of {target.identity}: " + "; ".join(refused), f"{path}.table_schema")
    target.alter(schema, _properties(log, step))


def unsafe_changes(current: list[T.StructField], after: list[T.StructField]) -> list[str]:
    """Why the after-image cannot be reached safely (empty: add columns, widen types, relax nullability)."""
    now = {f.name.lower(): f for f in current}
    wanted = {f.name.lower() for f in after}
    out = [
        f"dropping column {f.name!r} (or renaming it) is not done by ALTER"
        for f in current
        if f.name.lower() not in wanted
    ]
    for f in after:
        old = now.get(f.name.lower())
        if old is None:
            if not f.nullable:
                out.append(f"new column {f.name!r} is required: existing rows have no value for it")
        elif old.dataType != f.dataType and not _widens(old.dataType, f.dataType):
            out.append(
                f"column {f.name!r}: {old.dataType.simpleString()} → {f.dataType.simpleString()} is not a widening"
            )
        elif old.nullable and not f.nullable:
            out.append(f"column {f.name!r}: optional → required would reject existing NULLs")
    return out


def _widens(old: T.DataType, new: T.DataType) -> bool:
    """Iceberg's type promotions."""
    if isinstance(old, T.IntegerType) and isinstance(new, T.LongType):
        return True
    if isinstance(old, T.FloatType) and isinstance(new, T.DoubleType):
        return True
    if isinstance(old, T.DecimalType) and isinstance(new, T.DecimalType):
        return old.scale == new.scale and new.precision >= old.precision
    return False


_OPS: dict[int, Op] = {
    DdlRel.DDL_OP_CREATE: _create,
    DdlRel.DDL_OP_CREATE_OR_REPLACE: _create_or_replace,
    DdlRel.DDL_OP_ALTER: _alter,
    DdlRel.DDL_OP_DROP: _drop,
    DdlRel.DDL_OP_DROP_IF_EXIST: _drop_if_exist,
}
_NEEDS_SCHEMA = {DdlRel.DDL_OP_CREATE, DdlRel.DDL_OP_CREATE_OR_REPLACE, DdlRel.DDL_OP_ALTER}
