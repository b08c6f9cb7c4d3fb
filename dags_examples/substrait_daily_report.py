"""Daily pricing summary: TPC-H q1 up to each run's logical date, from a Substrait plan kept in S3.

The plan (`daily_pricing_summary.json`) takes its shipping-date cut-off as dynamic parameter $0; the task binds
it to the logical date, runs the plan on Spark and writes the report as parquet, one folder per day. The run
report (plan version, tables read, rows, Spark application id) is the task's XCom value.

Connections (env vars `AIRFLOW_CONN_*` or the UI):
- `aws_default`: where the plans live (for an S3-compatible store, set `endpoint_url` in its extras);
- `substrait_spark_default` (type `substrait_spark`): the Spark master and a `tables` extra mapping table names
  to their locations, e.g. `{"tables": {"lineitem": "/data/tpch/lineitem.parquet"}}`.
Variables: `substrait_plans` (default `s3://substrait-plans`; `az://container` or `gs://bucket` too),
`substrait_plans_conn_id` (the Azure or Google Cloud connection `az://`/`gs://` plans are read with; unset: the
store client's environment), `substrait_reports_dir`, `substrait_audit_log`
(where each try's audit record goes, e.g. `jsonl:/var/log/substrait/audit.jsonl`; unset: none without catalogs).
The run report and the audit record hold the value bound to $0 (the logical date), typed as the plan declares it.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, task
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator

PLANS = "{{ var.value.get('substrait_plans', 's3://substrait-plans') }}"
REPORTS = "{{ var.value.get('substrait_reports_dir', '/tmp/substrait-reports') }}"
AUDIT_LOG = "{{ var.value.get('substrait_audit_log', '') }}"
PLANS_CONN_ID = "{{ var.value.get('substrait_plans_conn_id', '') }}"


@dag(
    schedule="@daily",
    start_date=pendulum.datetime(1992, 1, 1, tz="UTC"),  # TPC-H orders start in 1992
    catchup=False,
    tags=["substrait", "example"],
    doc_md=__doc__,
)
def substrait_daily_report():
    pricing_summary = SubstraitSparkOperator(
        task_id="pricing_summary",
        plan_uri=f"{PLANS}/tpch/daily_pricing_summary.json",
        parameters={"0": "{{ ds }}"},  # $0: the cut-off date, typed as the plan declares it (a date)
        results={"path": f"{REPORTS}/pricing_summary/ds={{{{ ds }}}}", "format": "parquet"},
        spark_conn_id="substrait_spark_default",
        plan_conn_id=PLANS_CONN_ID,
        audit_log=AUDIT_LOG,
        retries=2,
    )

    @task
    def publish(report: dict) -> str:
        """Announce where today's report is; downstream consumers read the parquet folder."""
        from substrait_spark.consumer.running.report import RunReport

        run = RunReport.from_dict(report)  # the XCom value, typed
        out = run.outputs[0]
        print(f"pricing summary for {run.plan_uri}: {out.rows} rows at {out.location}")
        return str(out.location)

    publish(pricing_summary.output)


substrait_daily_report()
