"""Several Substrait plans, from several producers, run side by side on one Spark, then summarised.

One mapped task per plan (Airflow's dynamic task mapping over `plan_uri`): TPC-H plans written by Isthmus
(IBM's compliance suite), DuckDB and ibis. Each returns its run report; the last task tabulates them. Uses the
same connections and variables as `substrait_daily_report`.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, task
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator

PLANS = "{{ var.value.get('substrait_plans', 's3://substrait-plans') }}"

PLAN_KEYS = [
    "tpch/isthmus_q03_shipping_priority.json",
    "tpch/duckdb_q06_forecast_revenue.json",
    "tpch/ibis_q10_returned_items.json",
]


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["substrait", "example"])
def substrait_tpch_pipeline():
    runs = SubstraitSparkOperator.partial(
        task_id="run_plan",
        spark_conn_id="substrait_spark_default",
        results="preview:3",  # the first rows of each result travel in the run report
    ).expand(plan_uri=[f"{PLANS}/{key}" for key in PLAN_KEYS])

    @task
    def summarise(reports: list[dict]) -> list[dict]:
        """One line per plan: which plan (and version), how many rows, how long, on which Spark application."""
        from substrait_spark.consumer.running.report import RunReport

        lines = []
        for r in map(RunReport.from_dict, reports):  # the XCom values, typed
            rows = sum(o.rows or 0 for o in r.outputs)
            lines.append({"plan": r.plan_uri, "producer": r.producer, "rows": rows, "seconds": r.duration_s})
            print(f"{r.plan_uri}: {rows} rows in {r.duration_s} s ({r.producer}, {r.spark_application_id})")
        return lines

    summarise(runs.output)


substrait_tpch_pipeline()
