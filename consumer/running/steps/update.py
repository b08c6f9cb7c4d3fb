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

from ...translation.relation import Relation
from ...translation.scope import Scope
from ...translation.steps import PendingStep
from ...walk import update_transformations
from ..observe import observed
from ..report import StepKind
from . import common as c
from .log import StepLog

if TYPE_CHECKING:
    from ...translation.consumer import SubstraitConsumer


def execute_update(cx: SubstraitConsumer, log: StepLog, pending: PendingStep) -> None:
    """Run an UpdateRel's step. Its condition and values are translated here, over the table as the run pins it
    (the pin is taken inside the step: a retry that finds the step committed reads nothing)."""
    rel, path, outer = pending.rel, pending.path, pending.outer
    names, types = list(pending.names), list(pending.types)
    c.writable(log, path)
    parts = list(pending.target)
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
