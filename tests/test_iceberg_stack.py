"""The embedded Iceberg stack: Spark's JDBC catalog and pyiceberg's SqlCatalog share one catalog, offline.

Runs in the suite's JVM when it started with the Iceberg jars (see tests/iceberg_stack.py), else in a fresh one.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pytest
from iceberg_stack import (
    FRESH_JVM_ENV,
    Lake,
    has_iceberg_jars,
    run_in_fresh_jvm,
    running_session,
)
from substrait_spark.hooks import iceberg_spark as ib

# Each test carries its tier: `unit` (pure Python) or `spark`, `iceberg`.

ARROW_SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64())])


def _rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def _arrow_rows(table: pa.Table) -> list[tuple]:
    return sorted(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))


def _latest_snapshot(spark, table: str) -> int:
    return spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1").first()[0]


def _spark_table(lake: Lake, namespace: str, table: str, batches: list[range]) -> str:
    """`lake.<namespace>.<table>` written by Spark: created from the first range, appended from the others."""
    lake.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lake.name}.{namespace}")
    full = f"{lake.name}.{namespace}.{table}"
    for i, ids in enumerate(batches):
        df = lake.spark.range(ids.start, ids.stop).selectExpr("id", "concat('n', id) AS name", "id * 1.5 AS amount")
        writer = df.writeTo(full)
        writer.create() if i == 0 else writer.append()
    return full


# ---- no Spark ------------------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.iceberg
def test_fresh_jvm_when_suite_session_lacks_jars():
    """The suite's JVM started without the Iceberg jars: run this file in a new interpreter instead."""
    session = running_session()
    if os.environ.get(FRESH_JVM_ENV) or session is None or has_iceberg_jars(session):
        pytest.skip("the Iceberg tests run in this JVM")
    proc = run_in_fresh_jvm(Path(__file__))
    assert proc.returncode == 0, (
        f"fresh-JVM run failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
    )
    assert re.search(r"\d+ passed", proc.stdout), proc.stdout[-2000:]


@pytest.mark.unit
def test_provisioned_jars_are_listed_in_classpath_order():
    jars = ib.iceberg_jars()
    names = [Path(j).name for j in jars]
    assert re.fullmatch(r"iceberg-spark-runtime-3\.5_2\.12-1\.\d+\.\d+\.jar", names[0])
    assert names[1] == "iceberg-shaded-jackson.jar"
    assert any("sqlite" in n for n in names) and any("postgresql" in n for n in names)
    assert all(Path(j).is_absolute() and Path(j).is_file() for j in jars)
    stamp = json.loads((Path(jars[0]).parent / ib.JARS_STAMP).read_text())
    assert stamp["iceberg_version"].startswith("1.") and stamp["jackson_version"] == "2.15.2"


@pytest.mark.unit
def test_missing_jars_dir_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(ib.JARS_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ib.IcebergSetupError, match="provision_jars"):
        ib.iceberg_jars()


@pytest.mark.unit
def test_spark_and_pyiceberg_settings_name_the_same_database(tmp_path):
    conf = ib.spark_catalog_conf("lake", uri=tmp_path / "c.db", warehouse=tmp_path / "wh")
    assert conf["spark.sql.catalog.lake"] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf["spark.sql.catalog.lake.type"] == "jdbc"
    assert conf["spark.sql.catalog.lake.uri"] == f"jdbc:sqlite:{tmp_path}/c.db"
    assert conf["spark.sql.catalog.lake.warehouse"] == f"file://{tmp_path}/wh"
    assert conf["spark.sql.catalog.lake.jdbc.schema-version"] == "V1"
    assert conf["spark.sql.extensions"] == ib.ICEBERG_EXTENSIONS
    props = ib.pyiceberg_catalog_properties(
        "lake", uri=f"jdbc:sqlite:{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh"
    )
    assert props == {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/c.db",
        "warehouse": f"file://{tmp_path}/wh",
        "schema_version": "v1",
    }


