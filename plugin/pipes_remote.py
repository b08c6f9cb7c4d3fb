"""The remote side of a Dagster Pipes run: a plan run inside a Spark driver (spark-submit, EMR, Databricks, …).

    spark-submit --master spark://… --conf … substrait_spark/pipes_remote.py     # started by a Pipes client

It needs only the engine and `dagster-pipes` (no Dagster): the orchestration side (`substrait_spark.dagster.pipes`)
passes the plan URI, the run settings, the parameters and the run key as Pipes extras; this driver takes the
session spark-submit configured, runs the plan through the shared run sequence (`hooks/run_sequence.PlanRun`) and
reports one materialization per changed table — the same figures the in-process assets report
(`substrait_spark.materializations`). A plan that fails reports the typed error and exits with its exit code.
"""

from __future__ import annotations

import sys
from typing import Any


def run(pipes: Any) -> int:
    from pyspark.sql import SparkSession
    from substrait_spark.consumer.analysis.lineage import column_lineage
    from substrait_spark.hooks.audit import AuditContext
    from substrait_spark.hooks.plan_run import PlanRunner, RunSettings
    from substrait_spark.hooks.run_sequence import PlanRun
    from substrait_spark.materializations import DAGSTER_BIND_HINT, TableKeys, materializations, table_map

    extras = pipes.extras
    settings = RunSettings(**extras.get("settings") or {})
    spark = SparkSession.builder.getOrCreate()  # what spark-submit set up: master, jars, catalogs
    runner = PlanRunner(settings, session=spark, bind_hint=DAGSTER_BIND_HINT)
    parameters = extras.get("parameters") or {}
    run_key = extras.get("run_key")
    audit = AuditContext(run_key=run_key)
    plan = PlanRun(runner, extras["plan_uri"])  # the run sequence every front end shares (hooks/run_sequence.py)
    sink = extras.get("results")
    report = plan.execute(parameters=parameters, run_key=run_key, sink=sink, audit_context=audit).raise_error()
    pipes.log.info(f"plan {report.plan_uri} ran in {report.duration_s} s (run key {run_key})")
    keys = TableKeys(runner.catalogs, table_map(settings))
    lineage = column_lineage(plan.load().loaded)
    found = materializations(report, lineage, keys, runner.catalogs, run_key, extras.get("root_key"))
    for m in found:
        pipes.report_asset_materialization(metadata=m.metadata, data_version=m.data_version, asset_key="/".join(m.key))
    return 0


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
