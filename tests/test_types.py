"""Every Substrait type through a plan on Spark: a VirtualTable literal of the type, a cast to it, and a NamedTable
read of a Spark table holding it all give the mapped Spark type and the value; the unsigned integers keep their
range; types Spark cannot hold fail with UnsupportedFeatureError naming the plan path; the Spark -> Substrait
mapping inverts the Substrait -> Spark one; docs/types.md is generated from the mapping tables."""

from __future__ import annotations

import datetime as dt
import decimal
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import plan_builder as pb
import pytest
from conformance.values import UNSIGNED_URN, declare_types, literal_expr, unsigned_type
from substrait_spark.consumer import types as ty
from substrait_spark.consumer.errors import PlanInvalidError, UnsupportedFeatureError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

import types_doc

# Each test carries its tier: `unit` (pure Python) or `spark`.

Type = pb.Type
Lit = pb.Expr.Literal


def _type(kind: str, **fields: object) -> Type:
    return pb._simple(kind, True, **fields)


def _raw(**fields: object) -> pb.Expr:
    """A literal set field by field (kinds the plan builder does not write)."""
    lit = Lit(nullable=True)
    for kind, value in fields.items():
        if isinstance(value, dict):
            getattr(lit, kind).SetInParent()
            for k, v in value.items():
                setattr(getattr(lit, kind), k, v)
        else:
            setattr(lit, kind, value)
    return pb.Expr(literal=lit)


def _u(name: str, value: int) -> tuple[Type, pb.Expr]:
    return unsigned_type(name, True), literal_expr(f"'{value}'", name)


@dataclass(frozen=True)
class Case:
    id: str
    type: Type
    literal: pb.Expr
    value: object
    spark: str  # simpleString of the Spark column
    sql: str  # the same value in Spark SQL, for the NamedTable read


_UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")
_TS = dt.datetime(2020, 1, 2, 3, 4, 5, 123456)
_MILLI = dt.timedelta(milliseconds=1)

