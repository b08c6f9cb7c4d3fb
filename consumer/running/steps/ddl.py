"""DdlRel on catalog tables: CREATE, CREATE_OR_REPLACE, ALTER, DROP, DROP_IF_EXIST — each one atomic catalog
commit made through the `WriteTarget` interface (pyiceberg), with its idempotency key kept in the table's
properties (a DDL commit has no snapshot to carry it).

- CREATE keeps the plan's nullability (required columns stay required); CREATE_OR_REPLACE of an existing table
  is Spark's atomic replace (an empty table of the new schema; Spark makes its columns optional).
- ALTER compares the after-image (`table_schema`) with the table, columns matched by name in any case: new optional
  columns are added, types widened (int→long, float→double, decimal precision up), required columns made optional,
  columns missing from the after-image dropped (Iceberg schema evolution: old data files keep their values, no
  longer read) unless the table's layout needs them (identifier fields, partition or sort sources). When columns
  are both missing and new, they are renames if they pair up one-to-one at the same positions with the same type
  or a widening; otherwise renames cannot be told from drops and adds, and the ALTER is refused. Narrowing, a new
  required column, optional → required are refused too; every reason is given, before anything is changed. All
  changes of one ALTER are one catalog commit, which also records the step's key in the table's properties.
- DROP records the step's key in the namespace's properties (`substrait-spark.dropped.<table>`, one per table name)
  before dropping: a retry finding no table but its own key there reports the step already committed (`_drop`).
- `table_defaults`: NULL defaults are what Iceberg columns have anyway and are accepted; any other default is
  refused, never dropped. Iceberg keeps column defaults (initial-default, write-default) in format v3 tables only;
  pyiceberg 0.12 writes no v3 metadata ("Writing V3 is not yet supported"), Iceberg's Java library refuses an
  initial-default on v1/v2 tables, and Spark 3.5's Iceberg writers do not fill in a write-default.
- VIEW: see `view_ddl` (the view keeps its Substrait definition in the catalog).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ...errors import ExecutionError, TargetRefusedError
from ...translation.steps import DEFAULTS_REFUSED, PendingStep, StepObject, set_defaults
from ..report import Skip, Step, StepKind
from . import common as c
from . import view_ddl
from .log import StepLog
from .targets import SchemaChange, WriteTarget

if TYPE_CHECKING:
    from ...translation.consumer import SubstraitConsumer

DdlRel = alg.DdlRel
Op = Callable[["SubstraitConsumer", WriteTarget, T.StructType, StepLog, Step, str], None]


__all__ = ["DEFAULTS_REFUSED", "execute_ddl", "schema_change", "set_defaults"]  # the first and last: translation's


def execute_ddl(cx: SubstraitConsumer, log: StepLog, pending: PendingStep) -> None:
    """Run a DdlRel's step (its plan checks were made when it was translated: `translation/steps.py`)."""
    path = pending.path
    c.writable(log, path)
    if pending.object is StepObject.VIEW:
        view_ddl.execute_view_ddl(cx, log, pending)
        return
    target = c.locate(cx, log, pending.target, f"{path}.named_object")
    with log.step(StepKind.of_op(pending.op, "table"), target, path) as step:
        if not log.already_committed(step, target):
            _OPS[pending.rel.op](cx, target, pending.schema, log, step, path)
    _refresh(cx, target)
    cx.forget_table(target.identity)


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
    c.drop_once(target, log, step, "table", path)


