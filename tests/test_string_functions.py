"""String functions with their options: each plan's result is checked against a hand-written Spark SQL query that
states the Substrait semantics (case folding, regex flags, trim character sets, negative starts)."""

from __future__ import annotations

import pytest
from plan_builder import PlanBuilder, field, i32, i64, list_, lit, named, project, run, string, tuples, view
from substrait_spark.consumer.errors import UnsupportedFeatureError

pytestmark = [pytest.mark.spark]

ROWS = [("Hello World",), ("a.b.c",), ("abcABC",), ("A\nc x",), (None,), ("ÉtÉ été",), ("xxabcxx",), ("😊a😊b",)]


@pytest.fixture(scope="module", autouse=True)
def strings_view(spark):
    view(spark, "str_t", "s string", ROWS)
    yield
    spark.catalog.dropTempView("str_t")


def _plan_vs_sql(spark, b: PlanBuilder, exprs, select: str):
    rel = project(named("str_t", ["s"], [string()]), *exprs, emit=list(range(1, 1 + len(exprs))))
    got = run(b.plan(rel, [f"c{i}" for i in range(len(exprs))]), spark)
    want = spark.sql(f"SELECT {select} FROM str_t")
    assert sorted(tuples(got.collect()), key=repr) == sorted(tuples(want.collect()), key=repr)
    return got


def _s():
    return field(0)


CI = {"case_sensitivity": ["CASE_INSENSITIVE"]}
CI_ASCII = {"case_sensitivity": ["CASE_INSENSITIVE_ASCII"]}


def test_case_insensitive_search_functions(spark):
    b = PlanBuilder()
    exprs = [
        b.call("contains", _s(), lit("ABC"), options=CI),
        b.call("starts_with", _s(), lit("hello"), options=CI),
        b.call("ends_with", _s(), lit("ÉTÉ"), options=CI),
        b.call("ends_with", _s(), lit("ÉTÉ"), options=CI_ASCII),  # é is not folded by the ASCII option
        b.call("strpos", _s(), lit("abc"), options=CI, out=i64()),
        b.call("count_substring", _s(), lit("abc"), options=CI, out=i64()),
        b.call("like", _s(), lit("%world"), options=CI),
        b.call("like", _s(), lit("%World")),  # case-sensitive by default
        b.call("like", _s(), lit("%TÉ"), options=CI_ASCII),
    ]
    got = _plan_vs_sql(
        spark,
        b,
        exprs,
        "contains(lower(s), 'abc'), startswith(lower(s), 'hello'), endswith(lower(s), 'été'),"
        " endswith(translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), 'ÉtÉ'),"
        " CAST(instr(lower(s), 'abc') AS BIGINT),"
        " CAST((length(s) - length(replace(lower(s), 'abc', ''))) / 3 AS BIGINT),"
        " lower(s) LIKE '%world', s LIKE '%World',"
        " translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') LIKE '%tÉ'",
    )
    assert [f.dataType.simpleString() for f in got.schema.fields][4:6] == ["bigint", "bigint"]


def test_regex_options_become_java_flags(spark):
    """case_sensitivity, multiline and dotall are Java's embedded (?iu), (?m), (?s) in front of the pattern."""
    b = PlanBuilder()
    opts = {"case_sensitivity": ["CASE_INSENSITIVE"], "dotall": ["DOTALL_ENABLED"], "multiline": ["MULTILINE_ENABLED"]}
    exprs = [
        b.call("regexp_replace", _s(), lit("a.c"), lit("<\\0>"), out=string(), options=opts),
        b.call("regexp_count_substring", _s(), lit("^[a-z]"), out=i64(), options=opts),
        b.call("regexp_match_substring", _s(), lit("(\\w)\\.(\\w)"), lit(1, i64()), lit(2, i64()), lit(2, i64())),
        b.call("regexp_string_split", _s(), lit("[.\\s]"), out=list_(string())),
    ]
    _plan_vs_sql(
        spark,
        b,
        exprs,
        "regexp_replace(s, '(?ius)a.c', '<$0>'), CAST(regexp_count(s, '(?ium)^[a-z]') AS BIGINT),"
        " try_element_at(regexp_extract_all(s, '(\\\\w)\\\\.(\\\\w)', 2), 2), split(s, '[.\\\\s]', -1)",
    )


