"""Test DAG: a plan reading two Iceberg tables and writing one (CTAS), and a plan naming a missing table; run
with the OpenLineage provider writing its events to a file (tests/test_openlineage.py)."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator

PLANS = "{{ var.value.substrait_plans }}/openlineage"


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_openlineage():
    SubstraitSparkOperator(
        task_id="spend_by_customer",
        plan_uri=f"{PLANS}/{{{{ var.value.ol_plan }}}}",
        catalog_config="{{ var.value.catalog_config }}",
        spark_conn_id="substrait_spark_default",
        retries=0,
    )


substrait_test_openlineage()
