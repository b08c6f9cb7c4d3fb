"""Test DAG: an UPDATE write whose rows are matched by the key the operator names (`update_keys`, templated)."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_update_key():
    SubstraitSparkOperator(
        task_id="update_by_key",
        plan_uri="{{ var.value.substrait_plans }}/iceberg/update.json",
        catalog_config="{{ var.value.catalog_config }}",
        update_keys={"airflow_e2e.accounts": "{{ var.value.update_key }}"},
        spark_conn_id="substrait_spark_default",
        retries=0,
    )


substrait_test_update_key()
