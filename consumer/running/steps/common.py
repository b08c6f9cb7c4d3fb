"""What the write, DDL and update steps share: the step log of the run, the table's columns as the plan names
them, writers carrying the idempotency key, and row counting on the committing job itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, DataFrameWriterV2
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...errors import ExecutionError, PlanInvalidError, ResolutionError, SchemaMismatchError, TargetRefusedError
from ...translation.conversions import Conversion, conversion, exactly_as
from ...translation.relation import Relation, quote
from ...translation.steps import NO_WRITE_CATALOG, SCHEMA_OPS, as_relation, check_input, empty
from ...types import compatible
from ..report import Step
from .log import StepLog, mark_committed
from .targets import ViewTarget, WriteTarget

if TYPE_CHECKING:
    from ...translation.consumer import SubstraitConsumer
    from ..resolver import ResolvedTable

__all__ = ["SCHEMA_OPS", "as_relation", "check_input", "empty"]  # translation's (`translation/steps.py`), used here

# Iceberg's optimistic concurrency for whole-table rewrites: the commit fails if anyone committed data or
# deletes since the snapshot the rewrite read, so a concurrent writer's rows are never lost.
ISOLATION = {"isolation-level": "serializable"}


def writable(log: StepLog, path: str) -> StepLog:
    """The run's step log, if its catalog can take writes."""
    if log.targets is None:
        raise TargetRefusedError(NO_WRITE_CATALOG, path)
    return log


def locate(cx: SubstraitConsumer, log: StepLog, names: Sequence[str], path: str) -> WriteTarget:
    if not names:
        raise PlanInvalidError("write target with no name", path)
    assert log.targets is not None
    try:
        return log.targets.write_target(cx.spark, list(names))
    except ResolutionError as exc:
        raise exc.at(path) from None


def drop_once(target: WriteTarget | ViewTarget, log: StepLog, step: Step, what: str, path: str) -> None:
    """DROP that a retry recognises: the step's key and the dropped object's UUID are recorded outside it first.
    On a retry the object is gone (dropped by this step), still there with the recorded UUID (the earlier try
    crashed before dropping: drop it now), or there under another UUID (re-created since — by a later step of
    this plan, say — and left alone)."""
    key, dropped_uuid = target.dropped_by() or (None, None)
    mine = key is not None and key == step.idempotency_key
    if key is not None:
        log.refuse_other_plan(step, key, target.identity, "the namespace's drop record")
    if target.exists():
        if mine and dropped_uuid is not None and dropped_uuid != target.uuid():
            mark_committed(step, f"this step dropped an earlier {what}; the one there now was created since")
        else:
            target.drop(step.idempotency_key)
    elif mine:
        mark_committed(step, f"the {what} is gone; the namespace's drop record has this step's key")
    else:
        raise ExecutionError(f"{what} {target.identity} does not exist (DDL_OP_DROP)", f"{path}.op")


def pinned(cx: SubstraitConsumer, target: WriteTarget, names: Sequence[str], path: str) -> ResolvedTable:
    """The target as this run reads it (the snapshot every read of it in the run sees)."""
    resolved = cx.resolve_table(list(names), path)
    if resolved.identity != target.identity:
        raise ResolutionError(
            f"table {'.'.join(names)!r} is read from {resolved.identity} but would be written to {target.identity}",
            path,
        )
    return resolved


def table_columns(
    fields: Sequence[T.StructField], names: Sequence[str], types: Sequence[T.DataType], what: str, path: str
) -> list[str]:
    """The table's own spelling of each plan column, in plan order; every difference listed, exit 4."""
    by_lower = {f.name.lower(): f for f in fields}
    problems, out = [], []
    for name, declared in zip(names, types, strict=True):
        f = by_lower.get(name.lower())
        if f is None:
            problems.append(f"column {name!r} missing")
        elif not compatible(f.dataType, declared):
            problems.append(f"column {name!r} is {f.dataType.simpleString()}, plan says {declared.simpleString()}")
        else:
            out.append(f.name)
    wanted = {n.lower() for n in names}
    problems += [f"column {f.name!r} is not in the plan's table_schema" for f in fields if f.name.lower() not in wanted]
    if problems:
        raise ResolutionError(f"{what} does not match the plan's table_schema: " + "; ".join(problems), path)
    return out


LOSSY = "(a cast would lose information)"


def check_write_input(inp: Relation, names: Sequence[str], types: Sequence[T.DataType], path: str) -> None:
    """A write's input columns must be the table_schema's, position by position, or of a type a cast takes there
    without loss (`conversions.conversion`: WIDENING; `named` casts them). A lossy cast is a schema mismatch
    (exit 4), as for reads; any other difference an invalid plan (exit 2, as `check_input`)."""
    if len(inp.names) != len(names):
        raise PlanInvalidError(f"the input has {len(inp.names)} columns, table_schema {len(names)}", path)
    lossy, bad = [], []
    for n, a, d in zip(names, inp.types, types, strict=True):
        kind = conversion(a, d)
        difference = f"column {n!r}: input is {a.simpleString()}, table_schema says {d.simpleString()}"
        if kind is Conversion.LOSSY:
            lossy.append(f"{difference} {LOSSY}")
        elif kind is Conversion.NONE and not isinstance(a, T.NullType):
            bad.append(difference)
    if lossy:
        raise SchemaMismatchError("input does not fit the table_schema: " + "; ".join(lossy), path)
    if bad:
        raise PlanInvalidError("input does not fit the table_schema: " + "; ".join(bad), path)


def named(inp: Relation, columns: Sequence[str], types: Sequence[T.DataType] | None = None) -> DataFrame:
    """The input with the table's column names (Spark's writer assigns by name, with its store-assignment checks);
    with `types` (the table_schema's), each column of another type cast to it value by value exactly: a table
    created from it has the plan's types (`conversions.exactly_as`)."""
    inp = inp.materialized()
    df = inp.df.select(*[inp.col(i).alias(c) for i, c in enumerate(columns)])
    return exactly_as(df, list(types), "the write's input") if types is not None else df


def writer(df: DataFrame, target: WriteTarget, log: StepLog, step: Step, **options: str) -> DataFrameWriterV2:
    """A DataFrameWriterV2 whose commit carries the step's idempotency key in its snapshot summary."""
    w = df.writeTo(target.spark_name)
    for k, v in log.snapshot_properties(step).items():
        w = w.option(f"snapshot-property.{k}", v)
    for k, v in options.items():
        w = w.option(k, v)
    return w


def validated_from(snapshot_id: int | None) -> dict[str, str]:
    """Options that make a rewrite of snapshot `snapshot_id` fail rather than overwrite later commits."""
    if snapshot_id is None:
        return {}
    return {"validate-from-snapshot-id": str(snapshot_id), **ISOLATION}


def count_rows() -> Column:
    return F.count(F.lit(1))


def count_if(cond: Column) -> Column:
    return F.coalesce(F.sum(F.when(cond, 1).otherwise(0)), F.lit(0))


def column(name: str) -> Column:
    return F.col(quote(name))
