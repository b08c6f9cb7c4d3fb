"""Plans that declare types their data does not have (produced against another schema).

A cast that can lose information is a schema mismatch (exit 4) naming every such column and both types; the
caller's opt-in (`--cast-to-plan-types`, `run_plan(cast_to_plan_types=)`, `to_dataframe`, the operator's
argument: tests/test_airflow_e2e.py) casts anyway and notes each cast in the run report; lossless widening runs.
Every read whose data type can differ from the plan's: `--table`/`--tables-dir` files, LocalFiles, Spark's
catalog, IcebergTable metadata reads; Iceberg catalog tables keep requiring an exact match. The rule, pair by
pair: tests/test_conversions.py.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from google.protobuf import json_format
from oracles import DuckDBOracle
from plan_builder import (
    PlanBuilder,
    _schema,
    date,
    decimal_,
    field,
    filter_,
    fp32,
    fp64,
    i32,
    i64,
    lit,
    named,
    precision_timestamp,
    project,
    tuples,
)
from pyspark.sql import functions as F
from pyspark.sql import types as T
from spark_modes import configuration, needs_spark35_classic
from substrait import algebra_pb2 as alg
from substrait_spark.api import run_plan
from substrait_spark.cli import main
from substrait_spark.consumer import to_dataframe
from substrait_spark.consumer.errors import ExecutionError, SchemaMismatchError
from substrait_spark.consumer.loading.loader import load_plan
from substrait_spark.consumer.running.resolver import SessionCatalogResolver
from substrait_spark.consumer.walk import nodes

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.corpus]

IBM = "ibm-substrait-compliance-tpch"
AMOUNTS = [(1, Decimal("1.50")), (2, Decimal("999.99")), (3, Decimal("1000.00")), (4, Decimal("-12345.67"))]
NARROW = "column 'amount' is decimal(10,2), plan says decimal(5,2) (a cast would lose information)"


@pytest.fixture(scope="module")
def amounts(spark, tmp_path_factory) -> Path:
    """`id int, amount decimal(10,2)` as a parquet file, with values ≥ 1000 that decimal(5,2) cannot hold."""
    path = tmp_path_factory.mktemp("declared") / "amounts.parquet"
    rows = ", ".join(f"({i}, {a})" for i, a in AMOUNTS)
    spark.sql(f"SELECT CAST(col1 AS INT) id, CAST(col2 AS DECIMAL(10,2)) amount FROM VALUES {rows}").coalesce(
        1
    ).write.parquet(str(path))
    return path


def amounts_plan(amount_type=None, source: alg.Rel | None = None):
    """SELECT id, amount FROM amounts, the plan declaring `amount` as `amount_type` (default decimal(5,2))."""
    rel = source or named("amounts", ["id", "amount"], [i32(), amount_type or decimal_(5, 2)])
    return PlanBuilder().plan(project(rel, emit=[0, 1]), ["id", "amount"])


def write_plan(plan, path: Path) -> Path:
    path.write_text(json.dumps(json_format.MessageToDict(plan)))
    return path


def cast_by_spark_sql(spark, path: Path, sql_type: str) -> list[tuple]:
    """The independent answer for the opt-in: Spark SQL's own CAST of the file's column."""
    rows = spark.sql(f"SELECT id, CAST(amount AS {sql_type}) FROM parquet.`{path}`").collect()
    return sorted(tuples(rows))


# --- the first shape: decimal(5,2) over decimal(10,2) ------------------------------------------------


def test_narrower_decimal_in_a_file_is_exit_4_naming_both_types(spark, amounts, tmp_path, capsys):
    plan = write_plan(amounts_plan(), tmp_path / "narrow.json")
    out_dir = tmp_path / "out"
    code = main(["run", str(plan), "--table", f"amounts={amounts}", "--output-dir", str(out_dir)])
    err = capsys.readouterr().err
    assert code == 4, err
    errors = [x for x in err.splitlines() if x.startswith("substrait-spark: ")]  # (progress lines too)
    assert len(errors) == 1 and "resolution failed" in err
    assert f"table 'amounts' does not match the plan's schema: {NARROW}" in err
    assert "--cast-to-plan-types" in err
    assert not (out_dir / "narrow.csv").exists()
    (entry,) = json.loads((out_dir / "summary.json").read_text())["plans"]
    assert entry["error"]["exit_code"] == 4
    assert entry["error"]["path"] == "relations[0].root.input.project.input.read.named_table"


def test_opt_in_casts_as_spark_sql_does_and_notes_the_cast(spark, amounts, tmp_path, capsys):
    plan = write_plan(amounts_plan(), tmp_path / "narrow.json")
    out_dir = tmp_path / "out"
    argv = ["run", str(plan), "--table", f"amounts={amounts}", "--output-dir", str(out_dir), "--output-format"]
    code = main([*argv, "jsonl", "--cast-to-plan-types"])
    assert code == 0, capsys.readouterr().err
    lines = (out_dir / "narrow.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]  # JSON lines leave NULL columns out
    got = sorted((r["id"], None if r.get("amount") is None else Decimal(str(r["amount"]))) for r in records)
    expected = cast_by_spark_sql(spark, amounts, "DECIMAL(5,2)")
    assert got == expected
    assert [a for _, a in got] == [Decimal("1.50"), Decimal("999.99"), None, None]  # what the cast loses
    (entry,) = json.loads((out_dir / "summary.json").read_text())["plans"]
    casts = [n for n in entry["notes"] if n.startswith("lossy cast")]
    assert casts == [
        "lossy cast (cast_to_plan_types): table 'amounts', column 'amount': decimal(10,2) -> decimal(5,2) "
        "(at relations[0].root.input.project.input.read.named_table)"
    ]


# --- the second shape: Calcite's bare DECIMAL (decimal(19,0)) over TPC-H decimal(15,2) ----------------


LINEITEM_DECIMALS = ["L_QUANTITY", "L_EXTENDEDPRICE", "L_DISCOUNT", "L_TAX"]  # as IBM's plans name them


def bare_decimal_q06(corpus: Path, tmp_path: Path) -> Path:
    """IBM's q06 as a producer would write it against a schema whose decimals are bare `DECIMAL`:
    Calcite's DECIMAL(19,0) in the read's base schema."""
    loaded = load_plan(corpus / IBM / "q06.json")
    changed = 0
    for msg, _ in nodes(loaded.plan):
        if isinstance(msg, alg.ReadRel):
            for t in msg.base_schema.struct.types:
                if t.WhichOneof("kind") == "decimal":
                    t.decimal.precision, t.decimal.scale = 19, 0
                    changed += 1
    assert changed == len(LINEITEM_DECIMALS)
    return write_plan(loaded.plan, tmp_path / "q06_bare_decimal.json")


def test_bare_decimal_plan_over_tpch_lists_every_column(corpus, spark, tpch_dir, tmp_path, capsys):
    plan = bare_decimal_q06(corpus, tmp_path)
    code = main(["run", str(plan), "--tables-dir", str(tpch_dir)])
    err = capsys.readouterr().err
    assert code == 4, err
    assert len([x for x in err.splitlines() if x.startswith("substrait-spark: ")]) == 1  # (progress lines too)
    for column in LINEITEM_DECIMALS:
        assert f"column '{column}' is decimal(15,2), plan says decimal(19,0) (a cast would lose information)" in err
    assert err.count("a cast would lose information") == len(LINEITEM_DECIMALS)


def test_bare_decimal_plan_with_the_opt_in_gives_the_answer_of_the_cast_data(corpus, spark, tpch_dir, tmp_path):
    """With the opt-in, q06 runs on prices and discounts rounded to integers: DuckDB's q06 over the same cast
    data gives the same (NULL: no discount of 0 lies in [0.05, 0.07]); each of the four casts is noted."""
    plan = bare_decimal_q06(corpus, tmp_path)
    from substrait_spark.consumer.running.resolver import TableMapResolver

    report = run_plan(
        plan, spark, TableMapResolver.from_tables_dir(str(tpch_dir)), output="preview", cast_to_plan_types=True
    )
    assert report.status == "success"
    casts = [n for n in report.notes if n.startswith("lossy cast")]
    assert len(casts) == len(LINEITEM_DECIMALS)
    for column, note in zip(LINEITEM_DECIMALS, casts, strict=True):
        assert f"table 'LINEITEM', column '{column}': decimal(15,2) -> decimal(19,0)" in note
    db = DuckDBOracle(tpch_dir, ["lineitem"])
    try:
        casted = ", ".join(f"CAST({c} AS DECIMAL(19,0)) AS {c}" for c in LINEITEM_DECIMALS)
        db.con.execute("ALTER VIEW lineitem RENAME TO lineitem_as_written")
        db.con.execute(f"CREATE VIEW lineitem AS SELECT * REPLACE ({casted}) FROM lineitem_as_written")
        expected = db.run((Path(__file__).parent / "tpch_sql" / "standard" / "q06.sql").read_text())
    finally:
        db.close()
    assert report.outputs[0].preview == [list(r) for r in expected.rows] == [[None]]


# --- lossless widening runs, silently --------------------------------------------------------------------------


WIDE_COLUMNS = ["i", "f", "d", "day"]
WIDE_SQL = "SELECT CAST(col1 AS INT) i, CAST(col2 AS FLOAT) f, CAST(col3 AS DECIMAL(10,2)) d, CAST(col4 AS DATE) day"
WIDE_ROWS = "(2147483647, 0.1, 12345678.91, '1992-01-02'), (-2147483648, 3.4e38, -0.01, '2024-02-29')"


def test_lossless_widening_runs_and_gives_spark_sql_casts(spark, tmp_path):
    """int -> decimal(12,2), float -> double, decimal(10,2) -> decimal(12,3), date -> timestamp: every value kept
    (Spark SQL's own casts of the same file), no note; a filter on a widened column still reaches the scan."""
    path = tmp_path / "wide.parquet"
    spark.sql(f"{WIDE_SQL} FROM VALUES {WIDE_ROWS}").coalesce(1).write.parquet(str(path))
    types = [decimal_(12, 2), fp64(), decimal_(12, 3), precision_timestamp(6)]
    b = PlanBuilder()
    rel = filter_(named("wide", WIDE_COLUMNS, types), b.call("gt", field(2), lit(Decimal("-1.000"), decimal_(12, 3))))
    plan = b.plan(project(rel, emit=[0, 1, 2, 3]), WIDE_COLUMNS)
    from substrait_spark.consumer.running.resolver import TableMapResolver

    report = run_plan(
        plan.SerializeToString(), spark, TableMapResolver.from_mapping({"wide": str(path)}), output="preview"
    )
    assert report.status == "success"
    assert not [n for n in report.notes if "lossy" in n]
    expected = spark.sql(
        "SELECT CAST(i AS DECIMAL(12,2)), CAST(f AS DOUBLE), CAST(d AS DECIMAL(12,3)), CAST(day AS TIMESTAMP_NTZ) "
        f"FROM parquet.`{path}` WHERE d > -1.000"
    ).collect()
    got = to_dataframe(plan, spark, TableMapResolver.from_mapping({"wide": str(path)})).collect()
    assert sorted(tuples(got)) == sorted(tuples(expected)) and len(expected) == 2


# --- every read whose type can differ: LocalFiles, Spark's catalog, IcebergTable metadata --------------------


def local_files(path: Path) -> alg.Rel:
    read = alg.ReadRel(base_schema=_schema(["id", "amount"], [i32(), decimal_(5, 2)]))
    item = read.local_files.items.add(uri_folder=path.as_uri())
    item.parquet.SetInParent()
    return alg.Rel(read=read)


def test_local_files_lossy_cast_refused_then_opted_in(spark, amounts):
    plan = amounts_plan(source=local_files(amounts))
    with pytest.raises(
        SchemaMismatchError,
        match=re.escape(f"local files '{amounts.as_uri()}' does not match the plan's schema: {NARROW}"),
    ):
        to_dataframe(plan, spark, SessionCatalogResolver())
    df = to_dataframe(plan, spark, SessionCatalogResolver(), cast_to_plan_types=True)
    assert sorted(tuples(df.collect())) == cast_by_spark_sql(spark, amounts, "DECIMAL(5,2)")


@pytest.fixture
def amounts_view(spark):
    rows = ", ".join(f"({i}, {a}, 0.1D)" for i, a in AMOUNTS)
    spark.sql(
        f"SELECT CAST(col1 AS INT) id, CAST(col2 AS DECIMAL(10,2)) amount, col3 price FROM VALUES {rows}"
    ).createOrReplaceTempView("amounts_v")
    yield "amounts_v"
    spark.catalog.dropTempView("amounts_v")


def test_session_catalog_lists_every_lossy_column_and_run_plan_opts_in(spark, amounts_view):
    """decimal(10,2) as decimal(5,2) and double as float: one message with both; run_plan's opt-in notes both."""
    plan = PlanBuilder().plan(
        project(named(amounts_view, ["id", "amount", "price"], [i32(), decimal_(5, 2), fp32()]), emit=[0, 1, 2]),
        ["id", "amount", "price"],
    )
    with pytest.raises(SchemaMismatchError) as refused:
        run_plan(plan.SerializeToString(), spark)
    message = str(refused.value)
    assert NARROW in message
    assert "column 'price' is double, plan says float (a cast would lose information)" in message
    assert refused.value.exit_code == 4
    assert refused.value.report.status == "failed" and refused.value.report.error.exit_code == 4
    report = run_plan(plan.SerializeToString(), spark, output="preview", cast_to_plan_types=True)
    casts = sorted(n.split(": ", 1)[1] for n in report.notes if n.startswith("lossy cast"))
    at = "(at relations[0].root.input.project.input.read.named_table)"
    assert casts == [
        f"table 'amounts_v', column 'amount': decimal(10,2) -> decimal(5,2) {at}",
        f"table 'amounts_v', column 'price': double -> float {at}",
    ]
    expected = spark.sql("SELECT id, CAST(amount AS DECIMAL(5,2)), CAST(price AS FLOAT) FROM amounts_v").collect()
    got = to_dataframe(plan, spark, SessionCatalogResolver(), cast_to_plan_types=True).collect()
    assert sorted(tuples(got)) == sorted(tuples(expected))
    assert report.outputs[0].rows == len(AMOUNTS)


@needs_spark35_classic("Iceberg: the runtime jar available offline is built for Spark 3.5 only")
def test_iceberg_metadata_read_refuses_a_lossy_cast_and_catalog_tables_stay_exact(lake):
    """IcebergTable (a metadata file, no catalog) converts like a file; a NamedTable through the Iceberg catalog
    must match exactly, opt-in or not (its schema is declared: the plan was written for another table)."""
    from substrait_spark.consumer.running.resolver import ChainResolver
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer
    from substrait_spark.hooks.iceberg import IcebergCatalogResolver

    lake.catalog.create_namespace_if_not_exists("declared_types")
    schema = pa.schema([("id", pa.int32()), ("amount", pa.decimal128(10, 2))])
    table = lake.catalog.create_table_if_not_exists("declared_types.amounts", schema=schema)
    if table.current_snapshot() is None:
        table.append(pa.Table.from_pylist([{"id": i, "amount": a} for i, a in AMOUNTS], schema=schema))
    metadata = lake.catalog.load_table("declared_types.amounts").metadata_location
    read = alg.ReadRel(base_schema=_schema(["id", "amount"], [i32(), decimal_(5, 2)]))
    read.iceberg_table.direct.metadata_uri = metadata
    plan = amounts_plan(source=alg.Rel(read=read))
    resolver = ChainResolver([IcebergCatalogResolver(lake.catalogs())])

    with pytest.raises(
        SchemaMismatchError, match=re.escape(f"Iceberg table '{metadata}' does not match the plan's schema: {NARROW}")
    ):
        SubstraitConsumer(lake.spark, plan, resolver).root(0)
    consumer = SubstraitConsumer(lake.spark, plan, resolver, cast_to_plan_types=True)
    rows = sorted(tuples(consumer.root(0).collect()))
    assert rows == [(1, Decimal("1.50")), (2, Decimal("999.99")), (3, None), (4, None)]
    assert [c.note() for c in consumer.lossy_casts] == [
        f"lossy cast (cast_to_plan_types): Iceberg table '{metadata}', column 'amount': decimal(10,2) -> "
        "decimal(5,2) (at relations[0].root.input.project.input.read.iceberg_table)"
    ]

    by_name = amounts_plan(source=named([lake.name, "declared_types", "amounts"], ["id", "amount"], [i32(), i64()]))
    for opt_in in (False, True):
        with pytest.raises(SchemaMismatchError, match="column 'amount' is decimal\\(10,2\\), plan says bigint"):
            SubstraitConsumer(lake.spark, by_name, resolver, cast_to_plan_types=opt_in).root(0)


def test_no_cast_turns_a_number_into_a_date(spark, amounts):
    """Types no cast gives stay refused, opt-in or not."""
    from substrait_spark.consumer.running.resolver import TableMapResolver

    plan = amounts_plan(date())
    resolver = TableMapResolver.from_mapping({"amounts": str(amounts)})
    for opt_in in (False, True):
        with pytest.raises(SchemaMismatchError, match=r"column 'amount' is decimal\(10,2\), plan says date \(at"):
            to_dataframe(plan, spark, resolver, cast_to_plan_types=opt_in)


# --- delimited text: parsed as the declared types, a value that does not fit is an error, not a NULL ------------


TEXT = "id|amount\n1|1.50\n2|1234.56\n3|\n"
# The reason the run fails, on Spark 3.5 and 4 (which wraps it in FAILED_READ_FILE: the error unwraps it), except
# through pyspark 3.5's Connect client: the server's Spark 4 sends it the wrapper alone (no way to fetch causes).
MALFORMED = (
    r"FAILED_READ_FILE.*its cause did not reach this client" if configuration() == "connect-3" else "MALFORMED_RECORD"
)


def text_item(path: Path) -> alg.ReadRel.LocalFiles.FileOrFiles:
    f = alg.ReadRel.LocalFiles.FileOrFiles(uri_file=path.as_uri())
    f.text.field_delimiter, f.text.header_lines_to_skip = "|", 1
    return f


def test_text_value_that_does_not_fit_its_declared_type_fails_the_run_unless_opted_in(spark, tmp_path):
    """Spark's CSV reader would make 1234.56 in a decimal(5,2) column NULL (and exit 0): the run fails (exit 1)
    naming the malformed record; with the opt-in it is NULL, the column noted. An empty field stays NULL."""
    path = tmp_path / "amounts.txt"
    path.write_text(TEXT)
    read = alg.ReadRel(base_schema=_schema(["id", "amount"], [i32(), decimal_(5, 2)]))
    read.local_files.items.append(text_item(path))
    plan = amounts_plan(source=alg.Rel(read=read)).SerializeToString()
    with pytest.raises(ExecutionError, match=MALFORMED) as failed:
        run_plan(plan, spark, output="preview")
    assert failed.value.exit_code == 1
    if configuration() != "classic-3":  # Spark 4 (the Connect server too) names the file it could not read
        assert path.as_uri() in str(failed.value)
    report = run_plan(plan, spark, output="preview", cast_to_plan_types=True)
    assert report.outputs[0].preview == [[1, "1.50"], [2, None], [3, None]]
    assert [n.split(": ", 1)[1] for n in report.notes if n.startswith("lossy cast")] == [
        f"local files '{path.as_uri()}', column 'id': string -> int (at relations[0].root.input.project.input.read"
        ".local_files)",
        f"local files '{path.as_uri()}', column 'amount': string -> decimal(5,2) (at relations[0].root.input.project"
        ".input.read.local_files)",
    ]


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (decimal_(12, 2), [Decimal("1.50"), Decimal("1234.56"), None]),  # exact, not through a double
        (fp64(), [1.5, 1234.56, None]),
    ],
)
def test_csv_table_binding_is_parsed_as_the_plan_declares(spark, tmp_path, declared, expected, capsys):
    """A `--table NAME=URI:csv` binding: Spark would guess double for 1.50; the plan's decimal(12,2) reads the text
    exactly, its fp64 as a double, and a decimal(5,2) that 1234.56 does not fit fails the run (exit 1)."""
    from substrait_spark.consumer.running.resolver import TableMapResolver

    path = tmp_path / "amounts.csv"
    path.write_text(TEXT.replace("|", ","))
    resolver = TableMapResolver.from_mapping({"amounts": f"{path}:csv"})
    df = to_dataframe(amounts_plan(declared), spark, resolver)
    assert [r.amount for r in sorted(df.collect())] == expected
    plan = write_plan(amounts_plan(), tmp_path / "narrow.json")
    assert main(["run", str(plan), "--table", f"amounts={path}:csv"]) == 1
    assert re.search(MALFORMED, capsys.readouterr().err)


