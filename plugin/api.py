"""The Python entry point: run a plan and get its RunReport."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession
from substrait_spark.consumer.consumer import SubstraitConsumer
from substrait_spark.consumer.errors import UnsupportedFeatureError
from substrait_spark.consumer.loader import LoadedPlan, load_plan
from substrait_spark.consumer.report import RunReport
from substrait_spark.consumer.resolver import TableResolver
from substrait_spark.consumer.runner import run_loaded


def run_plan(
    plan: str | Path | bytes | LoadedPlan,
    spark: SparkSession | None = None,
    catalogs: TableResolver | None = None,
    params: dict[str, str] | None = None,
    *,
    output: str | Path | None = None,
    output_format: str = "csv",
    preview_rows: int = 0,
    consumer_class: type[SubstraitConsumer] = SubstraitConsumer,
) -> RunReport:
    """Load `plan` (path, URI, bytes or LoadedPlan), run every root on `spark`, return the RunReport."""
    from substrait_spark.hooks.spark import get_session

    if params:
        raise UnsupportedFeatureError("dynamic parameters are not supported yet", "parameter_bindings")
    loaded = plan if isinstance(plan, LoadedPlan) else load_plan(plan)
    if catalogs is None:
        from substrait_spark.consumer.resolver import SessionCatalogResolver

        catalogs = SessionCatalogResolver()
    return run_loaded(
        loaded,
        spark or get_session(),
        catalogs,
        output=Path(output) if output else None,
        output_format=output_format,
        preview_rows=preview_rows,
        consumer_class=consumer_class,
    )