def _drop_if_exist(cx, target: WriteTarget, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    if not target.exists():
        step.skipped(Skip.ABSENT, "table does not exist (DDL_OP_DROP_IF_EXIST)")
        return
    target.drop()


def _alter(cx, target: WriteTarget, schema: T.StructType, log: StepLog, step: Step, path: str) -> None:
    if not target.exists():
        raise ExecutionError(f"table {target.identity} does not exist (DDL_OP_ALTER)", f"{path}.op")
    _refresh(cx, target)  # positions and types as the catalog has them now
    current = list(cx.spark.read.table(target.spark_name).schema.fields)
    change = schema_change(current, list(schema.fields), target.layout_columns())
    if change.refused:
        raise TargetRefusedError(f"ALTER of {target.identity}: " + "; ".join(change.refused), f"{path}.table_schema")
    target.alter(change, _properties(log, step))
    step.details = _described(change)


def schema_change(current: list[T.StructField], after: list[T.StructField], layout: Mapping[str, str]) -> SchemaChange:
    """How the table reaches the after-image, or why it cannot safely (`refused`, every reason)."""
    change = SchemaChange()
    now = {f.name.lower(): f for f in current}
    wanted = {f.name.lower() for f in after}
    gone = [f for f in current if f.name.lower() not in wanted]
    new = [f for f in after if f.name.lower() not in now]
    renamed = _renames(current, after, gone, new)
    if renamed is None:
        change.refused.append(
            f"column(s) {[f.name for f in gone]} are not in the after-image and {[f.name for f in new]} are new, "
            "but they do not pair up one-to-one at the same positions with the same type (or a widening): renames "
            "cannot be told from drops and adds (drop and add in separate ALTERs)"
        )
        renamed, gone, new = {}, [], []
    sources = {a.name.lower(): now[o.lower()] for o, a in renamed.items()}
    for f in gone:
        if f.name in renamed:
            change.rename[f.name] = renamed[f.name].name
        elif f.name.lower() in layout:
            change.refused.append(f"dropping column {f.name!r}: it is {layout[f.name.lower()]}")
        else:
            change.drop.append(f.name)
    added = {f.name.lower() for f in new}
    for f in after:
        old = now.get(f.name.lower()) or sources.get(f.name.lower())
        if old is not None:
            _evolve(old, f, change)
        elif f.name.lower() in added:
            _add(f, change)
    return change


def _renames(
    current: list[T.StructField], after: list[T.StructField], gone: list[T.StructField], new: list[T.StructField]
) -> dict[str, T.StructField] | None:
    """Table column → its after-image column, when exactly the missing and the new columns pair up one-to-one at
    the same positions with the same type or a widening; None when both exist but do not (ambiguous)."""
    if not gone or not new:
        return {}
    lost, fresh = {f.name for f in gone}, {f.name for f in new}
    pairs = {}
    if len(current) == len(after):
        pairs = {
            o.name: a
            for o, a in zip(current, after, strict=True)
            if o.name in lost and a.name in fresh and (o.dataType == a.dataType or _widens(o.dataType, a.dataType))
        }
    return pairs if len(pairs) == len(gone) == len(new) else None


def _evolve(old: T.StructField, f: T.StructField, change: SchemaChange) -> None:
    """A column kept (or renamed): its type may widen, a required one may become optional."""
    if old.dataType != f.dataType:
        if _widens(old.dataType, f.dataType):
            change.widen[old.name] = f.dataType
        else:
            change.refused.append(
                f"column {f.name!r}: {old.dataType.simpleString()} → {f.dataType.simpleString()} is not a widening"
            )
    if old.nullable and not f.nullable:
        change.refused.append(f"column {f.name!r}: optional → required would reject existing NULLs")
    elif not old.nullable and f.nullable:
        change.relax.append(old.name)


def _add(f: T.StructField, change: SchemaChange) -> None:
    if f.nullable:
        change.add.append(f)
    else:
        change.refused.append(f"new column {f.name!r} is required: existing rows have no value for it")


def _described(change: SchemaChange) -> dict[str, Any]:
    """What the ALTER did, for the step record."""
    parts = {
        "added": [f.name for f in change.add],
        "dropped": change.drop,
        "renamed": change.rename,
        "widened": {n: t.simpleString() for n, t in change.widen.items()},
        "made_optional": change.relax,
    }
    return {k: v for k, v in parts.items() if v}


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
