"""Lateral joins that Spark 3.5's DataFrame API cannot express, checked in every configuration (`make test` runs
this file on classic 3.5, classic 4.x and Spark Connect from 4.x and 3.5 clients; tests/spark_modes.py).

On Spark 4 (a pyspark 4.x client) INNER and LEFT lateral joins whose right input reads the left row outside a
filter run as Spark's own `lateralJoin` with `Column.outer()` references: their result equals Spark SQL's
`JOIN LATERAL` over the same views. On 3.5 they are refused with a typed error naming where the left row is read,
and `validate` says exactly what `run` does in both.
"""

from __future__ import annotations

import pytest
from physical_builder import lateral_join, lateral_ref
from plan_builder import (
    JoinRel,
    PlanBuilder,
    assert_same_rows,
    boolean,
    field,
    filter_,
    i32,
    lit,
    named,
    project,
    run,
    string,
    views,
)
from spark_modes import spark_major
from substrait_spark.consumer.errors import UnsupportedFeatureError

pytestmark = [pytest.mark.spark]

J = JoinRel
TABLES = {
    "lat_l": ("k int, a string", [(1, "a"), (2, "b"), (2, "b2"), (3, "c"), (None, "n")]),
    "lat_r": ("k int, b string", [(2, "x"), (3, "y"), (3, "y2"), (4, "z"), (None, "m")]),
}


@pytest.fixture(scope="module", autouse=True)
def tables(spark):
    with views(spark, TABLES):
        yield


def tbl(name: str):
    return named(name, [c.split()[0] for c in TABLES[name][0].split(",")], [i32(), string()])


def _projection_reading_the_left_row(jt: int):
    # right: select r.k + l.k, r.b from lat_r r where r.k = l.k   (the left row read in the projection)
    b = PlanBuilder()
    right = filter_(tbl("lat_r"), b.eq(field(0), lateral_ref(0, anchor=2)))
    right = project(right, b.call("add", field(0), lateral_ref(0, anchor=2), out=i32()), emit=[2, 1])
    rel = lateral_join(tbl("lat_l"), right, jt, anchor=2)
    return b.plan(rel, ["k", "a", "s", "b"])


def _with_condition():
    # left join lateral (select r.b, r.k * l.k as p from lat_r r where r.k = l.k) on p > 4
    b = PlanBuilder()
    right = filter_(tbl("lat_r"), b.eq(field(0), lateral_ref(0, anchor=4)))
    right = project(right, b.call("multiply", field(0), lateral_ref(0, anchor=4), out=i32()), emit=[1, 2])
    cond = b.call("gt", field(3), lit(4), out=boolean())
    rel = lateral_join(tbl("lat_l"), right, J.JOIN_TYPE_LEFT, anchor=4, condition=cond)
    return b.plan(rel, ["k", "a", "b", "p"])


CASES = {
    "inner, left row in the projection": (
        _projection_reading_the_left_row(J.JOIN_TYPE_INNER),
        "select l.*, r.* from lat_l l join lateral (select r.k + l.k as s, r.b from lat_r r where r.k = l.k) r",
        "outside a filter",
    ),
    "left, left row in the projection": (
        _projection_reading_the_left_row(J.JOIN_TYPE_LEFT),
        "select l.*, r.* from lat_l l left join lateral (select r.k + l.k as s, r.b from lat_r r where r.k = l.k) r",
        "outside a filter",
    ),
    "left with a join condition": (
        _with_condition(),
        "select l.*, r.* from lat_l l left join lateral "
        "(select r.b, r.k * l.k as p from lat_r r where r.k = l.k) r on r.p > 4",
        "outside a filter",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_lateral_join_spark_35_cannot_express(spark, case):
    from substrait_spark.consumer.analysis.analyze import validate_plan

    plan, sql, refusal = CASES[case]
    findings = validate_plan(plan)
    if spark_major() >= 4:
        assert_same_rows(run(plan, spark), spark.sql(sql))
        assert findings == []
        return
    with pytest.raises(UnsupportedFeatureError, match=refusal) as err:
        run(plan, spark).collect()
    assert err.value.path.startswith("relations[0].root.input.lateral_join")
    assert [f.path for f in findings] == [err.value.path]
