"""Test DAG: a plan reading an Iceberg table of a REST catalog named by an Airflow connection of the Iceberg
provider's `iceberg` type (host = the catalog's URI, login/password = OAuth2 client id/secret)."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_iceberg_rest():
    SubstraitSparkOperator(
        task_id="rest_read",
        plan_uri="{{ var.value.substrait_plans }}/iceberg/rest_read.json",
        catalog_conn_ids=["lake_rest"],
        results="preview:100",
        spark_conn_id="substrait_spark_default",
        retries=0,
    )


substrait_test_iceberg_rest()
