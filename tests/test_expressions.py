"""Expressions with hand-built plans, checked against the same expressions in Spark SQL (or known values).

Literals of every type Spark can hold, nested field access, casts and their failure behaviour, if-then,
switch, IN lists (three-valued), multi-column IN lists, nested constructors, enum arguments, integer
division, date and timestamp arithmetic with interval literals.
"""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from plan_builder import (
    PlanBuilder,
    SetRel,
    access,
    binary,
    boolean,
    cast,
    date,
    decimal_,
    field,
    fixed_char,
    fp32,
    fp64,
    i8,
    i16,
    i32,
    i64,
    if_then,
    in_list,
    interval_day,
    interval_year,
    list_,
    lit,
    make_list,
    make_map,
    make_struct,
    map_,
    multi_in_list,
    named,
    null,
    precision_timestamp,
    precision_timestamp_tz,
    project,
    run,
    seg_elem,
    seg_field,
    seg_key,
    set_,
    string,
    struct,
    switch,
    timestamp,
    tuples,
    varchar,
    view,
    virtual,
)

pytestmark = [pytest.mark.spark]

T_ROWS = [
    (1, "a", dt.date(2020, 1, 31)),
    (2, "b", dt.date(2021, 6, 15)),
    (3, None, dt.date(1999, 12, 31)),
    (None, "n", None),
    (7, "abc", dt.date(2024, 2, 29)),
    (-7, "b", dt.date(1970, 1, 1)),
]
C_ROWS = [("42",), ("abc",), (None,), ("-5",)]


@pytest.fixture(scope="module", autouse=True)
def tables(spark):
    view(spark, "ex_t", "k int, s string, d date", T_ROWS)
    view(spark, "ex_c", "s string", C_ROWS)
    view(spark, "ex_ok", "s string", [("42",), (None,), ("-5",)])
    yield
    for name in ("ex_t", "ex_c", "ex_ok"):
        spark.catalog.dropTempView(name)


def t_read():
    return named("ex_t", ["k", "s", "d"], [i32(), string(), date()])


def one_row():
    return virtual(["dummy"], [i32()], [(0,)])


def only_new(n_input: int, n_new: int) -> list[int]:
    """An emit keeping only the projected expressions."""
    return list(range(n_input, n_input + n_new))


def project_exprs(spark, source, n_input, exprs, names):
    rel = project(source, *exprs, emit=only_new(n_input, len(exprs)))
    return run(PlanBuilder().plan(rel, names), spark)


def _b_project(b, spark, source, n_input, exprs, names):
    rel = project(source, *exprs, emit=only_new(n_input, len(exprs)))
    return run(b.plan(rel, names), spark)


# --------------------------------------------------------------------------------------------------
# Literals
# --------------------------------------------------------------------------------------------------