CASES = [
    Case("bool", pb.boolean(), pb.lit(True), True, "boolean", "true"),
    Case("i8", pb.i8(), pb.lit(-5, pb.i8()), -5, "tinyint", "CAST(-5 AS TINYINT)"),
    Case("i16", pb.i16(), pb.lit(-300, pb.i16()), -300, "smallint", "CAST(-300 AS SMALLINT)"),
    Case("i32", pb.i32(), pb.lit(70000, pb.i32()), 70000, "int", "70000"),
    Case("i64", pb.i64(), pb.lit(7, pb.i64()), 7, "bigint", "CAST(7 AS BIGINT)"),
    Case("i64_big", pb.i64(), pb.lit(2**40, pb.i64()), 2**40, "bigint", f"CAST({2**40} AS BIGINT)"),
    Case("fp32", pb.fp32(), pb.lit(1.5, pb.fp32()), 1.5, "float", "CAST(1.5 AS FLOAT)"),
    Case("fp64", pb.fp64(), pb.lit(2.25, pb.fp64()), 2.25, "double", "CAST(2.25 AS DOUBLE)"),
    Case("string", pb.string(), pb.lit("héllo"), "héllo", "string", "'héllo'"),
    Case("varchar", pb.varchar(5), pb.lit("abc", pb.varchar(5)), "abc", "string", "'abc'"),
    Case("fixed_char", pb.fixed_char(3), pb.lit("abc", pb.fixed_char(3)), "abc", "string", "'abc'"),
    Case("binary", pb.binary(), pb.lit(b"\x00\xff"), bytearray(b"\x00\xff"), "binary", "X'00FF'"),
    Case(
        "fixed_binary",
        _type("fixed_binary", length=2),
        _raw(fixed_binary=b"\x01\x02"),
        bytearray(b"\x01\x02"),
        "binary",
        "X'0102'",
    ),
    Case("uuid", _type("uuid"), _raw(uuid=_UUID.bytes), bytearray(_UUID.bytes), "binary", f"X'{_UUID.hex}'"),
    Case(
        "decimal",
        pb.decimal_(20, 3),
        pb.lit(decimal.Decimal("-12345.678"), pb.decimal_(20, 3)),
        decimal.Decimal("-12345.678"),
        "decimal(20,3)",
        "CAST(-12345.678 AS DECIMAL(20,3))",
    ),
    Case("date", pb.date(), pb.lit(dt.date(1999, 12, 31)), dt.date(1999, 12, 31), "date", "DATE'1999-12-31'"),
    Case(
        "precision_timestamp",
        pb.precision_timestamp(6),
        pb.lit(_TS, pb.precision_timestamp(6)),
        _TS,
        "timestamp_ntz",
        "TIMESTAMP_NTZ'2020-01-02 03:04:05.123456'",
    ),
    Case(
        "precision_timestamp_3",
        pb.precision_timestamp(3),
        _raw(
            precision_timestamp={"precision": 3, "value": (_TS - dt.datetime(1970, 1, 1)) // dt.timedelta(0, 0, 1000)}
        ),
        _TS.replace(microsecond=123000),
        "timestamp_ntz",
        "TIMESTAMP_NTZ'2020-01-02 03:04:05.123'",
    ),
    Case(  # DataFusion's nanoseconds: whole microseconds read exactly
        "precision_timestamp_9",
        pb.precision_timestamp(9),
        _raw(
            precision_timestamp={
                "precision": 9,
                "value": (_TS - dt.datetime(1970, 1, 1)) // dt.timedelta(0, 0, 1) * 1000,
            }
        ),
        _TS,
        "timestamp_ntz",
        "TIMESTAMP_NTZ'2020-01-02 03:04:05.123456'",
    ),
    Case(
        "precision_timestamp_tz",
        pb.precision_timestamp_tz(6),
        pb.lit(_TS, pb.precision_timestamp_tz(6)),
        _TS.replace(tzinfo=dt.UTC),
        "timestamp",
        "TIMESTAMP'2020-01-02 03:04:05.123456Z'",
    ),
    Case(
        "interval_year",
        pb.interval_year(),
        pb.lit((1, 2), pb.interval_year()),
        14,
        "interval year to month",
        "INTERVAL '1-2' YEAR TO MONTH",
    ),
    Case(
        "interval_day",
        pb.interval_day(),
        pb.lit(dt.timedelta(days=1, seconds=3, microseconds=5), pb.interval_day()),
        dt.timedelta(days=1, seconds=3, microseconds=5),
        "interval day to second",
        "INTERVAL '1 00:00:03.000005' DAY TO SECOND",
    ),
    Case(
        "list",
        pb.list_(pb.i32()),
        pb.lit([1, None, 3], pb.list_(pb.i32())),
        [1, None, 3],
        "array<int>",
        "array(1, NULL, 3)",
    ),
    Case(
        "map",
        pb.map_(pb.string(False), pb.i64()),
        pb.lit({"a": 1}, pb.map_(pb.string(False), pb.i64())),
        {"a": 1},
        "map<string,bigint>",
        "map('a', CAST(1 AS BIGINT))",
    ),
    Case(
        "struct",
        pb.struct(pb.i32(), pb.string()),
        pb.lit((1, "x"), pb.struct(pb.i32(), pb.string())),
        (1, "x"),
        "struct<c_0:int,c_1:string>",
        "named_struct('c_0', 1, 'c_1', 'x')",
    ),
    Case("u8", *_u("u!u8", 255), 255, "smallint", "CAST(255 AS SMALLINT)"),
    Case("u16", *_u("u!u16", 65535), 65535, "int", "65535"),
    Case("u32", *_u("u!u32", 2**32 - 1), 2**32 - 1, "bigint", f"CAST({2**32 - 1} AS BIGINT)"),
    Case(
        "u64",
        *_u("u!u64", 2**64 - 1),
        decimal.Decimal(2**64 - 1),
        "decimal(20,0)",
        f"CAST({2**64 - 1} AS DECIMAL(20,0))",
    ),
]


def _plan(rel: pb.Rel, names: list[str], type_: Type | None = None) -> pb.plan_pb2.Plan:
    """A plan of `rel` (one column of `type_`: the root names its nested struct fields `c_0`, ...)."""
    if type_ is not None:
        names = [*names, *pb._nested_names(type_, names[0])]
    plan = pb.PlanBuilder().plan(rel, names)
    declare_types(plan)
    return plan


def _one(spark, plan) -> tuple[object, str]:
    df = pb.run(plan, spark)
    rows = df.collect()
    assert len(rows) == 1
    return pb.tuples(rows)[0][0], df.schema.fields[0].dataType.simpleString()


def _same(got: object, want: object) -> bool:
    if isinstance(want, dt.datetime) and want.tzinfo is not None and isinstance(got, dt.datetime):
        return got.replace(tzinfo=None) == want.astimezone().replace(tzinfo=None)
    if isinstance(want, float):
        return got == pytest.approx(want)
    return got == want and (type(got) is type(want) or isinstance(want, (bytearray, dict, tuple)))


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_literal_in_a_virtual_table(spark, case):
    got, simple = _one(spark, _plan(pb.virtual(["c"], [case.type], [[case.literal]]), ["c"], case.type))
    assert simple == case.spark
    assert _same(got, case.value), got


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_literal_in_a_projection_keeps_its_type(spark, case):
    """A projected literal is a Spark literal of exactly the mapped type (a small i64 is no int)."""
    rel = pb.project(pb.virtual(["d"], [pb.i32()], [[0]]), case.literal, emit=[1])
    got, simple = _one(spark, _plan(rel, ["c"], case.type))
    assert simple == case.spark
    assert _same(got, case.value), got


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_cast_to_the_type(spark, case):
    rel = pb.project(pb.virtual(["d"], [pb.i32()], [[0]]), pb.cast(case.literal, case.type, throw=True), emit=[1])
    got, simple = _one(spark, _plan(rel, ["c"], case.type))
    assert simple == case.spark
    assert _same(got, case.value), got


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_named_table_read_of_a_spark_column(spark, case):
    name = f"types_{case.id}"
    spark.sql(f"SELECT {case.sql} AS c").createOrReplaceTempView(name)
    got, simple = _one(spark, _plan(pb.named(name, ["c"], [case.type]), ["c"], case.type))
    assert simple == case.spark
    assert _same(got, case.value), got


@pytest.mark.unit
@pytest.mark.parametrize("case", [c for c in CASES if not c.id.startswith("u")], ids=lambda c: c.id)
def test_spark_to_substrait_inverts_the_mapping(case):
    spark_type = ty.spark_type(case.type)
    back = ty.substrait_type(spark_type, ty.nullable(case.type))
    assert ty.spark_type(back) == spark_type


@pytest.mark.spark
def test_named_struct_of_a_spark_schema(spark):
    schema = spark.sql("SELECT 1 AS a, named_struct('x', 'y', 'z', array(1.5D)) AS s, DATE'2020-01-01' AS d").schema
    named = ty.named_struct(schema)
    assert list(named.names) == ["a", "s", "x", "z", "d"]
    _, types = ty.schema_of(named)
    assert [t.simpleString() for t in types] == ["int", "struct<x:string,z:array<double>>", "date"]
    assert types == [f.dataType for f in schema.fields]  # nullability too


# --- unsigned integers ------------------------------------------------------------------------------------------


def _cast_u8(spark, value: int, throw: bool):
    rel = pb.project(
        pb.virtual(["d"], [pb.i32()], [[0]]),
        pb.cast(pb.lit(value, pb.i32()), unsigned_type("u!u8", True), throw),
        emit=[1],
    )
    return _one(spark, _plan(rel, ["c"]))


@pytest.mark.spark
def test_cast_into_an_unsigned_type_keeps_its_range(spark):
    assert _cast_u8(spark, 255, throw=False) == (255, "smallint")
    assert _cast_u8(spark, 256, throw=False) == (None, "smallint")
    assert _cast_u8(spark, -1, throw=False) == (None, "smallint")
    with pytest.raises(Exception, match="cast to smallint failed"):
        _cast_u8(spark, 300, throw=True)


@pytest.mark.spark
def test_unsigned_literal_out_of_range_is_invalid(spark):
    lit = literal_expr("'255'", "u!u8")
    lit.literal.user_defined.struct.fields[0].string = "256"
    with pytest.raises(PlanInvalidError, match=r"u8 literal 256 is out of range 0\.\.255") as err:
        pb.run(_plan(pb.virtual(["c"], [unsigned_type("u!u8", True)], [[lit]]), ["c"]), spark)
    assert "virtual_table" in err.value.path


def _as_unsigned_functions(plan) -> None:
    """The plan builder files functions under the standard extensions: move them to unsigned_integers.yaml."""
    anchor = max((u.extension_urn_anchor for u in plan.extension_urns), default=0) + 1
    plan.extension_urns.add(extension_urn_anchor=anchor, urn=UNSIGNED_URN)
    for d in plan.extensions:
        d.extension_function.extension_urn_reference = anchor


@pytest.mark.spark
def test_unsigned_arithmetic_over_a_table_column(spark):
    """Functions of unsigned_integers.yaml on columns (not only literals): SATURATE clamps, sum is a u64."""
    view = "SELECT CAST(v AS SMALLINT) AS v FROM VALUES (200), (250), (NULL) AS t(v)"
    spark.sql(view).createOrReplaceTempView("types_u8_col")
    u8, u64 = unsigned_type("u!u8", True), unsigned_type("u!u64", True)
    b = pb.PlanBuilder()
    plus = b.call("add", pb.field(0), literal_expr("'10'", "u!u8"), out=u8, options={"overflow": ["SATURATE"]})
    plan = b.plan(pb.project(pb.named("types_u8_col", ["v"], [u8]), plus, emit=[1]), ["c"])
    _as_unsigned_functions(plan)
    declare_types(plan)
    assert sorted(pb.tuples(pb.run(plan, spark).collect()), key=str) == [(210,), (255,), (None,)]

    b = pb.PlanBuilder()
    total = b.agg("sum", pb.field(0), out=u64)
    plan = b.plan(pb.aggregate(pb.named("types_u8_col", ["v"], [u8]), measures=[total]), ["s"])
    _as_unsigned_functions(plan)
    declare_types(plan)
    df = pb.run(plan, spark)
    assert pb.tuples(df.collect()) == [(decimal.Decimal(450),)]
    assert df.schema.fields[0].dataType.simpleString() == "decimal(20,0)"


def _unsigned_call(spark, name: str, a: int, b: int, type_name: str, overflow: str):
    t = unsigned_type(type_name, True)
    builder = pb.PlanBuilder()
    x, y = literal_expr(f"'{a}'", type_name), literal_expr(f"'{b}'", type_name)
    call = builder.call(name, x, y, out=t, options={"overflow": [overflow]})
    plan = builder.plan(pb.project(pb.virtual(["d"], [pb.i32()], [[0]]), call, emit=[1]), ["c"])
    _as_unsigned_functions(plan)
    declare_types(plan)
    return pb.run(plan, spark).collect()[0][0]


@pytest.mark.spark
def test_unsigned_overflow_modes(spark):
    """SILENT wraps modulo 2^bits (as unsigned hardware does), SATURATE clamps, ERROR fails the query."""
    assert _unsigned_call(spark, "add", 200, 100, "u!u8", "SILENT") == 44
    assert _unsigned_call(spark, "subtract", 0, 1, "u!u16", "SILENT") == 65535
    assert _unsigned_call(spark, "subtract", 0, 1, "u!u32", "SATURATE") == 0
    big = 2**63
    assert _unsigned_call(spark, "multiply", big, big, "u!u64", "SATURATE") == decimal.Decimal(2**64 - 1)
    with pytest.raises(Exception, match="unsigned integer overflow of u64"):
        _unsigned_call(spark, "multiply", big, big, "u!u64", "ERROR")


@pytest.mark.spark
@pytest.mark.parametrize(
    ("name", "option", "value"),
    [("add", "overflow", "WRAP"), ("divide", "on_division_by_zero", "NAN"), ("divide", "on_domain_error", "NAN")],
)
def test_unsigned_options_are_refused_by_validate_as_by_translation(spark, name, option, value):
    """The options of unsigned_integers.yaml's handlers are declared next to them (issue 14): validate lists an
    unsupported one with translation's words at translation's path (run exits 3), and accepts a supported one."""
    from substrait_spark.consumer.analysis.analyze import Finding, validate_plan

    def plan(choice: str):
        builder = pb.PlanBuilder()
        x, y = literal_expr("'7'", "u!u8"), literal_expr("'2'", "u!u8")
        call = builder.call(name, x, y, out=unsigned_type("u!u8", True), options={option: [choice]})
        out = builder.plan(pb.project(pb.virtual(["d"], [pb.i32()], [[0]]), call, emit=[1]), ["c"])
        _as_unsigned_functions(out)
        declare_types(out)
        return out

    refused = plan(value)
    error = pb.translation_refusal(refused, spark)
    assert f"option {option}={value}" in error.message and error.exit_code == 3
    assert validate_plan(refused) == [Finding(error.message, error.path)]
    assert validate_plan(plan("ERROR")) == []
    assert pb.run(plan("ERROR"), spark).collect()[0][0] == (9 if name == "add" else 3)


# --- rejected ------------------------------------------------------------------------------------------------


REJECTED = [
    ("precision_time", _type("precision_time", precision=6), "time-of-day"),
    ("interval_compound", _type("interval_compound", precision=6), "calendar interval"),
    ("func", _type("func"), "function type"),
    ("interval_day_9", _type("interval_day", precision=9), "at most microseconds"),
    ("decimal_39", pb.decimal_(39, 0), "exceeds Spark's maximum 38"),
    ("list_of_time", pb.list_(_type("precision_time", precision=3)), "time-of-day"),
]


@pytest.mark.spark
@pytest.mark.parametrize(("kind", "type_", "reason"), REJECTED, ids=[r[0] for r in REJECTED])
def test_types_spark_cannot_hold_are_rejected_with_the_path(spark, kind, type_, reason):
    rel = pb.project(pb.virtual(["d"], [pb.i32()], [[0]]), pb.cast(pb.lit("x"), type_), emit=[1])
    with pytest.raises(UnsupportedFeatureError, match=reason) as err:
        pb.run(_plan(rel, ["c"]), spark)
    assert err.value.path.startswith("relations[0].root.input.project.expressions[0].cast.type")


def _months_and_days() -> pb.Expr:
    """A compound interval with both parts (one with months only or days/seconds only is that interval)."""
    e = _raw(interval_compound={})
    e.literal.interval_compound.interval_year_to_month.months = 1
    e.literal.interval_compound.interval_day_to_second.days = 2
    return e


REJECTED_LITERALS = [
    ("precision_time", _raw(precision_time={"precision": 6, "value": 1_000_000}), "time-of-day"),
    ("interval_compound", _months_and_days(), "year-to-second interval"),
]


@pytest.mark.spark
@pytest.mark.parametrize(("kind", "literal", "reason"), REJECTED_LITERALS, ids=[r[0] for r in REJECTED_LITERALS])
def test_literals_spark_cannot_hold_are_rejected_with_the_path(spark, kind, literal, reason):
    rel = pb.project(pb.virtual(["d"], [pb.i32()], [[0]]), literal, emit=[1])
    with pytest.raises(UnsupportedFeatureError, match=reason) as err:
        pb.run(_plan(rel, ["c"]), spark)
    assert err.value.path == "relations[0].root.input.project.expressions[0].literal"


@pytest.mark.spark
def test_user_defined_types_need_a_declaration_and_a_mapping(spark):
    udt = Type()
    udt.user_defined.type_reference = 7
    read = pb.virtual(["c"], [udt], [])
    with pytest.raises(PlanInvalidError, match="reference 7 names no declared extension type"):
        pb.run(pb.PlanBuilder().plan(read, ["c"]), spark)
    plan = pb.PlanBuilder().plan(read, ["c"])
    plan.extension_urns.add(extension_urn_anchor=1, urn="extension:example.com:geo")
    decl = plan.extensions.add().extension_type
    decl.extension_urn_reference, decl.type_anchor, decl.name = 1, 7, "point"
    with pytest.raises(UnsupportedFeatureError, match="user-defined type geo/point has no Spark equivalent") as err:
        pb.run(plan, spark)
    assert err.value.path.endswith("base_schema.struct.types[0]")


@pytest.mark.spark
def test_type_alias_resolves_through_the_plan(spark):
    alias = Type()
    alias.alias.type_alias_reference = 3
    plan = pb.PlanBuilder().plan(pb.virtual(["c"], [alias], [[pb.lit(5, pb.i16())]]), ["c"])
    plan.type_aliases.add(type_alias_anchor=3, type=pb.i16())
    got, simple = _one(spark, plan)
    assert (got, simple) == (5, "smallint")


# --- the doc ---------------------------------------------------------------------------------------------------


@pytest.mark.unit
def test_every_type_kind_is_mapped_or_rejected():
    assert types_doc.unaccounted() == []


@pytest.mark.unit
def test_types_doc_is_current():
    assert types_doc.DOC.read_text() == types_doc.render(), "regenerate with: .venv/bin/python tools/types_doc.py"


@pytest.mark.spark
def test_explain_names_user_defined_types(spark):
    """`explain` shows a user-defined type by its declared name (`u!u8`), not by its anchor number."""
    from substrait_spark.consumer.analysis.explain import plan_tree_of

    u8 = unsigned_type("u!u8", True)
    plan = _plan(pb.virtual(["c"], [u8], [[literal_expr("'7'", "u!u8")]]), ["c"])
    declare_types(plan)
    assert "u!u8" in plan_tree_of(plan)
