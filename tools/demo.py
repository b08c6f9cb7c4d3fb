"""`make demo`: the embedded stack end to end.

Starts a real S3-compatible server (moto) on 127.0.0.1 and puts the example plans in a versioned bucket, then runs
the example DAGs with `airflow dags test` (SQLite metadata, local Spark, connections only as `AIRFLOW_CONN_*`):
the daily pricing summary for one logical date, the multi-producer TPC-H pipeline, and a plan that changes an
Iceberg table in three steps. Prints each run report (the task's XCom value), the published result, the steps,
the Asset events and the audit record, and draws the last plan with its run as SVG. Then the same plans as Dagster
assets (`tools/demo_dagster.py`: `dagster asset materialize` of dags_examples/dagster/definitions.py).

    .venv/bin/python tools/demo.py [--date 1995-06-17] [--tables-dir .data/tpch/sf0.01]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import demo_dagster
from local_stack import ROOT, AirflowStack, DagRun, running_s3_server, seed_plans
from substrait_spark.consumer.running.report import RunReport, plain


def _table(columns: list[str], rows: list[list]) -> str:
    cells = [columns] + [["NULL" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join([lines[0], "-+-".join("-" * w for w in widths), *lines[1:]])


def _published(location: str) -> tuple[list[str], list[list]]:
    import pyarrow.parquet as pq

    table = pq.read_table(location)
    return table.column_names, [list(r.values()) for r in table.to_pylist()]


class DagFailed(Exception):
    """An example DAG run did not succeed (its log went to stderr)."""


def _dags_test(stack: AirflowStack, dag_id: str, logical_date: str, what: str = "") -> DagRun:
    """`airflow dags test`, timed and announced; a run that does not succeed ends the demo."""
    print(f"\n== airflow dags test {dag_id} {logical_date}{what}")
    t0 = time.monotonic()
    run = stack.dags_test(dag_id, logical_date)
    print(f"   run {run.run_id}: {run.state} in {time.monotonic() - t0:.0f} s; tasks {run.task_states}")
    if run.state != "success":
        print(run.log[-6000:], file=sys.stderr)
        raise DagFailed(dag_id)
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--date", default="1995-06-17", help="logical date of the daily run")
    ap.add_argument("--tables-dir", default=str(ROOT / ".data" / "tpch" / "sf0.01"))
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--home", default=str(ROOT / ".data" / "airflow"), help="AIRFLOW_HOME (SQLite metadata)")
    args = ap.parse_args()

    home = Path(args.home)
    with running_s3_server() as endpoint:
        print(f"== S3-compatible server (moto) at {endpoint}")
        for key, version in seed_plans(endpoint, Path(args.corpus)).items():
            print(f"   s3://substrait-plans/{key}  version {version}")
        stack = AirflowStack(home, endpoint, Path(args.tables_dir), ROOT / ".data" / "demo" / "reports")
        stack.migrate()
        stack.ensure_lake()

        try:
            _examples(stack, args.date)
        except DagFailed:
            return 1
    return demo_dagster.main(["--date", args.date, "--tables-dir", args.tables_dir])


def _examples(stack: AirflowStack, date: str) -> None:
    """Run the three example DAGs and show what each produced."""
    run = _dags_test(stack, "substrait_daily_report", date)
    report = RunReport.from_dict(run.value("pricing_summary"))
    print("\n-- run report (XCom of pricing_summary) --")
    print(json.dumps(report.to_dict(), indent=2))
    out = report.outputs[0]
    print(f"\n-- published: {out.location} ({out.rows} rows) --")
    print(_table(*_published(str(out.location))))

    run = _dags_test(stack, "substrait_tpch_pipeline", "2024-06-01")
    for i in range(3):
        r = RunReport.from_dict(run.value("run_plan", map_index=i))
        o = r.outputs[0]
        print(f"\n-- {r.plan_uri} (producer {r.producer}, version {r.plan_version_id})")
        print(f"   {o.rows} rows, {r.duration_s} s, Spark application {r.spark_application_id}")
        print(_table(o.columns, o.preview or []))

    run = _dags_test(stack, "substrait_table_pipeline", "2024-06-01", " (CTAS, INSERT, DELETE on lake.demo.big_orders)")
    report = RunReport.from_dict(run.value("big_orders"))
    columns = ["index", "kind", "target", "status", "rows", "snapshot_before", "snapshot_after", "idempotency_key"]
    print(_table(columns, [[plain(getattr(s, c)) for c in columns] for s in report.steps]))
    for name, uri, extra in run.asset_events:
        print(f"\n-- Asset event {name} ({uri}): {json.dumps(extra)}")
    _audit_records(stack, run.run_id)
    _picture(report)


def _audit_records(stack: AirflowStack, run_id: str) -> None:
    """The task try's audit record, as pyiceberg reads the default audit table."""
    from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog

    lake = stack.home / "lake"
    catalog = pyiceberg_catalog("lake", uri=lake / "catalog.db", warehouse=lake / "warehouse")
    records = catalog.load_table("substrait_spark.audit_log").scan().to_arrow().to_pylist()
    rows = [
        [r["record_id"], run.status.value, len(run.steps), len(run.tables_read), run.duration_s]
        for r in records
        if r["run_id"] == run_id
        for run in [RunReport.from_dict(r)]  # the audit row, typed
    ]
    print("\n-- audit record (lake.substrait_spark.audit_log) --")
    print(_table(["record_id", "status", "steps", "tables_read", "duration_s"], rows))


def _picture(report: RunReport) -> None:
    """The plan with its run: relations, tables, steps and column lineage (what the Airflow page shows)."""
    from substrait_spark.consumer.loading.loader import load_plan
    from substrait_spark.graph import plan_svg

    out = ROOT / ".data" / "demo" / "substrait_table_pipeline.svg"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(plan_svg(load_plan(ROOT / "dags_examples" / "plans" / "big_orders_pipeline.json"), report))
    print(f"\n-- the plan as a picture (relations, tables, steps, column lineage): {out}")


if __name__ == "__main__":
    sys.exit(main())
