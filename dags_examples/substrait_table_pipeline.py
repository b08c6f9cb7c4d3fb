"""A plan that changes a table: CTAS, INSERT, DELETE on the Iceberg table `demo.big_orders`, as tracked steps.

Each step is one atomic Iceberg commit carrying an idempotency key (dag/run/task/map index, never the try
number), so a retry after a crash skips the steps already committed. The run report (XCom) lists the steps with
their rows and snapshots; every changed table gets an Asset event, through the AssetAlias below, whose extra
holds the rows, the snapshot id and the plan's sha256.

Variables: `substrait_plans` (default `s3://substrait-plans`), `substrait_catalog_config` (the catalog
configuration file the CLI's `--catalog-config` also reads).
"""

from __future__ import annotations

import pendulum
from airflow.sdk import AssetAlias, dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator

PLANS = "{{ var.value.get('substrait_plans', 's3://substrait-plans') }}"


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, tags=["substrait", "example"])
def substrait_table_pipeline():
    SubstraitSparkOperator(
        task_id="big_orders",
        plan_uri=f"{PLANS}/tpch/big_orders_pipeline.json",
        catalog_config="{{ var.value.substrait_catalog_config }}",
        spark_conn_id="substrait_spark_default",
        outlets=[AssetAlias("substrait_tables")],  # the tables are known from the plan, not before
        retries=2,
    )


substrait_table_pipeline()
