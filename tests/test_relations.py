"""Relations with hand-built plans, checked against Spark SQL over the same temp views (or a Python oracle).

Joins (all twelve types, post-join filters, self joins), aggregates (grouping sets, measure filters,
DISTINCT), sorts, fetches, set operations (multiset semantics over three inputs), ReferenceRel and emit.
"""

from __future__ import annotations

from collections import Counter
from itertools import groupby

import pytest
from plan_builder import (
    ASC_NULLS_FIRST,
    ASC_NULLS_LAST,
    CLUSTERED,
    DESC_NULLS_FIRST,
    DESC_NULLS_LAST,
    JoinRel,
    PlanBuilder,
    SetRel,
    aggregate,
    assert_same_rows,
    boolean,
    cross,
    fetch,
    field,
    filter_,
    fp64,
    i32,
    i64,
    join,
    lit,
    measure,
    named,
    null,
    project,
    reference,
    run,
    set_,
    sort,
    string,
    tuples,
    view,
    views,
    virtual,
    with_emit,
)

pytestmark = [pytest.mark.spark]

L_ROWS = [(1, "a"), (2, "b"), (2, "b2"), (3, "c"), (None, "n")]
R_ROWS = [(2, "x"), (3, "y"), (3, "y2"), (4, "z"), (None, "m")]
RU_ROWS = [(2, "x"), (3, "y"), (4, "z"), (None, "m")]  # unique keys
RN_ROWS = [(2, "x"), (3, "y"), (4, "z")]  # no NULL keys
G_ROWS = [("a", 1, 10), ("a", 1, 20), ("a", 2, None), ("b", 1, 5), ("b", 3, 5), (None, 1, 7), (None, None, None)]
S_ROWS = [(3, "c"), (1, "a"), (None, "n"), (2, "b"), (1, "a2"), (None, "n2"), (5, "e"), (2, "b2")]

TABLES = {
    "rel_l": ("k int, a string", L_ROWS),
    "rel_r": ("k int, b string", R_ROWS),
    "rel_ru": ("k int, b string", RU_ROWS),
    "rel_rn": ("k int, b string", RN_ROWS),
    "rel_e": ("k int, b string", []),
    "rel_g": ("g1 string, g2 int, x int", G_ROWS),
    "rel_s": ("k int, s string", S_ROWS),
}


@pytest.fixture(scope="module", autouse=True)
def tables(spark):
    with views(spark, TABLES):
        yield


def tbl(name: str):
    """A NamedTable read of one of the module's views."""
    ddl = TABLES[name][0]
    cols = [c.split() for c in ddl.split(",")]
    types = {"int": i32, "string": string}
    return named(name, [c[0] for c in cols], [types[c[1]]() for c in cols])


def kv(name: str) -> list[tuple]:
    return list(TABLES[name][1])


# --------------------------------------------------------------------------------------------------
# Joins
# --------------------------------------------------------------------------------------------------

J = JoinRel
SPARK_JOINS = {
    J.JOIN_TYPE_INNER: "select l.*, r.* from rel_l l join rel_r r on {c}",
    J.JOIN_TYPE_OUTER: "select l.*, r.* from rel_l l full outer join rel_r r on {c}",
    J.JOIN_TYPE_LEFT: "select l.*, r.* from rel_l l left join rel_r r on {c}",
    J.JOIN_TYPE_RIGHT: "select l.*, r.* from rel_l l right join rel_r r on {c}",
    J.JOIN_TYPE_LEFT_SEMI: "select l.* from rel_l l left semi join rel_r r on {c}",
    J.JOIN_TYPE_LEFT_ANTI: "select l.* from rel_l l left anti join rel_r r on {c}",
    J.JOIN_TYPE_RIGHT_SEMI: "select r.* from rel_r r left semi join rel_l l on {c}",
    J.JOIN_TYPE_RIGHT_ANTI: "select r.* from rel_r r left anti join rel_l l on {c}",
}
CONDITIONS = {"eq": ("equal", "l.k = r.k"), "lt": ("lt", "l.k < r.k")}


@pytest.mark.parametrize("cond", sorted(CONDITIONS))
@pytest.mark.parametrize("jt", sorted(SPARK_JOINS), ids=lambda t: J.JoinType.Name(t))
def test_join_types(spark, jt, cond):
    b = PlanBuilder()
    fn, sql = CONDITIONS[cond]
    rel = join(tbl("rel_l"), tbl("rel_r"), jt, b.call(fn, field(0), field(2), out=boolean()))
    out = 4 if jt in (J.JOIN_TYPE_INNER, J.JOIN_TYPE_OUTER, J.JOIN_TYPE_LEFT, J.JOIN_TYPE_RIGHT) else 2
    got = run(b.plan(rel, [f"c{i}" for i in range(out)]), spark)
    assert_same_rows(got, spark.sql(SPARK_JOINS[jt].format(c=sql)))


