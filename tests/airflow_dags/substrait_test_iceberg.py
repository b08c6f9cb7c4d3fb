"""Test DAG: a plan reading an Iceberg table through the catalog configuration file the CLI also reads."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_iceberg():
    SubstraitSparkOperator(
        task_id="iceberg_read",
        plan_uri="{{ var.value.substrait_plans }}/iceberg/read.json",
        catalog_config="{{ var.value.catalog_config }}",
        results="preview:100",
        spark_conn_id="substrait_spark_default",
        retries=0,
    )


substrait_test_iceberg()
