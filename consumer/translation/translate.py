"""Entry points for callers who want DataFrames rather than a run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from substrait.plan_pb2 import Plan

from ..clients import engine_settings
from ..loading.loader import LoadedPlan
from ..tables import TableResolver
from .consumer import SubstraitConsumer
from .steps import OUTSIDE_A_RUN


def to_dataframe(
    plan: LoadedPlan | Plan,
    spark: SparkSession,
    resolver: TableResolver,
    root: int = 0,
    consumer_class: type[SubstraitConsumer] = SubstraitConsumer,
    parameters: Mapping[str | int, Any] | None = None,
    *,
    cast_to_plan_types: bool = False,
) -> DataFrame:
    """The DataFrame of one root of `plan`, analyzed (on Spark Connect: one AnalyzePlan call, so that a plan Spark
    rejects fails here, naming the relation, on every kind of session).

    ANSI mode: on classic Spark the DataFrame keeps the spec's semantics whatever the session's
    `spark.sql.ansi.enabled` when it runs; on Spark Connect the server fixes them when it executes, so run it
    inside `engine_settings(spark)` where the session may have ANSI on (Spark 4's default).

    `cast_to_plan_types` reads columns whose type a cast to the plan's declared type would lose information
    from (`decimal(10,2)` declared `decimal(5,2)`) by casting them anyway; without it they are a schema
    mismatch (`SchemaMismatchError`).

    Uncorrelated scalar subqueries read per-run temp views that stay registered in `spark` (their names
    start with `__substrait_`); use `SubstraitConsumer` directly and call `close()` to drop them.
    """
    proto = plan.plan if isinstance(plan, LoadedPlan) else plan
    consumer = consumer_class(spark, proto, resolver, parameters, cast_to_plan_types=cast_to_plan_types)
    consumer.steps_refused = OUTSIDE_A_RUN  # write/DDL/update steps run only in a run (`run_plan`)
    with engine_settings(spark):  # Spark Connect analyzes here (classic Spark while translating, `root`)
        return consumer.analyzed(consumer.root(root), "relations")