TS = dt.datetime(2021, 3, 4, 5, 6, 7, 123456)
LITERALS = [
    # (name, literal expression, the same value in Spark SQL)
    ("bool_true", lit(True), "TRUE"),
    ("bool_false", lit(False, boolean(nullable=False)), "FALSE"),
    ("i8", lit(-5, i8()), "CAST(-5 AS TINYINT)"),
    ("i16", lit(-300, i16()), "CAST(-300 AS SMALLINT)"),
    ("i32", lit(123456, i32()), "123456"),
    ("i64", lit(2**40 + 1, i64()), "CAST(1099511627777 AS BIGINT)"),
    ("fp32", lit(1.5, fp32()), "CAST(1.5 AS FLOAT)"),
    ("fp64", lit(-2.25, fp64()), "CAST(-2.25 AS DOUBLE)"),
    ("decimal", lit(decimal.Decimal("123.45"), decimal_(10, 2)), "CAST(123.45 AS DECIMAL(10,2))"),
    ("decimal_neg", lit(decimal.Decimal("-0.005"), decimal_(5, 3)), "CAST(-0.005 AS DECIMAL(5,3))"),
    (
        "decimal_38",
        lit(decimal.Decimal("12345678901234567890.123456789012345678"), decimal_(38, 18)),
        "CAST('12345678901234567890.123456789012345678' AS DECIMAL(38,18))",
    ),
    ("date", lit(dt.date(2020, 2, 29)), "DATE'2020-02-29'"),
    ("date_before_epoch", lit(dt.date(1960, 7, 1)), "DATE'1960-07-01'"),
    ("timestamp", lit(TS, timestamp()), "TIMESTAMP_NTZ'2021-03-04 05:06:07.123456'"),
    ("precision_timestamp", lit(TS, precision_timestamp()), "TIMESTAMP_NTZ'2021-03-04 05:06:07.123456'"),
    ("timestamp_tz", lit(TS, precision_timestamp_tz()), "TIMESTAMP_LTZ'2021-03-04 05:06:07.123456'"),
    (
        "interval_day",
        lit(dt.timedelta(days=3, hours=4, microseconds=5), interval_day()),
        "INTERVAL '3 04:00:00.000005' DAY TO SECOND",
    ),
    ("interval_day_whole", lit(dt.timedelta(days=90), interval_day()), "INTERVAL '90' DAY"),
    ("interval_day_negative", lit(dt.timedelta(hours=-36), interval_day()), "INTERVAL '-1 12:00:00' DAY TO SECOND"),
    ("string", lit("héllo 'q'"), "'héllo \\'q\\''"),
    ("varchar", lit("abc", varchar(10)), "'abc'"),
    ("fixed_char", lit("xyz", fixed_char(3)), "'xyz'"),
    ("binary", lit(b"\x00\xff\x10", binary()), "X'00FF10'"),
    ("null_i32", null(i32()), "CAST(NULL AS INT)"),
    ("null_string", null(string()), "CAST(NULL AS STRING)"),
    ("null_date", null(date()), "CAST(NULL AS DATE)"),
    ("null_decimal", null(decimal_(12, 4)), "CAST(NULL AS DECIMAL(12,4))"),
    ("list", lit([1, 2, 3], list_(i32())), "array(1, 2, 3)"),
    ("list_with_null", lit(["a", None], list_(string())), "array('a', NULL)"),
    ("empty_list", lit([], list_(i64())), "CAST(array() AS ARRAY<BIGINT>)"),
    ("map", lit({"a": 1, "b": 2}, map_(string(), i32())), "map('a', 1, 'b', 2)"),
    ("empty_map", lit({}, map_(string(), fp64())), "CAST(map() AS MAP<STRING, DOUBLE>)"),
    ("list_of_lists", lit([[1], [2, 3]], list_(list_(i16()))), "array(array(1S), array(2S, 3S))"),
]


def _sql_types(df):
    return [f.dataType.simpleString() for f in df.schema.fields]


def test_literals(spark):
    names = [x[0] for x in LITERALS]
    got = project_exprs(spark, one_row(), 1, [x[1] for x in LITERALS], names)
    want = spark.sql("SELECT " + ", ".join(f"{x[2]} AS {x[0]}" for x in LITERALS))
    g, w = tuples(got.collect())[0], tuples(want.collect())[0]
    bad = [(n, a, b) for n, a, b in zip(names, g, w, strict=True) if a != b or type(a) is not type(b)]
    assert not bad, f"literal values differ (name, got, want): {bad}"
    types = [(n, a, b) for n, a, b in zip(names, _sql_types(got), _sql_types(want), strict=True) if a != b]
    assert not types, f"literal types differ (name, got, want): {types}"


def test_interval_year_literal(spark):
    # PySpark 3.5 cannot collect year-month intervals: compare them as strings and as month counts.
    b = PlanBuilder()
    iv = lit((1, 2), interval_year())
    neg = lit((-2, -3), interval_year())
    exprs = [cast(iv, string()), cast(neg, string())]
    got = _b_project(b, spark, one_row(), 1, exprs, ["a", "b"])
    want = spark.sql(
        "SELECT CAST(INTERVAL '1-2' YEAR TO MONTH AS STRING), CAST(INTERVAL '-2-3' YEAR TO MONTH AS STRING)"
    )
    assert tuples(got.collect()) == tuples(want.collect())


