"""The Airflow examples as Dagster assets, on the embedded stack (local Spark, the SQLite Iceberg catalog `lake`).

- `reports/pricing_summary`: TPC-H q1 up to each day (`daily_pricing_summary.json`, its cut-off date is dynamic
  parameter $0), daily-partitioned: each partition's key is bound to $0 and the rows go to a parquet folder per
  day — the Airflow `substrait_daily_report` DAG binding `{{ ds }}`.
- `lake/demo/big_orders`: CTAS + INSERT + DELETE on the Iceberg table `demo.big_orders`
  (`big_orders_pipeline.json`), each step one atomic, retry-safe commit — the `substrait_table_pipeline` DAG.
- `orders`, `lineitem`: the TPC-H parquet tables they read, as source assets (the plans' column lineage points
  at them).

    dagster asset materialize -f dags_examples/dagster/definitions.py --select '*' --partition 1995-06-17

Environment (defaults in brackets): `SUBSTRAIT_DAGSTER_LAKE` — the catalog's folder [.data/dagster/lake];
`SUBSTRAIT_TABLES_DIR` — the TPC-H parquet tables [.data/tpch/sf0.01]; `SUBSTRAIT_PLANS` — where the plans are,
a folder or `s3://bucket/prefix` [dags_examples/plans]; `SUBSTRAIT_REPORTS_DIR` [.data/dagster/reports];
`SUBSTRAIT_SPARK_MASTER` [local[2]].
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from dagster import (
    AssetSpec,
    DailyPartitionsDefinition,
    Definitions,
    build_schedule_from_partitioned_job,
    define_asset_job,
    in_process_executor,
)
from substrait_spark.dagster import (
    IcebergCatalogsResource,
    PlanAssets,
    SparkResource,
    SubstraitSparkResource,
    substrait_asset_checks,
    substrait_assets,
)
from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog, pyiceberg_catalog_properties

ROOT = Path(__file__).resolve().parent.parent.parent
LAKE = Path(os.environ.get("SUBSTRAIT_DAGSTER_LAKE", ROOT / ".data" / "dagster" / "lake"))
TABLES_DIR = os.environ.get("SUBSTRAIT_TABLES_DIR", str(ROOT / ".data" / "tpch" / "sf0.01"))
PLANS = os.environ.get("SUBSTRAIT_PLANS", str(ROOT / "dags_examples" / "plans"))
REPORTS = os.environ.get("SUBSTRAIT_REPORTS_DIR", str(ROOT / ".data" / "dagster" / "reports"))


def lake_config(folder: Path) -> str:
    """The catalog `lake` (SQLite, shared by pyiceberg and Spark's JDBC catalog) with namespace `demo`, and its
    configuration file — the one the CLI's `--catalog-config` reads."""
    settings = {"uri": folder / "catalog.db", "warehouse": folder / "warehouse"}
    folder.mkdir(parents=True, exist_ok=True)
    catalog = pyiceberg_catalog("lake", **settings)
    catalog.create_namespace_if_not_exists("demo")
    catalog.engine.dispose()
    path = folder / "catalogs.yaml"
    path.write_text(
        yaml.safe_dump({"default": "lake", "catalogs": {"lake": pyiceberg_catalog_properties("lake", **settings)}})
    )
    return str(path)


substrait = SubstraitSparkResource(
    spark=SparkResource(
        master=os.environ.get("SUBSTRAIT_SPARK_MASTER", "local[2]"),
        conf={"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"},
    ),
    catalogs=IcebergCatalogsResource(config_path=lake_config(LAKE)),
    tables_dir=TABLES_DIR,
)

tpch_tables = [
    AssetSpec(
        name,
        description=f"TPC-H {name} (parquet)",
        kinds={"parquet"},
        metadata={"dagster/uri": f"{TABLES_DIR}/{name}.parquet"},
        group_name="substrait_examples",
    )
    for name in ("orders", "lineitem")
]

# Each plan read and parsed once, for its assets and its schema checks alike.
pricing_plan = PlanAssets.load(f"{PLANS}/daily_pricing_summary.json", substrait)
big_orders_plan = PlanAssets.load(f"{PLANS}/big_orders_pipeline.json", substrait)

pricing_summary = substrait_assets(
    pricing_plan,
    resource=substrait,
    name="pricing_summary",
    partitions_def=DailyPartitionsDefinition(start_date="1992-01-01", end_date="1999-01-01"),
    partition_parameter=0,  # $0: the cut-off date, typed as the plan declares it (a date)
    results={"path": f"{REPORTS}/pricing_summary/ds={{partition_key}}", "format": "parquet"},
    root_asset=["reports", "pricing_summary"],
    group_name="substrait_examples",
)

big_orders = substrait_assets(big_orders_plan, resource=substrait, name="big_orders", group_name="substrait_examples")

# The two Airflow DAGs as jobs: the daily report on a daily schedule (one partition per day), the table pipeline.
daily_report = define_asset_job("daily_report", selection=[pricing_summary])
table_pipeline = define_asset_job("table_pipeline", selection=[big_orders])

defs = Definitions(
    executor=in_process_executor,  # one process, one Spark JVM for every step
    assets=[*tpch_tables, pricing_summary, big_orders],
    asset_checks=[  # the plans' base schemas against the tables they read (no Spark)
        *substrait_asset_checks(pricing_plan, resource=substrait, name="pricing_summary"),
        *substrait_asset_checks(big_orders_plan, resource=substrait, name="big_orders"),
    ],
    jobs=[daily_report, table_pipeline],
    schedules=[build_schedule_from_partitioned_job(daily_report)],
    resources={"substrait": substrait},
)
