"""Test DAG: a 10,000-deep plan and a 100 MB plan (paths from Variables) must fail their tasks at once with the
loader's typed error, before any Spark session (tests/test_deep_plans.py)."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_deep_plans():
    for task_id in ("deep_plan", "huge_plan"):
        SubstraitSparkOperator(
            task_id=task_id,
            plan_uri=f"{{{{ var.value.{task_id} }}}}",
            spark_conn_id="substrait_spark_default",
            retries=0,
        )


substrait_test_deep_plans()