def test_struct_literal_gets_the_plan_names(spark):
    b = PlanBuilder()
    st = lit((1, "x", [True]), struct(i32(), string(), list_(boolean())))
    got = _b_project(b, spark, one_row(), 1, [st], ["st", "a", "b", "c"])
    want = spark.sql("SELECT named_struct('a', 1, 'b', 'x', 'c', array(true)) AS st")
    assert _sql_types(got) == _sql_types(want)  # names and types (the literal's fields are nullable)
    assert tuples(got.collect()) == tuples(want.collect())


def test_virtual_table_of_many_types(spark):
    types = [i8(), i64(), fp64(), decimal_(9, 3), date(), precision_timestamp(), string(), binary()]
    rows = [
        (1, 2**50, 0.5, decimal.Decimal("1.250"), dt.date(2000, 1, 1), TS, "x", b"\x01"),
        (None, None, None, None, None, None, None, None),
        (-128, -(2**63), -1e300, decimal.Decimal("-999999.999"), dt.date(1, 1, 1), dt.datetime(1900, 1, 1), "", b""),
    ]
    rel = virtual([f"c{i}" for i in range(len(types))], types, rows)
    got = run(PlanBuilder().plan(rel, [f"c{i}" for i in range(len(types))]), spark)
    assert tuples(got.collect()) == [tuple(bytearray(v) if isinstance(v, bytes) else v for v in r) for r in rows]


# --------------------------------------------------------------------------------------------------
# Nested field access
# --------------------------------------------------------------------------------------------------

NESTED_TYPES = [
    struct(i32(), string()),
    list_(i32()),
    map_(string(), i32()),
    list_(struct(string(), i64())),
    struct(struct(i32(), list_(string()))),
]
NESTED_ROWS = [
    ((1, "x"), [10, 20, 30], {"a": 1, "b": 2}, [("p", 1), ("q", 2)], ((5, ["u", "v"]),)),
    ((None, "y"), [], {}, [], ((None, []),)),
    (None, None, None, None, None),
]


def nested_read():
    return virtual(["st", "li", "mp", "ls", "deep"], NESTED_TYPES, NESTED_ROWS)


def test_nested_field_access(spark):
    exprs = [
        field(0, seg_field(1)),  # st.f1
        field(0, seg_field(0)),  # st.f0
        field(1, seg_elem(1)),  # li[1] (zero-based)
        field(1, seg_elem(5)),  # out of range: NULL
        field(2, seg_key("b")),  # mp['b']
        field(2, seg_key("zz")),  # missing key: NULL
        field(3, seg_elem(1), seg_field(0)),  # ls[1].f0
        field(4, seg_field(0), seg_field(1), seg_elem(1)),  # deep.f0.f1[1]
    ]
    got = project_exprs(spark, nested_read(), 5, exprs, list("abcdefgh"))
    assert tuples(got.collect()) == [
        ("x", 1, 20, None, 2, None, "q", "v"),
        ("y", None, None, None, None, None, None, None),
        (None,) * 8,
    ]


def test_access_into_an_expression_value(spark):
    b = PlanBuilder()
    built = make_struct(field(0), b.call("add", field(0), lit(1), out=i32()))
    exprs = [access(built, seg_field(1)), access(make_list(field(1), lit("z")), seg_elem(1))]
    got = _b_project(b, spark, t_read(), 3, exprs, ["k1", "z"])
    want = spark.sql("SELECT k + 1, 'z' FROM ex_t")
    assert sorted(tuples(got.collect()), key=repr) == sorted(tuples(want.collect()), key=repr)


# --------------------------------------------------------------------------------------------------
# Cast
# --------------------------------------------------------------------------------------------------


def c_read(name="ex_c"):
    return named(name, ["s"], [string()])


def test_cast_return_null(spark):
    got = project_exprs(spark, c_read(), 1, [cast(field(0), i32())], ["v"])
    want = spark.sql("SELECT try_cast(s AS INT) FROM ex_c")
    assert sorted(tuples(got.collect()), key=repr) == sorted(tuples(want.collect()), key=repr)
    assert sorted(r[0] for r in got.collect() if r[0] is not None) == [-5, 42]