@pytest.mark.unit
def test_postgres_settings_keep_credentials_out_of_the_url():
    uri = "postgresql://ice:s%40cret@127.0.0.1:5433/lakedb"
    conf = ib.spark_catalog_conf("pg", uri=uri, warehouse="s3://bucket/wh", extra={"io-impl": "x.IO"})
    assert conf["spark.sql.catalog.pg.uri"] == "jdbc:postgresql://127.0.0.1:5433/lakedb"
    assert conf["spark.sql.catalog.pg.jdbc.user"] == "ice"
    assert conf["spark.sql.catalog.pg.jdbc.password"] == "s@cret"
    assert conf["spark.sql.catalog.pg.io-impl"] == "x.IO"
    assert "spark.sql.catalog.pg.jdbc.init-catalog-tables" not in conf
    props = ib.pyiceberg_catalog_properties(
        "pg",
        uri="jdbc:postgresql://127.0.0.1:5433/lakedb",
        warehouse="s3://bucket/wh",
        jdbc_user="ice",
        jdbc_password="s@cret",
    )
    assert props["uri"] == "postgresql+psycopg2://ice:s%40cret@127.0.0.1:5433/lakedb"
    with pytest.raises(ib.IcebergSetupError):
        ib.spark_catalog_conf("bad-name", uri="x.db", warehouse="wh")


@pytest.mark.spark
@pytest.mark.iceberg
def test_catalog_name_scopes_tables(lake: Lake):
    """Another name on the same database sees none of `lake`'s tables: both sides must use one name."""
    lake.catalog.create_namespace_if_not_exists("scoped")
    lake.catalog.create_table("scoped.t", schema=ARROW_SCHEMA)
    other = ib.pyiceberg_catalog("other", **lake.settings)
    assert ("scoped", "t") in lake.catalog.list_tables("scoped")
    assert not other.table_exists("scoped.t")


# ---- Spark and pyiceberg -------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.iceberg
def test_pyiceberg_table_is_read_by_spark(lake: Lake):
    lake.catalog.create_namespace_if_not_exists("from_py")
    table = lake.catalog.create_table("from_py.orders", schema=ARROW_SCHEMA)
    first = pa.table({"id": [1, 2, 3], "name": ["a", "b", None], "amount": [1.5, None, 3.0]}, schema=ARROW_SCHEMA)
    table.append(first)

    spark_df = lake.spark.table("lake.from_py.orders")
    assert _rows(spark_df) == _arrow_rows(first)
    assert _latest_snapshot(lake.spark, "lake.from_py.orders") == table.current_snapshot().snapshot_id
    assert table.metadata_location.startswith("file:///")  # pyiceberg's spelling; Spark writes file:/...
    assert lake.spark.read.format("iceberg").load(table.metadata_location).count() == 3

    # A later pyiceberg commit is visible at once: no cached table, no SQLite lock held by Spark's catalog.
    table.append(pa.table({"id": [4], "name": ["d"], "amount": [4.0]}, schema=ARROW_SCHEMA))
    assert lake.spark.table("lake.from_py.orders").count() == 4
    assert _latest_snapshot(lake.spark, "lake.from_py.orders") == table.current_snapshot().snapshot_id


@pytest.mark.spark
@pytest.mark.iceberg
def test_spark_table_is_read_by_pyiceberg_with_the_same_snapshots(lake: Lake):
    full = _spark_table(lake, "from_spark", "events", [range(0, 5), range(5, 8)])
    table = lake.catalog.load_table("from_spark.events")
    spark_snapshots = [
        r[0] for r in lake.spark.sql(f"SELECT snapshot_id FROM {full}.snapshots ORDER BY committed_at").collect()
    ]
    assert table.current_snapshot().snapshot_id == spark_snapshots[-1] == _latest_snapshot(lake.spark, full)
    assert [s.snapshot_id for s in table.snapshots()] == spark_snapshots
    assert _arrow_rows(table.scan().to_arrow()) == _rows(lake.spark.table(full))
    assert ("from_spark", "events") in lake.catalog.list_tables("from_spark")


