"""UpdateRel: `UPDATE t SET col = expr … WHERE condition` in place, as one atomic Iceberg commit.

The table's rows at the snapshot this run pinned are rewritten — each transformed column becomes
`CASE WHEN condition THEN expr ELSE col END` — and committed with `overwrite(true)` validated from that snapshot
at serializable isolation (see `writes`): a concurrent commit fails the step instead of being lost.
A missing condition updates every row; a NULL condition updates none (SQL). UpdateRel has no output mode:
its output is no rows with the table_schema's columns, the rows updated are in the step record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError
from ...translation.relation import Relation
from ...translation.scope import Scope
from ...types import schema_of
from ...walk import update_transformations
from ..observe import observed
from ..report import StepKind
from . import common as c

if TYPE_CHECKING:
    from ...translation.consumer import SubstraitConsumer


def consume_update(cx: SubstraitConsumer, rel: alg.UpdateRel, path: str, outer: Scope | None) -> Relation:
    log = c.step_log(cx, path)
    if rel.WhichOneof("update_type") != "named_table":
        raise PlanInvalidError("update with no target table", path)
    if not rel.table_schema.names:
        raise PlanInvalidError("update with no table_schema", f"{path}.table_schema")
    names, types = schema_of(rel.table_schema, f"{path}.table_schema")
    parts = list(rel.named_table.names)
    target = c.locate(cx, log, parts, f"{path}.named_table")
    with log.step(StepKind.UPDATE, target, path) as step:
        if not log.already_committed(step, target):
            resolved = c.pinned(cx, target, parts, f"{path}.named_table")
            columns = c.table_columns(resolved.fields, names, types, f"table {target.identity}", path)
            fresh = [cx.names.fresh() for _ in columns]
            source = Relation(
                resolved.df.select(*[c.column(t).alias(f) for t, f in zip(columns, fresh, strict=True)]),
                fresh,
                list(types),
            )
            scope = Scope(source, outer)
            hit = F.lit(True)
            if rel.HasField("condition"):
                hit = F.coalesce(cx.expression(rel.condition, scope, f"{path}.condition").col, F.lit(False))
            new = dict(enumerate(source.cols()))
            for target_column, expr, at in update_transformations(rel, len(columns), path):
                value = cx.expression(expr, scope, at).col
                new[target_column] = F.when(hit, value).otherwise(source.col(target_column))
            counted, obs = observed(source.df, updated=c.count_if(hit))
            out = counted.select(*[new[i].alias(n) for i, n in enumerate(columns)])
            c.writer(out, target, log, step, **c.validated_from(resolved.snapshot_id)).overwrite(F.lit(True))
            step.rows = int(obs.get["updated"])
    cx.forget_table(target.identity)
    return c.empty(cx, names, types)