def test_cast_throw_exception_on_bad_string(spark):
    df = project_exprs(spark, c_read(), 1, [cast(field(0), i32(), throw=True)], ["v"])
    with pytest.raises(Exception, match="cast"):
        df.collect()


def test_cast_throw_exception_passes_good_values_and_nulls(spark):
    df = project_exprs(spark, c_read("ex_ok"), 1, [cast(field(0), i32(), throw=True)], ["v"])
    assert sorted(tuples(df.collect()), key=repr) == sorted([(42,), (None,), (-5,)], key=repr)


def test_cast_throw_exception_on_a_literal(spark):
    with pytest.raises(Exception, match="cast"):
        project_exprs(spark, one_row(), 1, [cast(lit("abc"), i32(), throw=True)], ["v"]).collect()


@pytest.mark.parametrize(
    "value, source, target, ok",
    [
        (300, i32(), i8(), None),
        (-129, i32(), i8(), None),
        (127, i32(), i8(), 127),
        (70000, i32(), i16(), None),
        (3_000_000_000, i64(), i32(), None),
        (-2_147_483_648, i64(), i32(), -2_147_483_648),
        (1e20, fp64(), i32(), None),
        (-2.9, fp64(), i32(), -2),
        (float("nan"), fp64(), i64(), None),
        (decimal.Decimal("1e20"), decimal_(38, 0), i32(), None),
        (decimal.Decimal("-12.75"), decimal_(10, 2), i16(), -12),
    ],
    ids=lambda v: repr(v) if not hasattr(v, "WhichOneof") else v.WhichOneof("kind"),
)
def test_cast_numeric_overflow(spark, value, source, target, ok):
    """Out-of-range numeric casts fail (NULL or an error), never wrap around as Spark's legacy cast does."""
    src = virtual(["v"], [source], [(value,)])
    got = project_exprs(spark, src, 1, [cast(field(0), target)], ["v"]).collect()
    assert tuples(got) == [(ok,)]
    thrown = project_exprs(spark, src, 1, [cast(field(0), target, throw=True)], ["v"])
    if ok is None:
        with pytest.raises(Exception, match="cast"):
            thrown.collect()
    else:
        assert tuples(thrown.collect()) == [(ok,)]


@pytest.mark.parametrize(
    "value, source, target, checked",
    [
        (-2_147_483_648, i32(), decimal_(12, 2), False),  # every int has 10 integer digits at most
        (9_223_372_036_854_775_807, i64(), decimal_(21, 2), False),
        (12345, i32(), decimal_(5, 2), True),  # 12345 has 5 integer digits, decimal(5,2) holds 3
    ],
    ids=["i32-decimal(12,2)", "i64-decimal(21,2)", "i32-decimal(5,2)"],
)
def test_integer_to_decimal_is_checked_only_where_a_value_can_overflow(spark, value, source, target, checked):
    """A THROW_EXCEPTION cast that every value survives is Spark's plain cast (Spark SQL's plan: TPC-DS q18's
    `cast(cs_quantity as decimal(12,2))`); one that can overflow fails on the value that does."""
    src = virtual(["v"], [source], [(value,)])
    thrown = project_exprs(spark, src, 1, [cast(field(0), target, throw=True)], ["v"])
    assert ("raise_error" in thrown._jdf.queryExecution().optimizedPlan().toString()) is checked
    if checked:
        with pytest.raises(Exception, match="cast"):
            thrown.collect()
    else:
        assert tuples(thrown.collect()) == [(decimal.Decimal(value),)]