def test_left_single_join(spark):
    b = PlanBuilder()
    rel = join(tbl("rel_l"), tbl("rel_ru"), J.JOIN_TYPE_LEFT_SINGLE, b.eq(field(0), field(2)))
    got = run(b.plan(rel, ["lk", "a", "rk", "b"]), spark)
    assert_same_rows(got, spark.sql("select l.*, r.* from rel_l l left join rel_ru r on l.k = r.k"))


def test_right_single_join(spark):
    # Every right row (rel_l) keeps its place; the left side (rel_ru, unique keys) supplies at most one match.
    b = PlanBuilder()
    rel = join(tbl("rel_ru"), tbl("rel_l"), J.JOIN_TYPE_RIGHT_SINGLE, b.eq(field(0), field(2)))
    got = run(b.plan(rel, ["rk", "b", "lk", "a"]), spark)
    assert_same_rows(got, spark.sql("select r.*, l.* from rel_l l left join rel_ru r on l.k = r.k"))


@pytest.mark.parametrize(
    "jt, left, right",
    [(J.JOIN_TYPE_LEFT_SINGLE, "rel_l", "rel_r"), (J.JOIN_TYPE_RIGHT_SINGLE, "rel_r", "rel_l")],
    ids=["left", "right"],
)
def test_single_join_more_than_one_match_fails(spark, jt, left, right):
    b = PlanBuilder()
    rel = join(tbl(left), tbl(right), jt, b.eq(field(0), field(2)))
    df = run(b.plan(rel, ["a", "b", "c", "d"]), spark)
    with pytest.raises(Exception, match="more than one row"):
        df.collect()


