"""Test DAG: two tasks on one Spark connection in one worker process, only the second with a catalog configuration
(issue 28 item 5): the session the first task starts is the one the second finds."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_session_order():
    plain = SubstraitSparkOperator(
        task_id="plain",
        plan_uri="{{ var.value.substrait_plans }}/session_order/plain.json",
        results="preview:10",
        spark_conn_id="substrait_spark_default",
        retries=0,
    )
    lake_read = SubstraitSparkOperator(
        task_id="lake_read",
        plan_uri="{{ var.value.substrait_plans }}/session_order/lake.json",
        catalog_config="{{ var.value.catalog_config }}",
        results="preview:100",
        spark_conn_id="substrait_spark_default",
        retries=0,
    )
    plain >> lake_read


substrait_test_session_order()
