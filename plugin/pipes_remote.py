"""The remote side of a Dagster Pipes run: a plan run inside a Spark driver (spark-submit, EMR, Databricks, …).

    spark-submit --master spark://… --conf … substrait_spark/pipes_remote.py     # started by a Pipes client

It needs only the engine and `dagster-pipes` (no Dagster): the orchestration side (`substrait_spark.dagster.pipes`)
passes the plan URI, the run settings, the parameters and the run key as Pipes extras; this driver takes the
session spark-submit configured, runs the plan through the shared run path (`hooks/plan_run.PlanRunner`) and
reports one materialization per changed table — the same figures the in-process assets report
(`substrait_spark.materializations`). A plan that fails reports the typed error and exits with its exit code.
"""

from __future__ import annotations

import sys
from typing import Any


def run(pipes: Any) -> int:
    from pyspark.sql import SparkSession
    from substrait_spark.consumer.analysis.lineage import column_lineage
    from substrait_spark.consumer.errors import SubstraitSparkError
    from substrait_spark.consumer.running.sinks import Sink
    from substrait_spark.hooks.plan_run import PlanRunner, RunSettings
    from substrait_spark.materializations import DAGSTER_BIND_HINT, TableKeys, materializations, table_map

    extras = pipes.extras
    settings = RunSettings(**extras.get("settings") or {})
    spark = SparkSession.builder.getOrCreate()  # what spark-submit set up: master, jars, catalogs
    runner = PlanRunner(settings, session=spark, bind_hint=DAGSTER_BIND_HINT)
    parameters = extras.get("parameters") or {}
    checked = runner.check(runner.load(extras["plan_uri"]), parameters)
    run_key = extras.get("run_key")
    try:
        report = runner.run(checked, parameters=parameters, run_key=run_key, sink=Sink.parse(extras.get("results")))
    except SubstraitSparkError as exc:
        _audit(runner, getattr(exc, "report", None), run_key)
        raise
    _audit(runner, report, run_key)
    pipes.log.info(f"plan {report.plan_uri} ran in {report.duration_s} s (run key {run_key})")
    keys = TableKeys(runner.catalogs, table_map(settings))
    lineage = column_lineage(checked.loaded)
    found = materializations(report, lineage, keys, runner.catalogs, run_key, extras.get("root_key"))
    for m in found:
        pipes.report_asset_materialization(metadata=m.metadata, data_version=m.data_version, asset_key="/".join(m.key))
    return 0


def _audit(runner: Any, report: Any, run_key: str | None) -> None:
    """The run's audit record, as the in-process assets write it (none unless configured)."""
    if report is not None:
        from substrait_spark.hooks.audit import AuditContext

        runner.record(report, AuditContext(run_key=run_key))


def main() -> int:
    from dagster_pipes import open_dagster_pipes
    from substrait_spark.consumer.errors import SubstraitSparkError

    with open_dagster_pipes() as pipes:
        try:
            return run(pipes)
        except SubstraitSparkError as exc:
            pipes.log.error(exc.describe())
            return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