@pytest.mark.parametrize(
    "value, source, target, checked, want",
    [
        # 1.2 * a decimal(7,2) is under 1.2e5: it fits decimal(30,15)'s 15 integer digits, whatever the value
        (decimal.Decimal("99999.99"), decimal_(7, 2), decimal_(30, 15), False, decimal.Decimal("119999.988")),
        # 1.2 * a decimal(21,6) can pass 10^15: checked, and this one does
        (decimal.Decimal("999999999999999"), decimal_(21, 6), decimal_(17, 2), True, None),
        (1e20, fp64(), decimal_(30, 15), True, None),  # a float column has no bound
    ],
    ids=["bounded", "can-overflow", "float-column"],
)
def test_fp64_product_cast_to_decimal_is_checked_only_where_it_can_overflow(
    spark, value, source, target, checked, want
):
    """DataFusion's `CAST(1.2 * CAST(x AS DOUBLE) AS DECIMAL(30,15))` (TPC-DS q01) with THROW_EXCEPTION: where the
    operands' types bound the product within the target, Spark's plain cast, as in Spark SQL's plan; else the
    check, which fails on the value that does not fit."""
    b = PlanBuilder()
    product = b.call("multiply:fp64_fp64", cast(field(0), fp64()), lit(1.2, fp64()), out=fp64())
    thrown = _b_project(b, spark, virtual(["v"], [source], [(value,)]), 1, [cast(product, target, throw=True)], ["v"])
    assert ("raise_error" in thrown._jdf.queryExecution().optimizedPlan().toString()) is checked
    if checked:
        with pytest.raises(Exception, match="cast"):
            thrown.collect()
    else:
        assert abs(tuples(thrown.collect())[0][0] - want) < decimal.Decimal("1e-9")


def test_cast_of_a_union_column_holding_an_unbounded_float_stays_checked(spark):
    """A double column a projection computed from an integer is bounded by it (DataFusion's `CAST(avg(x) AS
    DOUBLE)`, TPC-DS q06: `1.2 * d` cast to decimal(30,15) is not checked, tests/test_plan_shape.py). A UNION's
    column, under its first input's name, holds the other inputs' values too: with an unbounded double there, the
    cast stays checked and fails on the value that does not fit."""
    b = PlanBuilder()
    widened = project(virtual(["k"], [i32()], [(7,)]), cast(field(0), fp64()), emit=[1])
    rows = set_(SetRel.SET_OP_UNION_ALL, widened, virtual(["d"], [fp64()], [(1e20,)]))
    product = b.call("multiply:fp64_fp64", field(0), lit(1.2, fp64()), out=fp64())
    df = _b_project(b, spark, rows, 1, [cast(product, decimal_(30, 15), throw=True)], ["v"])
    with pytest.raises(Exception, match="cast"):  # not a NULL: Spark's own cast's answer to an overflow
        df.collect()


def test_cast_string_to_date_failure(spark):
    src = virtual(["s"], [string()], [("2020-02-30x",), ("2021-06-15",)])
    got = project_exprs(spark, src, 1, [cast(field(0), date())], ["d"])
    assert tuples(got.collect()) == [(None,), (dt.date(2021, 6, 15),)]
    with pytest.raises(Exception, match="cast"):
        project_exprs(spark, src, 1, [cast(field(0), date(), throw=True)], ["d"]).collect()


def test_cast_to_string_and_date(spark):
    exprs = [cast(field(0), string()), cast(field(2), string()), cast(cast(field(2), string()), date())]
    got = project_exprs(spark, t_read(), 3, exprs, ["a", "b", "c"])
    want = spark.sql("SELECT CAST(k AS STRING), CAST(d AS STRING), d FROM ex_t")
    assert sorted(tuples(got.collect()), key=repr) == sorted(tuples(want.collect()), key=repr)


# --------------------------------------------------------------------------------------------------
# Conditionals and lists
# --------------------------------------------------------------------------------------------------


def _same_as_sql(spark, b, exprs, select, names=None):
    names = names or [f"c{i}" for i in range(len(exprs))]
    got = _b_project(b, spark, t_read(), 3, exprs, names)
    want = spark.sql(f"SELECT {select} FROM ex_t")
    assert sorted(tuples(got.collect()), key=repr) == sorted(tuples(want.collect()), key=repr)
    return got


def test_if_then(spark):
    b = PlanBuilder()
    e1 = if_then(
        [
            (b.call("gt", field(0), lit(2), out=boolean()), lit("big")),
            (b.call("is_null", field(0), out=boolean()), lit("none")),
        ],
        lit("small"),
    )
    e2 = if_then([(b.eq(field(1), lit("b")), field(0))])  # no else: NULL
    _same_as_sql(
        spark,
        b,
        [e1, e2],
        "CASE WHEN k > 2 THEN 'big' WHEN k IS NULL THEN 'none' ELSE 'small' END, CASE WHEN s = 'b' THEN k END",
    )


