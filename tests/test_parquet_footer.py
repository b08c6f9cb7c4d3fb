"""A parquet table's schema read from its footer (consumer/running/parquet_footer.py) is the schema Spark's own
inference gives, or None (Spark infers, as before): checked against `spark.read.parquet(path).schema` for every
type the footer path reads, and for the shapes it leaves to Spark. Opening a table through the resolver then
runs no Spark job (inference runs one per table)."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T
from substrait_spark.consumer import TableMapResolver
from substrait_spark.consumer.running.parquet_footer import footer_schema, local_files
from substrait_spark.consumer.running.resolver import TableBinding
from substrait_spark.hooks.spark import job_group

# Each test carries its tier: `unit` (pure Python) or `spark`.

FLAT = T.StructType(
    [
        T.StructField("b", T.BooleanType()),
        T.StructField("i8", T.ByteType()),
        T.StructField("i16", T.ShortType()),
        T.StructField("i32", T.IntegerType(), False),
        T.StructField("i64", T.LongType()),
        T.StructField("f", T.FloatType()),
        T.StructField("d", T.DoubleType()),
        T.StructField("dec_small", T.DecimalType(7, 2)),
        T.StructField("dec_mid", T.DecimalType(15, 2)),
        T.StructField("dec_big", T.DecimalType(38, 10)),
        T.StructField("day", T.DateType()),
        T.StructField("s", T.StringType()),
        T.StructField("Mixed_Case", T.StringType()),
    ]
)
FLAT_ROW = (
    True,
    1,
    2,
    3,
    4,
    1.5,
    2.5,
    decimal.Decimal("1.25"),
    decimal.Decimal("3.50"),
    decimal.Decimal("1"),
    dt.date(2020, 1, 2),
    "x",
    "y",
)


def _inferred(spark, path: Path) -> T.StructType:
    return spark.read.parquet(str(path)).schema


@pytest.mark.spark
def test_spark_written_flat_types_match_inference(spark, tmp_path):
    path = tmp_path / "flat.parquet"
    spark.createDataFrame([FLAT_ROW], FLAT).write.parquet(str(path))
    assert footer_schema(str(path)) == _inferred(spark, path)
    assert footer_schema(path.as_uri()) == _inferred(spark, path)


@pytest.mark.spark
@pytest.mark.parametrize(
    "arrow_type",
    [
        pa.bool_(),
        pa.int8(),
        pa.int16(),
        pa.int32(),
        pa.int64(),
        pa.float32(),
        pa.float64(),
        pa.decimal128(9, 3),
        pa.decimal128(18, 0),
        pa.decimal128(38, 38),
        pa.date32(),
        pa.string(),
        pa.large_string(),
    ],
    ids=str,
)
def test_pyarrow_written_types_match_inference(spark, tmp_path, arrow_type):
    path = tmp_path / "one.parquet"
    pq.write_table(pa.table({"c": pa.array([None], arrow_type), "k": pa.array([1], pa.int64())}), path)
    schema = footer_schema(str(path))
    assert schema is not None
    assert schema == _inferred(spark, path)


@pytest.mark.unit
@pytest.mark.parametrize(
    "arrow_type",
    [
        pa.timestamp("us"),
        pa.timestamp("us", tz="UTC"),
        pa.timestamp("ms"),
        pa.uint8(),
        pa.uint32(),
        pa.uint64(),
        pa.binary(),
        pa.time64("us"),
        pa.struct([("x", pa.int32())]),
        pa.list_(pa.int32()),
        pa.map_(pa.string(), pa.int32()),
    ],
    ids=str,
)
def test_types_left_to_spark(tmp_path, arrow_type):
    """Types whose Spark type depends on settings (timestamps, binary) or that Spark maps its own way (unsigned,
    nested): Spark infers them."""
    path = tmp_path / "one.parquet"
    pq.write_table(pa.table({"c": pa.array([None], arrow_type)}), path)
    assert footer_schema(str(path)) is None


@pytest.mark.spark
def test_folder_of_files(spark, tmp_path):
    path = tmp_path / "t.parquet"
    spark.range(100).selectExpr("id", "cast(id as string) as s").repartition(3).write.parquet(str(path))
    assert len(local_files(str(path)) or []) == 3  # _SUCCESS and .crc files skipped, as Spark skips them
    assert footer_schema(str(path)) == _inferred(spark, path)


@pytest.mark.spark
def test_shapes_left_to_spark(spark, tmp_path):
    partitioned = tmp_path / "p.parquet"
    spark.range(4).selectExpr("id", "id % 2 as part").write.partitionBy("part").parquet(str(partitioned))
    differing = tmp_path / "d.parquet"
    differing.mkdir()
    pq.write_table(pa.table({"a": pa.array([1], pa.int64())}), differing / "part-0.parquet")
    pq.write_table(pa.table({"a": pa.array([1], pa.int32())}), differing / "part-1.parquet")
    summary = tmp_path / "s.parquet"
    summary.mkdir()
    pq.write_table(pa.table({"a": pa.array([1], pa.int64())}), summary / "part-0.parquet")
    pq.write_metadata(pa.schema([("a", pa.int64())]), summary / "_common_metadata")
    not_parquet = tmp_path / "x.parquet"
    not_parquet.write_text("not parquet")
    for uri in (partitioned, differing, summary, not_parquet, tmp_path / "missing.parquet", f"{tmp_path}/*.parquet"):
        assert footer_schema(str(uri)) is None, uri
    assert footer_schema("s3://bucket/t.parquet") is None
    assert footer_schema("hdfs://nn/t.parquet") is None


@pytest.mark.spark
def test_resolver_opens_a_table_without_a_job(spark, tmp_path):
    """The cold path of a one-off run: opening parquet tables runs no Spark job, and reads the same rows and
    schema as Spark's inference."""
    path = tmp_path / "flat.parquet"
    spark.createDataFrame([FLAT_ROW] * 3, FLAT).write.parquet(str(path))
    tracker, group = spark.sparkContext.statusTracker(), "substrait-test-footer"
    with job_group(spark, group, "footer"):
        table = TableMapResolver({"flat": TableBinding(str(path))}).resolve(spark, ["flat"])
        schema = table.df.schema
        jobs = list(tracker.getJobIdsForGroup(group))
    assert jobs == []
    expected = spark.read.parquet(str(path))
    assert schema == expected.schema
    assert sorted(table.df.collect()) == sorted(expected.collect())