# A created table's nullability (consumer/translation/nullability.py; the CTAS tests: tests/test_shop_writes.py).
EVERY_TYPE = [
    T.BooleanType(),
    T.ByteType(),
    T.ShortType(),
    T.IntegerType(),
    T.LongType(),
    T.FloatType(),
    T.DoubleType(),
    T.DecimalType(21, 2),
    T.DecimalType(2, 2),  # no integer digit: a Connect client's Python Decimal literal (decimal(10, 2)) overflows it
    T.DecimalType(38, 0),
    T.DecimalType(38, 38),
    T.StringType(),
    T.BinaryType(),
    T.DateType(),
    T.TimestampType(),
    T.TimestampNTZType(),
    T.DayTimeIntervalType(),
    T.YearMonthIntervalType(),
    T.ArrayType(T.IntegerType()),
    T.MapType(T.StringType(), T.DecimalType(5, 5)),
    T.StructType([T.StructField("a", T.IntegerType(), False), T.StructField("b", T.DecimalType(3, 3))]),
]


@pytest.mark.parametrize("t", EVERY_TYPE, ids=lambda t: t.simpleString())
def test_a_required_column_is_non_nullable_of_its_own_type_and_fails_on_a_null(spark, t):
    """What a CTAS's REQUIRED column becomes: Spark knows it cannot be NULL (so the table's column is required),
    its type is unchanged, a value passes through and a NULL fails the query, typed, naming the column."""
    from substrait_spark.consumer.errors import RequiredColumnNullError
    from substrait_spark.consumer.running.spark_errors import spark_error
    from substrait_spark.consumer.translation.nullability import some_value, with_nullability

    value = spark.range(2).select(F.when(F.col("id") >= 0, some_value(t)).alias("c"))  # nullable, never NULL
    required = with_nullability(value, [False], "table lake.ns.t")
    assert required.schema["c"] == T.StructField("c", t, False)
    required.write.format("noop").mode("overwrite").save()  # every value computed (a year-month interval cannot
    # be collected into Python on pyspark 4)
    optional = with_nullability(spark.range(1).select(some_value(t).alias("c")), [True], "table lake.ns.t")
    assert optional.schema["c"] == T.StructField("c", t, True)
    holes = spark.range(2).select(F.when(F.col("id") > 0, some_value(t)).alias("c"))
    with pytest.raises(Exception) as info:
        with_nullability(holes, [False], "table lake.ns.t").write.format("noop").mode("overwrite").save()
    err = spark_error(info.value)
    assert isinstance(err, RequiredColumnNullError)
    assert err.message == "NULL in required column 'c' of table lake.ns.t (declared REQUIRED)"