@pytest.mark.spark
@pytest.mark.iceberg
def test_time_travel_by_snapshot_id_and_timestamp(lake: Lake):
    full = _spark_table(lake, "travel", "t", [range(0, 3), range(3, 5)])
    history = lake.spark.sql(
        f"SELECT snapshot_id, unix_millis(committed_at) AS ms FROM {full}.snapshots ORDER BY committed_at"
    ).collect()
    (first_id, first_ms), (last_id, last_ms) = history[0], history[-1]

    def read(option: str, value: int):  # a fresh reader each time: options accumulate on one
        return lake.spark.read.option(option, value).table(full)

    assert read("snapshot-id", first_id).count() == 3
    assert read("snapshot-id", last_id).count() == 5
    assert read("as-of-timestamp", first_ms).count() == 3
    assert read("as-of-timestamp", last_ms).count() == 5
    assert lake.spark.sql(f"SELECT count(*) FROM {full} VERSION AS OF {first_id}").first()[0] == 3
    # pyiceberg agrees on what the first snapshot holds.
    assert lake.catalog.load_table("travel.t").scan(snapshot_id=first_id).to_arrow().num_rows == 3


@pytest.mark.spark
@pytest.mark.iceberg
def test_read_by_metadata_file_location(lake: Lake):
    """Iceberg 1.x's Spark source loads a table from a `*.metadata.json` path (no catalog); older files, older state."""
    _spark_table(lake, "by_file", "t", [range(0, 3), range(3, 5)])
    table = lake.catalog.load_table("by_file.t")
    current = table.metadata_location
    assert re.search(r"/metadata/\d{5}-[0-9a-f-]+\.metadata\.json$", current)
    assert lake.spark.read.format("iceberg").load(current).count() == 5
    assert lake.spark.read.format("iceberg").load(current.removeprefix("file:")).count() == 5
    previous = table.metadata.metadata_log[-1].metadata_file
    assert lake.spark.read.format("iceberg").load(previous).count() == 3


@pytest.mark.spark
@pytest.mark.iceberg
def test_filters_and_projection_are_pushed_into_the_iceberg_scan(lake: Lake):
    full = _spark_table(lake, "pushdown", "t", [range(0, 10)])
    df = lake.spark.table(full).filter("id > 6").select("name")
    plan = df._jdf.queryExecution().executedPlan().toString()
    scan = re.search(r"BatchScan lake\.pushdown\.t\[([^\]]*)\].*", plan)
    assert scan, plan
    assert "amount" not in scan.group(1) and "name" in scan.group(1), plan  # projection: only the columns needed
    assert re.search(r"filters=[^\]]*id > 6", scan.group(0)), plan  # the predicate reached Iceberg
    assert sorted(r[0] for r in df.collect()) == ["n7", "n8", "n9"]


@pytest.mark.spark
@pytest.mark.iceberg
def test_catalogs_can_be_added_to_a_running_session(lake: Lake, tmp_path):
    """Catalog plugins load lazily by name: a second catalog on another database joins the running session."""
    settings = {"uri": tmp_path / "second.db", "warehouse": tmp_path / "wh2"}
    ib.register_catalog(lake.spark, "lake_two", **settings)
    lake.spark.sql("CREATE NAMESPACE lake_two.ns")
    lake.spark.range(3).writeTo("lake_two.ns.t").create()
    assert lake.spark.table("lake_two.ns.t").count() == 3
    assert ib.pyiceberg_catalog("lake_two", **settings).load_table("ns.t").scan().to_arrow().num_rows == 3
    assert not lake.catalog.table_exists("ns.t")  # a separate database