@pytest.mark.spark
def test_footer_columns_list_every_type_spark_may_read(spark, tmp_path):
    """`footer_columns` (the check before Spark): for each column the types Spark's reads give it under either
    setting of spark.sql.parquet.inferTimestampNTZ.enabled; a nested column has none worked out (name only)."""
    from substrait_spark.consumer.running.parquet_footer import footer_columns

    moment = dt.datetime(2024, 5, 6, 7, 8, 9)
    table = pa.table(
        {
            "wall": pa.array([moment], pa.timestamp("us")),
            "utc": pa.array([moment], pa.timestamp("ms", tz="UTC")),
            "n": pa.array([1], pa.int64()),
            "nested": pa.array([{"a": 1}], pa.struct([("a", pa.int64())])),
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    columns = {c.name: c.types for c in footer_columns(str(path)) or []}
    assert columns["nested"] == () and columns["n"] == (T.LongType(),)
    key = "spark.sql.parquet.inferTimestampNTZ.enabled"
    before = spark.conf.get(key)
    try:
        for setting in ("true", "false"):
            spark.conf.set(key, setting)
            for f in spark.read.parquet(str(path)).schema.fields:
                if f.name in ("wall", "utc", "n"):
                    assert f.dataType in columns[f.name], (setting, f)
    finally:
        spark.conf.set(key, before)
