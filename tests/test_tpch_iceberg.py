"""TPC-H loaded into Iceberg tables (catalog `tpchlake`, namespace `tpch`, written by Spark from the sf 0.01 parquet)
gives the same results as the parquet files, for every plan of IBM's compliance suite, resolved by name through
the catalog (IBM's plans write `LINEITEM`: found case-insensitively in the default catalog's namespaces).
"""

from __future__ import annotations

import pytest
from iceberg_stack import Lake
from oracles import assert_same_result
from plan_builder import tuples
from substrait_spark.consumer import TableMapResolver, load_plan
from substrait_spark.consumer.records import plain
from substrait_spark.consumer.translation.consumer import SubstraitConsumer
from substrait_spark.hooks.iceberg import IcebergCatalogResolver
from substrait_spark.hooks.iceberg_spark import register_catalog

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.corpus]

TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")


@pytest.fixture(scope="module")
def lake(iceberg_spark, tmp_path_factory) -> Lake:
    """A catalog of its own (bare TPC-H names must not meet other tests' `orders` tables)."""
    root = tmp_path_factory.mktemp("tpch-lake")
    settings = {"uri": root / "catalog.db", "warehouse": root / "warehouse"}
    register_catalog(iceberg_spark, "tpchlake", **settings)
    return Lake("tpchlake", settings["uri"], settings["warehouse"], iceberg_spark, None)


@pytest.fixture(scope="module")
def iceberg_tpch(lake, tpch_dir):
    """The eight TPC-H tables as Iceberg tables `tpchlake.tpch.<table>`."""
    lake.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lake.name}.tpch")
    for t in TABLES:
        lake.spark.read.parquet(str(tpch_dir / f"{t}.parquet")).writeTo(f"{lake.name}.tpch.{t}").createOrReplace()
    return IcebergCatalogResolver(lake.catalogs())


def _run(spark, plan, resolver):
    consumer = SubstraitConsumer(spark, plan, resolver)
    try:
        df = consumer.root(0)
        return df.columns, tuples(df.collect()), plain(consumer.tables_read)
    finally:
        consumer.close()


@pytest.mark.parametrize("q", range(1, 23), ids=lambda q: f"q{q:02d}")
def test_iceberg_tpch_equals_parquet(q, lake, iceberg_tpch, tpch_dir, corpus):
    plan = load_plan(corpus / "ibm-substrait-compliance-tpch" / f"q{q:02d}.json").plan
    columns, on_iceberg, read = _run(lake.spark, plan, iceberg_tpch)
    _, on_parquet, _ = _run(lake.spark, plan, TableMapResolver.from_tables_dir(tpch_dir))
    assert_same_result(on_iceberg, on_parquet, actual_columns=columns, context=f"q{q:02d} iceberg vs parquet")
    assert read and all(t["format"] == "iceberg" and t["snapshot_id"] for t in read)
    assert {t["identity"].split(".")[1] for t in read} == {"tpch"}