def test_regexp_replace_backreference_and_position(spark):
    """`\\1` in the replacement is group 1 (the spec's numbered backreference), not a literal '1'."""
    b = PlanBuilder()
    exprs = [
        b.call("regexp_replace", _s(), lit("(\\w)(\\w)"), lit("\\2\\1"), out=string()),
        b.call("regexp_replace", _s(), lit("x"), lit("\\$"), lit(3, i64()), lit(0, i64()), out=string()),
    ]
    _plan_vs_sql(spark, b, exprs, "regexp_replace(s, '(\\\\w)(\\\\w)', '$2$1'), regexp_replace(s, 'x', '\\\\$', 3)")


def test_trim_with_character_set_and_substring_negative_start(spark):
    b = PlanBuilder()
    left_of = {"negative_start": ["LEFT_OF_BEGINNING"]}
    exprs = [
        b.call("ltrim", _s(), lit("xa")),
        b.call("rtrim", _s(), lit("xc")),
        b.call("trim", _s(), lit("x")),
        b.call("substring", _s(), lit(-2, i32()), lit(2, i32())),  # WRAP_FROM_END is the default
        b.call("substring", _s(), lit(-1, i32()), lit(4, i32()), options=left_of),
        b.call("string_split", _s(), lit("."), out=list_(string())),
    ]
    _plan_vs_sql(
        spark,
        b,
        exprs,
        "trim(LEADING 'xa' FROM s), trim(TRAILING 'xc' FROM s), trim(BOTH 'x' FROM s), substr(s, -2, 2),"
        " substr(s, 1, 2), split(s, '\\\\.', -1)",
    )


def test_regexp_replace_and_strpos_of_the_nth_occurrence(spark):
    """Occurrence n picks the n-th match of the same find sequence (empty matches included); positions count
    characters, so an emoji (two UTF-16 units in Java) is one."""
    b = PlanBuilder()
    exprs = [
        b.call("regexp_replace", _s(), lit("([a-c])"), lit("<\\1>"), lit(1, i64()), lit(2, i64()), out=string()),
        b.call("regexp_replace", _s(), lit("x*"), lit("-"), lit(1, i64()), lit(2, i64()), out=string()),
        b.call("regexp_strpos", _s(), lit("[a-c]"), lit(1, i64()), lit(2, i64()), out=i64()),
        b.call("regexp_replace", _s(), lit("[a-c]"), lit("_"), lit(3, i64()), lit(0, i64()), out=string()),
    ]
    rel = project(named("str_t", ["s"], [string()]), *exprs, emit=[0, 1, 2, 3, 4])
    got = {r[0]: tuple(r[1:]) for r in run(b.plan(rel, ["s", "r", "x", "p", "all"]), spark).collect()}
    assert got["abcABC"] == ("a<b>cABC", "a-bcABC", 2, "ab_ABC")
    assert got["xxabcxx"] == ("xxa<b>cxx", "xx-abcxx", 4, "xx___xx")
    assert got["😊a😊b"] == ("😊a😊<b>", "😊-a😊b", 4, "😊a😊_")
    assert got["Hello World"] == ("Hello World", "H-ello World", 0, "Hello World")
    assert got[None] == (None, None, None, None)


def test_replacing_one_occurrence_needs_a_literal_replacement(spark):
    b = PlanBuilder()
    e = b.call("regexp_replace", _s(), lit("a"), _s(), lit(1, i64()), lit(2, i64()), out=string())
    rel = project(named("str_t", ["s"], [string()]), e, emit=[1])
    with pytest.raises(UnsupportedFeatureError, match="literal replacement"):
        run(b.plan(rel, ["c"]), spark)