def test_switch(spark):
    b = PlanBuilder()
    e1 = switch(field(0), [(1, lit("one")), (2, lit("two"))], lit("other"), type_=i32())
    e2 = switch(field(1), [("a", lit(10)), ("n", lit(20))], type_=string())
    _same_as_sql(
        spark,
        b,
        [e1, e2],
        "CASE k WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'other' END, CASE s WHEN 'a' THEN 10 WHEN 'n' THEN 20 END",
    )


def test_singular_or_list_three_valued(spark):
    b = PlanBuilder()
    exprs = [
        in_list(field(0), lit(1), lit(3)),
        in_list(field(0), lit(1), lit(3), null(i32())),
        b.not_(in_list(field(0), lit(1), null(i32()))),
        in_list(field(1), lit("a"), field(1)),
    ]
    got = _same_as_sql(spark, b, exprs, "k IN (1, 3), k IN (1, 3, NULL), NOT (k IN (1, NULL)), s IN ('a', s)")
    # x NOT IN (1, NULL) is never TRUE.
    assert all(r[2] is not True for r in got.collect())


def test_not_in_list_with_null_filters_everything(spark):
    from plan_builder import filter_

    b = PlanBuilder()
    rel = filter_(t_read(), b.not_(in_list(field(0), lit(1), null(i32()))))
    assert run(b.plan(rel, ["k", "s", "d"]), spark).collect() == []


def test_multi_or_list(spark):
    b = PlanBuilder()
    e = multi_in_list([field(0), field(1)], [lit(1), lit("a")], [lit(2), null(string())], [lit(7), lit("abc")])
    _same_as_sql(spark, b, [e], "(k = 1 AND s = 'a') OR (k = 2 AND s = NULL) OR (k = 7 AND s = 'abc')")


def test_nested_constructors(spark):
    b = PlanBuilder()
    exprs = [
        make_struct(field(0), field(1)),
        make_list(field(0), lit(5), null(i32())),
        make_map((lit("k"), field(0)), (lit("two"), lit(2))),
        make_list(make_struct(field(1))),
    ]
    names = ["st", "a", "b", "li", "mp", "ls", "x"]
    got = _b_project(b, spark, t_read(), 3, exprs, names)
    want = spark.sql(
        "SELECT named_struct('a', k, 'b', s) st, array(k, 5, NULL) li, map('k', k, 'two', 2) mp, "
        "array(named_struct('x', s)) ls FROM ex_t"
    )
    assert got.columns == want.columns
    assert sorted(tuples(got.collect()), key=repr) == sorted(tuples(want.collect()), key=repr)


# --------------------------------------------------------------------------------------------------
# Functions: enum arguments, integer division, date arithmetic
# --------------------------------------------------------------------------------------------------


def test_extract_with_enum_argument(spark):
    b = PlanBuilder()
    exprs = [b.call("extract", part, field(2), out=i64()) for part in ("YEAR", "MONTH", "DAY", "QUARTER")]
    got = _same_as_sql(
        spark,
        b,
        exprs,
        "CAST(year(d) AS BIGINT), CAST(month(d) AS BIGINT), CAST(day(d) AS BIGINT), CAST(quarter(d) AS BIGINT)",
    )
    assert all(t == "bigint" for t in _sql_types(got))


def test_integer_division_truncates_toward_zero(spark):
    b = PlanBuilder()
    exprs = [
        b.call("divide:i32_i32", lit(7), lit(-2), out=i32()),
        b.call("divide:i32_i32", lit(-7), lit(2), out=i32()),
        b.call("divide:i32_i32", lit(7), lit(2), out=i32()),
        b.call("divide:i64_i64", lit(-9, i64()), lit(4, i64()), out=i64()),
    ]
    got = _b_project(b, spark, one_row(), 1, exprs, list("abcd"))
    assert tuples(got.collect()) == [(-3, -3, 3, -2)]
    assert _sql_types(got) == ["int", "int", "int", "bigint"]


