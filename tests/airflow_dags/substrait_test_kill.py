"""Test DAG: one task running a plan that takes minutes, for `on_kill` (the test sends SIGTERM)."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_kill():
    SubstraitSparkOperator(
        task_id="slow_plan",
        plan_uri="{{ var.value.substrait_plans }}/failures/slow.json",
        spark_conn_id="substrait_spark_default",
        retries=0,
    )


substrait_test_kill()