def _and3(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _mark_oracle(outer_rows, inner_rows, pred):
    """Each outer row plus TRUE if some inner row matches, NULL if none does but one is unknown, else FALSE."""
    out = []
    for o in outer_rows:
        results = [pred(o, i) for i in inner_rows]
        mark = True if True in results else (None if None in results else False)
        out.append((*o, mark))
    return out


def _eq3(a, b):
    return None if a is None or b is None else a == b


def _lt3(a, b):
    return None if a is None or b is None else a < b


@pytest.mark.parametrize("right", ["rel_r", "rel_rn", "rel_e"])
@pytest.mark.parametrize("cond", ["eq", "lt", "eq_and_b"])
def test_left_mark_join(spark, right, cond):
    b = PlanBuilder()
    if cond == "eq_and_b":
        c = b.and_(b.eq(field(0), field(2)), b.call("not_equal", field(3), lit("y"), out=boolean()))

        def pred(o, i):
            return _and3(_eq3(o[0], i[0]), None if i[1] is None else i[1] != "y")
    else:
        c = b.call(CONDITIONS[cond][0], field(0), field(2), out=boolean())
        cmp = _eq3 if cond == "eq" else _lt3

        def pred(o, i):
            return cmp(o[0], i[0])

    rel = join(tbl("rel_l"), tbl(right), J.JOIN_TYPE_LEFT_MARK, c)
    got = run(b.plan(rel, ["k", "a", "mark"]), spark)
    assert_same_rows(got, _mark_oracle(kv("rel_l"), kv(right), pred))


@pytest.mark.parametrize("left", ["rel_r", "rel_rn", "rel_e"])
def test_right_mark_join(spark, left):
    # Right rows (rel_l) with a mark: does some left row (of `left`) match?
    b = PlanBuilder()
    rel = join(tbl(left), tbl("rel_l"), J.JOIN_TYPE_RIGHT_MARK, b.eq(field(0), field(2)))
    got = run(b.plan(rel, ["k", "a", "mark"]), spark)
    assert_same_rows(got, _mark_oracle(kv("rel_l"), kv(left), lambda o, i: _eq3(o[0], i[0])))


def test_mark_join_feeds_a_filter(spark):
    # The mark column is an ordinary boolean column for the relations above the join.
    b = PlanBuilder()
    rel = join(tbl("rel_l"), tbl("rel_r"), J.JOIN_TYPE_LEFT_MARK, b.eq(field(0), field(2)))
    rel = filter_(rel, b.call("is_null", field(2), out=boolean()))
    got = run(b.plan(rel, ["k", "a", "mark"]), spark)
    assert_same_rows(got, [(1, "a", None), (None, "n", None)])


@pytest.mark.parametrize(
    "jt, how", [(J.JOIN_TYPE_INNER, "join"), (J.JOIN_TYPE_LEFT, "left join"), (J.JOIN_TYPE_OUTER, "full join")]
)
def test_post_join_filter(spark, jt, how):
    b = PlanBuilder()
    # post-join filter: l.a < r.b, or r.b IS NULL (keeps outer-join rows); applied after the join itself.
    post = b.or_(b.call("lt", field(1), field(3), out=boolean()), b.call("is_null", field(3), out=boolean()))
    rel = join(tbl("rel_l"), tbl("rel_r"), jt, b.eq(field(0), field(2)), post=post)
    got = run(b.plan(rel, ["k", "a", "k2", "b"]), spark)
    want = spark.sql(f"select * from rel_l l {how} rel_r r on l.k = r.k where l.a < r.b or r.b is null")
    assert_same_rows(got, want)


def test_post_join_filter_removes_null_extended_rows(spark):
    # On a LEFT join the post-join filter is not part of the ON condition: rows it rejects disappear.
    b = PlanBuilder()
    post = b.call("not_equal", field(3), lit("y2"), out=boolean())
    rel = join(tbl("rel_l"), tbl("rel_r"), J.JOIN_TYPE_LEFT, b.eq(field(0), field(2)), post=post)
    got = run(b.plan(rel, ["k", "a", "k2", "b"]), spark)
    want = spark.sql("select * from rel_l l left join rel_r r on l.k = r.k where r.b <> 'y2'")
    assert_same_rows(got, want)


@pytest.mark.parametrize(
    "jt, how", [(J.JOIN_TYPE_LEFT, "left join"), (J.JOIN_TYPE_RIGHT, "right join"), (J.JOIN_TYPE_OUTER, "full join")]
)
def test_outer_join_of_projected_literals(spark, jt, how):
    # Projections may stay pending through joins; on a side the join fills with NULLs a literal must read NULL.
    b = PlanBuilder()
    left = project(tbl("rel_l"), lit(1), emit=[0, 2])
    right = project(tbl("rel_r"), lit(2), emit=[0, 2])
    rel = join(left, right, jt, b.eq(field(0), field(2)))
    got = run(b.plan(rel, ["k", "one", "k2", "two"]), spark)
    want = spark.sql(
        f"select l.k, l.one, r.k, r.two from (select k, 1 as one from rel_l) l {how} (select k, 2 as two from rel_r) r"
        " on l.k = r.k"
    )
    assert_same_rows(got, want)


def test_table_read_twice_in_one_cross(spark):
    # The second read keeps the table's own names in its frame until the cross needs them apart.
    b = PlanBuilder()
    rel = filter_(cross(tbl("rel_l"), project(tbl("rel_l"), lit(7), emit=[0, 2])), b.eq(field(0), field(2)))
    got = run(b.plan(rel, ["k", "a", "k2", "seven"]), spark)
    assert_same_rows(got, spark.sql("select x.k, x.a, y.k, 7 from rel_l x join rel_l y on x.k = y.k"))


def test_self_join(spark):
    b = PlanBuilder()
    rel = join(tbl("rel_l"), tbl("rel_l"), J.JOIN_TYPE_INNER, b.eq(field(0), field(2)))
    got = run(b.plan(rel, ["k", "a", "k2", "a2"]), spark)
    assert_same_rows(got, spark.sql("select * from rel_l x join rel_l y on x.k = y.k"))


def test_self_join_left_outer_with_emit(spark):
    b = PlanBuilder()
    cond = b.and_(b.eq(field(0), field(2)), b.call("not_equal", field(1), field(3), out=boolean()))
    rel = join(tbl("rel_l"), tbl("rel_l"), J.JOIN_TYPE_LEFT, cond, emit=[3, 1])
    got = run(b.plan(rel, ["a2", "a"]), spark)
    want = spark.sql("select y.a, x.a from rel_l x left join rel_l y on x.k = y.k and x.a <> y.a")
    assert_same_rows(got, want)


@pytest.mark.parametrize(
    "jt, sql",
    [
        (J.JOIN_TYPE_INNER, "select * from rel_l cross join rel_rn"),
        (J.JOIN_TYPE_LEFT, "select * from rel_l left join rel_e on true"),
        (J.JOIN_TYPE_LEFT_SEMI, "select * from rel_l left semi join rel_rn on true"),
    ],
    ids=["inner", "left_empty_right", "semi"],
)
def test_join_without_condition(spark, jt, sql):
    right = "rel_e" if jt == J.JOIN_TYPE_LEFT else "rel_rn"
    rel = join(tbl("rel_l"), tbl(right), jt)
    width = 2 if jt == J.JOIN_TYPE_LEFT_SEMI else 4
    got = run(PlanBuilder().plan(rel, [f"c{i}" for i in range(width)]), spark)
    assert_same_rows(got, spark.sql(sql))


def test_cross(spark):
    rel = cross(tbl("rel_l"), tbl("rel_rn"))
    got = run(PlanBuilder().plan(rel, ["k", "a", "k2", "b"]), spark)
    assert_same_rows(got, spark.sql("select * from rel_l cross join rel_rn"))


def test_three_way_join_of_one_table(spark):
    b = PlanBuilder()
    inner = join(tbl("rel_l"), tbl("rel_l"), J.JOIN_TYPE_INNER, b.eq(field(0), field(2)))
    rel = join(inner, tbl("rel_l"), J.JOIN_TYPE_LEFT, b.eq(field(2), field(4)), emit=[1, 3, 5])
    got = run(b.plan(rel, ["a", "b", "c"]), spark)
    want = spark.sql("select x.a, y.a, z.a from rel_l x join rel_l y on x.k = y.k left join rel_l z on y.k = z.k")
    assert_same_rows(got, want)


# --------------------------------------------------------------------------------------------------
# ReferenceRel
# --------------------------------------------------------------------------------------------------


def _shared_subtree(b: PlanBuilder):
    """rel_l rows with a key, plus k * 10: (k, a, k10)."""
    keyed = filter_(tbl("rel_l"), b.call("is_not_null", field(0), out=boolean()))
    return project(keyed, b.call("multiply", field(0), lit(10), out=i32()))


SHARED_SQL = "with s as (select k, a, k * 10 as k10 from rel_l where k is not null) "


def test_reference_rel_joined_with_itself(spark):
    b = PlanBuilder()
    shared = _shared_subtree(b)
    rel = join(reference(0), reference(0), J.JOIN_TYPE_INNER, b.eq(field(2), field(5)))
    got = run(b.plan(rel, ["k", "a", "k10", "k_", "a_", "k10_"], shared=[shared]), spark)
    assert_same_rows(got, spark.sql(SHARED_SQL + "select * from s x join s y on x.k10 = y.k10"))


def test_reference_rel_in_three_places(spark):
    b = PlanBuilder()
    shared = _shared_subtree(b)
    pairs = join(
        reference(0),
        reference(0),
        J.JOIN_TYPE_LEFT_ANTI,
        b.and_(b.eq(field(0), field(3)), b.call("lt", field(1), field(4), out=boolean())),
    )
    rel = set_(SetRel.SET_OP_UNION_ALL, pairs, reference(0))
    got = run(b.plan(rel, ["k", "a", "k10"], shared=[shared]), spark)
    want = spark.sql(
        SHARED_SQL + "select * from s x left anti join s y on x.k = y.k and x.a < y.a union all select * from s"
    )
    assert_same_rows(got, want)


def test_reference_rel_under_an_aggregate_and_a_join(spark):
    b = PlanBuilder()
    shared = _shared_subtree(b)
    counts = aggregate(reference(0), keys=[field(0)], measures=[b.agg("count", out=i64())])
    rel = join(reference(0), counts, J.JOIN_TYPE_INNER, b.eq(field(0), field(3)), emit=[1, 4])
    got = run(b.plan(rel, ["a", "n"], shared=[shared]), spark)
    want = spark.sql(SHARED_SQL + "select s.a, c.n from s join (select k, count(*) n from s group by k) c on s.k = c.k")
    assert_same_rows(got, want)


# --------------------------------------------------------------------------------------------------
# emit
# --------------------------------------------------------------------------------------------------


def test_emit_on_project_reorders_and_duplicates(spark):
    b = PlanBuilder()
    rel = project(tbl("rel_l"), b.call("add", field(0), lit(10), out=i32()), emit=[2, 0, 0, 1])
    got = run(b.plan(rel, ["k10", "k", "k_again", "a"]), spark)
    assert got.columns == ["k10", "k", "k_again", "a"]
    assert_same_rows(got, spark.sql("select k + 10, k, k, a from rel_l"))


def test_emit_on_read_filter_and_aggregate(spark):
    b = PlanBuilder()
    read = with_emit(tbl("rel_g"), [2, 0, 2])  # x, g1, x
    kept = filter_(read, b.call("is_not_null", field(0), out=boolean()), emit=[1, 0])  # g1, x
    agg = aggregate(kept, keys=[field(0)], measures=[b.agg("sum", field(1), out=i64())], emit=[1, 0, 1])
    got = run(b.plan(agg, ["s", "g1", "s2"]), spark)
    want = spark.sql("select sum(x), g1, sum(x) from rel_g where x is not null group by g1")
    assert_same_rows(got, want)


def test_emit_duplicate_column_then_join_on_it(spark):
    # Two positions carrying the same column must stay distinct columns for the relations above.
    b = PlanBuilder()
    dup = with_emit(tbl("rel_rn"), [0, 0, 1])
    rel = join(tbl("rel_l"), dup, J.JOIN_TYPE_INNER, b.eq(field(0), field(3)), emit=[1, 2, 3, 4])
    got = run(b.plan(rel, ["a", "k1", "k2", "b"]), spark)
    assert_same_rows(got, spark.sql("select l.a, r.k, r.k, r.b from rel_l l join rel_rn r on l.k = r.k"))


# --------------------------------------------------------------------------------------------------
# Aggregates
# --------------------------------------------------------------------------------------------------


def test_global_aggregate(spark):
    b = PlanBuilder()
    ms = [
        b.agg("count", out=i64()),
        b.agg("count", field(2), out=i64()),
        b.agg("sum", field(2), out=i64()),
        b.agg("avg", field(2), out=fp64()),
        b.agg("min", field(0), out=string()),
        b.agg("max", field(2), out=i32()),
    ]
    got = run(b.plan(aggregate(tbl("rel_g"), measures=ms), list("abcdef")), spark)
    want = spark.sql("select count(*), count(x), sum(x), avg(x), min(g1), max(x) from rel_g")
    assert_same_rows(got, want)


def test_global_aggregate_over_no_rows_gives_one_row(spark):
    b = PlanBuilder()
    empty = filter_(tbl("rel_g"), lit(False))
    ms = [b.agg("count", out=i64()), b.agg("sum", field(2), out=i64())]
    got = run(b.plan(aggregate(empty, measures=ms), ["n", "s"]), spark)
    assert tuples(got.collect()) == [(0, None)]


def test_groupings_without_measures(spark):
    b = PlanBuilder()
    rel = aggregate(tbl("rel_g"), keys=[field(0), field(1)])
    got = run(b.plan(rel, ["g1", "g2"]), spark)
    assert_same_rows(got, spark.sql("select distinct g1, g2 from rel_g"))


def test_group_by_expression(spark):
    b = PlanBuilder()
    key = b.call("coalesce", field(0), lit("?"), out=string())
    rel = aggregate(tbl("rel_g"), keys=[key], measures=[b.agg("sum", field(2), out=i64())])
    got = run(b.plan(rel, ["g", "s"]), spark)
    assert_same_rows(got, spark.sql("select coalesce(g1, '?'), sum(x) from rel_g group by coalesce(g1, '?')"))


def test_grouping_sets_add_the_set_index_column(spark):
    b = PlanBuilder()
    ms = [b.agg("sum", field(2), out=i64()), b.agg("count", out=i64())]
    rel = aggregate(tbl("rel_g"), keys=[field(0), field(1)], sets=[[0, 1], [0], []], measures=ms)
    got = run(b.plan(rel, ["g1", "g2", "s", "n", "set"]), spark)
    assert len(got.columns) == 5
    want = spark.sql(
        "select g1, g2, sum(x), count(*), 0 from rel_g group by g1, g2 "
        "union all select g1, cast(null as int), sum(x), count(*), 1 from rel_g group by g1 "
        "union all select cast(null as string), cast(null as int), sum(x), count(*), 2 from rel_g"
    )
    assert_same_rows(got, want)


def test_grouping_sets_out_of_key_order_without_measures(spark):
    b = PlanBuilder()
    rel = aggregate(tbl("rel_g"), keys=[field(0), field(1)], sets=[[1], [1, 0]])
    got = run(b.plan(rel, ["g1", "g2", "set"]), spark)
    want = spark.sql(
        "select distinct cast(null as string), g2, 0 from rel_g union all select distinct g1, g2, 1 from rel_g"
    )
    assert_same_rows(got, want)


def test_grouping_sets_over_no_rows_keep_the_empty_set_row(spark):
    # SQL: GROUP BY GROUPING SETS ((g1), ()) over no rows still yields the one row of the () set.
    b = PlanBuilder()
    empty = filter_(tbl("rel_g"), lit(False))
    rel = aggregate(empty, keys=[field(0)], sets=[[0], []], measures=[b.agg("count", out=i64())])
    got = run(b.plan(rel, ["g1", "n", "set"]), spark)
    assert tuples(got.collect()) == [(None, 0, 1)]


def test_measure_filters(spark):
    b = PlanBuilder()
    g2_gt_1 = b.call("gt", field(1), lit(1), out=boolean())
    ms = [
        measure(b.agg("sum", field(2), out=i64()), filter=g2_gt_1),
        measure(b.agg("count", out=i64()), filter=b.eq(field(1), lit(1))),
        measure(b.agg("count", field(2), out=i64()), filter=g2_gt_1),
        measure(b.agg("max", field(2), out=i32())),
        measure(b.agg("avg", field(2), out=fp64()), filter=b.call("is_null", field(1), out=boolean())),
    ]
    rel = aggregate(tbl("rel_g"), keys=[field(0)], measures=ms)
    got = run(b.plan(rel, list("gabcde")), spark)
    want = spark.sql(
        "select g1, sum(x) filter (where g2 > 1), count(*) filter (where g2 = 1), "
        "count(x) filter (where g2 > 1), max(x), avg(x) filter (where g2 is null) from rel_g group by g1"
    )
    assert_same_rows(got, want)


def test_distinct_invocation(spark):
    b = PlanBuilder()
    ms = [
        b.agg("count", field(2), out=i64(), distinct=True),
        b.agg("sum", field(2), out=i64(), distinct=True),
        b.agg("avg", field(2), out=fp64(), distinct=True),
        b.agg("count", field(2), out=i64()),
        b.agg("sum", field(2), out=i64()),
    ]
    rel = aggregate(tbl("rel_g"), keys=[field(1)], measures=ms)
    got = run(b.plan(rel, list("kabcde")), spark)
    want = spark.sql(
        "select g2, count(distinct x), sum(distinct x), avg(distinct x), count(x), sum(x) from rel_g group by g2"
    )
    assert_same_rows(got, want)


def test_distinct_global_with_filter(spark):
    b = PlanBuilder()
    ms = [
        measure(b.agg("count", field(2), out=i64(), distinct=True), filter=b.eq(field(1), lit(1))),
        measure(b.agg("sum", field(2), out=i64(), distinct=True)),
    ]
    got = run(b.plan(aggregate(tbl("rel_g"), measures=ms), ["a", "b"]), spark)
    want = spark.sql("select count(distinct x) filter (where g2 = 1), sum(distinct x) from rel_g")
    assert_same_rows(got, want)


# --------------------------------------------------------------------------------------------------
# Sort and fetch
# --------------------------------------------------------------------------------------------------

DIRECTIONS = {
    ASC_NULLS_FIRST: "asc nulls first",
    ASC_NULLS_LAST: "asc nulls last",
    DESC_NULLS_FIRST: "desc nulls first",
    DESC_NULLS_LAST: "desc nulls last",
}


@pytest.mark.parametrize("direction", sorted(DIRECTIONS), ids=lambda d: DIRECTIONS[d].replace(" ", "_"))
def test_sort_direction_and_nulls(spark, direction):
    rel = sort(tbl("rel_s"), (field(0), direction))
    got = [r[0] for r in run(PlanBuilder().plan(rel, ["k", "s"]), spark).collect()]
    want = [r[0] for r in spark.sql(f"select k from rel_s order by k {DIRECTIONS[direction]}").collect()]
    assert got == want


def test_sort_several_keys(spark):
    b = PlanBuilder()
    rel = sort(tbl("rel_s"), (field(0), DESC_NULLS_LAST), (field(1), ASC_NULLS_FIRST))
    got = run(b.plan(rel, ["k", "s"]), spark)
    want = spark.sql("select * from rel_s order by k desc nulls last, s asc nulls first")
    assert_same_rows(got, want, ordered=True)


def test_sort_by_expression(spark):
    b = PlanBuilder()
    rel = sort(tbl("rel_s"), (b.call("negate", field(0), out=i32()), ASC_NULLS_LAST), (field(1), DESC_NULLS_LAST))
    got = run(b.plan(rel, ["k", "s"]), spark)
    want = spark.sql("select * from rel_s order by -k asc nulls last, s desc")
    assert_same_rows(got, want, ordered=True)


def test_sort_clustered_keeps_equal_values_together(spark):
    rel = sort(tbl("rel_s"), (field(0), CLUSTERED))
    rows = tuples(run(PlanBuilder().plan(rel, ["k", "s"]), spark).collect())
    assert sorted(rows, key=repr) == sorted(S_ROWS, key=repr)
    runs = [k for k, _ in groupby(r[0] for r in rows)]
    assert len(runs) == len(set(runs)), f"equal keys not adjacent: {[r[0] for r in rows]}"


ORDER = "order by k asc nulls last, s asc"


def _sorted_s():
    return sort(tbl("rel_s"), (field(0), ASC_NULLS_LAST), (field(1), ASC_NULLS_FIRST))


@pytest.mark.parametrize(
    "kwargs, sql",
    [
        ({"offset": 1, "count": 2}, "limit 2 offset 1"),
        ({"count": 3}, "limit 3"),
        ({"offset": 2}, "offset 2"),
        ({"count": 0}, "limit 0"),
        ({"offset": 100, "count": 2}, "limit 2 offset 100"),
        ({"count_expr": lit(2, i64()), "offset_expr": lit(3, i64())}, "limit 2 offset 3"),
        ({"count_expr": lit(4, i64())}, "limit 4"),
        ({"count_expr": null(i64())}, ""),  # a NULL count: all rows
        ({"offset_expr": null(i64()), "count": 1}, "limit 1"),  # a NULL offset: 0
    ],
    ids=[
        "offset+count",
        "count",
        "offset",
        "count0",
        "offset_past_end",
        "exprs",
        "count_expr",
        "null_count",
        "null_offset",
    ],
)
def test_fetch(spark, kwargs, sql):
    rel = fetch(_sorted_s(), **kwargs)
    got = run(PlanBuilder().plan(rel, ["k", "s"]), spark)
    want = spark.sql(f"select * from rel_s {ORDER} {sql}")
    assert_same_rows(got, want, ordered=True)


def test_fetch_then_filter_then_fetch(spark):
    b = PlanBuilder()
    first = fetch(_sorted_s(), offset=1, count=5)
    kept = filter_(first, b.call("not_equal", field(1), lit("b"), out=boolean()))
    rel = fetch(kept, offset=1, count=2)
    got = run(b.plan(rel, ["k", "s"]), spark).collect()
    want = [r for r in spark.sql(f"select * from rel_s {ORDER} limit 5 offset 1").collect() if r[1] != "b"]
    assert tuples(got) == tuples(want[1:3])


# --------------------------------------------------------------------------------------------------
# Set operations
# --------------------------------------------------------------------------------------------------

P = [1, 1, 1, 1, 2, 2, 2, 3, None, None, None, 5, 7]
S1 = [1, 2, 2, None, 3, 4, 7, 7, 7]
S2 = [1, 1, 2, None, None, 6, 7]


def _multiset_oracle(op: int, primary: list, secondaries: list[list]) -> Counter:
    """The spec's output multiplicities: m copies in the primary, n_i in each secondary."""
    m = Counter(primary)
    ns = [Counter(s) for s in secondaries]
    keys = set(m).union(*ns)
    out = Counter()
    for k in keys:
        mk, nk = m[k], [n[k] for n in ns]
        if op == SetRel.SET_OP_UNION_ALL:
            c = mk + sum(nk)
        elif op == SetRel.SET_OP_UNION_DISTINCT:
            c = 1
        elif op == SetRel.SET_OP_MINUS_PRIMARY:
            c = int(mk > 0 and not any(nk))
        elif op == SetRel.SET_OP_MINUS_PRIMARY_ALL:
            c = max(0, mk - sum(nk))
        elif op == SetRel.SET_OP_MINUS_MULTISET:
            c = max(0, mk - min(nk))
        elif op == SetRel.SET_OP_INTERSECTION_PRIMARY:
            c = int(mk > 0 and any(nk))
        elif op == SetRel.SET_OP_INTERSECTION_MULTISET:
            c = int(mk > 0 and all(nk))
        elif op == SetRel.SET_OP_INTERSECTION_MULTISET_ALL:
            c = min(mk, *nk)
        else:
            raise AssertionError(op)
        if c > 0:
            out[k] = c
    return out


SET_OPS = [o for o in SetRel.SetOp.values() if o != SetRel.SET_OP_UNSPECIFIED]


_SET_VIEWS: dict[tuple, str] = {}


def _values(spark, rows, types):
    """A NamedTable read of `rows` (registered once as a temp view; views are cheaper than VirtualTables)."""
    key = (tuple(rows), tuple(t.WhichOneof("kind") for t in types))
    if key not in _SET_VIEWS:
        name = f"rel_set_{len(_SET_VIEWS)}"
        sql_types = {"i32": "int", "i64": "bigint", "string": "string"}
        ddl = ", ".join(f"c{i} {sql_types[t.WhichOneof('kind')]}" for i, t in enumerate(types))
        view(spark, name, ddl, rows)
        _SET_VIEWS[key] = name
    return named(_SET_VIEWS[key], [f"c{i}" for i in range(len(types))], types)


@pytest.mark.parametrize("n_inputs", [2, 3])
@pytest.mark.parametrize("op", SET_OPS, ids=lambda o: SetRel.SetOp.Name(o))
def test_set_operations_one_column(spark, op, n_inputs):
    inputs = [P, S1, S2][:n_inputs]
    rel = set_(op, *[_values(spark, [(v,) for v in rows], [i32()]) for rows in inputs])
    got = Counter(r[0] for r in run(PlanBuilder().plan(rel, ["v"]), spark).collect())
    assert got == _multiset_oracle(op, inputs[0], inputs[1:])


def test_set_operation_spec_examples(spark):
    # The worked examples of the spec's set operation table.
    examples = [
        (SetRel.SET_OP_MINUS_PRIMARY, [1, 2, 2, 3, 3, 3, 4], [[1, 2], [3]], [4]),
        (SetRel.SET_OP_MINUS_PRIMARY_ALL, [1, 2, 2, 3, 3, 3, 3], [[1, 2, 3, 4], [3]], [2, 3, 3]),
        (SetRel.SET_OP_MINUS_MULTISET, [1, 2, 3, 4], [[1, 2], [1, 2, 3]], [3, 4]),
        (SetRel.SET_OP_INTERSECTION_PRIMARY, [1, 2, 2, 3, 3, 3, 4], [[1, 2, 3, 5], [2, 3, 6]], [1, 2, 3]),
        (SetRel.SET_OP_INTERSECTION_MULTISET, [1, 2, 3, 4], [[2, 3], [3, 4]], [3]),
        (SetRel.SET_OP_INTERSECTION_MULTISET_ALL, [1, 2, 2, 3, 3, 3, 4], [[1, 2, 3, 3, 5], [2, 3, 3, 6]], [2, 3, 3]),
        (SetRel.SET_OP_UNION_DISTINCT, [1, 2, 2, 3, 3, 3, 4], [[2, 3, 5], [1, 6]], [1, 2, 3, 4, 5, 6]),
        (SetRel.SET_OP_UNION_ALL, [1, 2, 2, 3, 3, 3, 4], [[2, 3, 5], [1, 6]], [1, 2, 2, 3, 3, 3, 4, 2, 3, 5, 1, 6]),
    ]
    for op, p, ss, want in examples:
        rel = set_(op, *[_values(spark, [(v,) for v in rows], [i64()]) for rows in [p, *ss]])
        got = sorted(r[0] for r in run(PlanBuilder().plan(rel, ["v"]), spark).collect())
        assert got == sorted(want), SetRel.SetOp.Name(op)


TWO_COL_P = [(1, "a"), (1, "a"), (1, None), (1, None), (None, None), (None, None), (2, "b"), (3, "c")]
TWO_COL_S1 = [(1, "a"), (1, None), (None, None), (2, "x"), (3, "c")]
TWO_COL_S2 = [(1, "a"), (1, None), (1, None), (None, None), (None, "b")]


@pytest.mark.parametrize("op", SET_OPS, ids=lambda o: SetRel.SetOp.Name(o))
def test_set_operations_two_columns_null_matches_null(spark, op):
    types = [i32(), string()]
    inputs = [TWO_COL_P, TWO_COL_S1, TWO_COL_S2]
    rel = set_(op, *[_values(spark, rows, types) for rows in inputs])
    got = Counter(tuples(run(PlanBuilder().plan(rel, ["k", "s"]), spark).collect()))
    assert got == _multiset_oracle(op, inputs[0], inputs[1:])


def test_set_operation_over_virtual_tables(spark):
    rows = [[(1,), (1,), (None,)], [(1,), (None,), (2,)], [(None,), (1,)]]
    rel = set_(SetRel.SET_OP_INTERSECTION_MULTISET_ALL, *[virtual(["v"], [i32()], r) for r in rows])
    got = sorted(tuples(run(PlanBuilder().plan(rel, ["v"]), spark).collect()), key=repr)
    assert got == sorted([(1,), (None,)], key=repr)


def test_set_operation_over_named_tables_with_different_column_names(spark):
    # Positional: the secondary's columns line up by position, whatever they are called.
    b = PlanBuilder()
    rel = set_(SetRel.SET_OP_MINUS_PRIMARY_ALL, tbl("rel_r"), tbl("rel_ru"))
    got = run(b.plan(rel, ["k", "b"]), spark)
    assert_same_rows(got, spark.sql("select * from rel_r except all select * from rel_ru"))


def test_a_relation_is_a_value_and_its_pending_projection_is_applied_once(spark):
    """Translators share relations (ReferenceRel, a join's inputs, a subquery's host): an operation never changes
    one. A pending projection is a value of its own; `materialized()` applies it with one select, and `df` is
    refused while it is pending (Columns from `col(i)` would not resolve against the applied frame)."""
    import dataclasses

    from pyspark.sql import functions as F
    from substrait_spark.consumer.translation.relation import NameSource, Relation

    names = NameSource()
    base = Relation(spark.range(3).select(F.col("id").alias("_s0")), ["_s0"])
    lazy = base.project(["_s1"], base.types, {"_s1": base.col(0) + 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        lazy.names = ("x",)
    with pytest.raises(AssertionError, match="materialized"):
        lazy.df  # noqa: B018
    applied = lazy.materialized()
    assert lazy.projection is not None and applied.projection is None  # the lazy one is unchanged
    assert applied.materialized() is applied and base.materialized() is base  # nothing left to apply
    assert applied.df.columns == ["_s1"] and sorted(r[0] for r in applied.df.collect()) == [1, 2, 3]
    twice = lazy.select_positions([0, 0], names)  # a repeated position gets a fresh name
    assert len(set(twice.names)) == 2 and twice.projection is not None