def test_integer_division_of_columns(spark):
    b = PlanBuilder()
    e = b.call("divide:i32_i32", field(0), lit(-2), out=i32())
    got = _b_project(b, spark, t_read(), 3, [field(0), e], ["k", "q"])
    for k, q in got.collect():
        assert q == (None if k is None else int(k / -2))


OVERFLOW_CASES = [
    # (function, a, b, type, SILENT result, SATURATE result); ERROR must fail whenever the two differ
    ("add", 2**31 - 1, 1, i32, -(2**31), 2**31 - 1),
    ("subtract", -(2**63), 1, i64, 2**63 - 1, -(2**63)),
    ("multiply", 2**62, 4, i64, 0, 2**63 - 1),
    ("multiply", -100, 2, i8, 56, -128),
    ("add", 2, 3, i32, 5, 5),
    ("multiply", None, 3, i16, None, None),
]


@pytest.mark.parametrize("fn, a, b, t, silent, saturate", OVERFLOW_CASES, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_integer_overflow_option(spark, fn, a, b, t, silent, saturate):
    src = virtual(["a", "b"], [t(), t()], [(a, b)])
    sig = {"i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64"}[t().WhichOneof("kind")]
    for mode, want in (("SILENT", silent), ("SATURATE", saturate), ("ERROR", saturate)):
        b_ = PlanBuilder()
        e = b_.call(f"{fn}:{sig}_{sig}", field(0), field(1), out=t(), options={"overflow": [mode]})
        df = _b_project(b_, spark, src, 2, [e], ["v"])
        if mode == "ERROR" and silent != saturate:
            with pytest.raises(Exception, match="overflow"):
                df.collect()
        else:
            assert tuples(df.collect()) == [(want,)], mode


def test_date_plus_and_minus_interval_literals(spark):
    b = PlanBuilder()
    exprs = [
        b.call("add", field(2), lit((0, 1), interval_year()), out=date()),
        b.call("subtract", field(2), lit(dt.timedelta(days=90), interval_day()), out=date()),
        b.call("add", lit(dt.timedelta(days=1), interval_day()), field(2), out=date()),
        b.call("subtract", field(2), lit((1, 0), interval_year()), out=date()),
    ]
    _same_as_sql(
        spark,
        b,
        exprs,
        "d + INTERVAL 1 MONTH, d - INTERVAL 90 DAYS, d + INTERVAL 1 DAY, d - INTERVAL 1 YEAR",
    )


def test_timestamp_plus_interval_with_time_part(spark):
    b = PlanBuilder()
    ts = cast(field(2), precision_timestamp())
    exprs = [
        b.call("add", ts, lit(dt.timedelta(hours=5, minutes=30), interval_day()), out=precision_timestamp()),
        b.call("subtract", ts, lit(dt.timedelta(days=1, seconds=1), interval_day()), out=precision_timestamp()),
    ]
    _same_as_sql(
        spark,
        b,
        exprs,
        "CAST(d AS TIMESTAMP_NTZ) + INTERVAL '5:30' HOUR TO MINUTE, "
        "CAST(d AS TIMESTAMP_NTZ) - INTERVAL '1 00:00:01' DAY TO SECOND",
    )


def test_arithmetic_and_comparison_with_nulls(spark):
    b = PlanBuilder()
    exprs = [
        b.call("add", field(0), lit(1), out=i32()),
        b.call("multiply", field(0), field(0), out=i32()),
        b.call("gt", field(0), lit(1), out=boolean()),
        b.and_(b.call("gt", field(0), lit(1), out=boolean()), b.eq(field(1), lit("b"))),
        b.or_(b.call("is_null", field(0), out=boolean()), b.eq(field(1), lit("b"))),
        b.call("coalesce", field(1), lit("?"), out=string()),
    ]
    _same_as_sql(spark, b, exprs, "k + 1, k * k, k > 1, k > 1 AND s = 'b', k IS NULL OR s = 'b', coalesce(s, '?')")
