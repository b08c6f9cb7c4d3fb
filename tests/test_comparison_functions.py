"""least/greatest: Substrait's are NULL when any argument is NULL; the `_skip_null` variants (and Spark's own
least/greatest) ignore NULLs. Checked against Spark SQL that states each meaning."""

from __future__ import annotations

import pytest
from plan_builder import PlanBuilder, field, i32, named, project, run, tuples, view

pytestmark = [pytest.mark.spark]

ROWS = [(1, 5, 3), (None, 2, 7), (None, None, None), (4, None, 0)]


@pytest.fixture(scope="module", autouse=True)
def ints_view(spark):
    view(spark, "cmp_t", "a int, b int, c int", ROWS)
    yield
    spark.catalog.dropTempView("cmp_t")


def test_least_greatest_null_handling(spark):
    b = PlanBuilder()
    args = [field(0), field(1), field(2)]
    exprs = [b.call(fn, *args, out=i32()) for fn in ("least", "greatest", "least_skip_null", "greatest_skip_null")]
    rel = project(named("cmp_t", ["a", "b", "c"], [i32(), i32(), i32()]), *exprs, emit=[3, 4, 5, 6])
    got = run(b.plan(rel, ["l", "g", "ls", "gs"]), spark)
    any_null = "a IS NULL OR b IS NULL OR c IS NULL"
    want = spark.sql(
        f"SELECT IF({any_null}, NULL, least(a, b, c)), IF({any_null}, NULL, greatest(a, b, c)),"
        " least(a, b, c), greatest(a, b, c) FROM cmp_t"
    )
    assert sorted(tuples(got.collect()), key=repr) == sorted(tuples(want.collect()), key=repr)
    assert (1, 5, 1, 5) in tuples(got.collect())
    assert (None, None, 0, 4) in tuples(got.collect())
