"""The physical relations and expressions of Substrait 0.108: hash/merge/nested-loop joins, lateral joins,
exchanges, expand, top-N, execution context variables, and extension relations through the registry.

Results are checked against the same query in Spark SQL over the same temp views; where the relation names a
physical strategy, Spark's physical plan is checked for it too.
"""

from __future__ import annotations

import datetime as dt

import pytest
from google.protobuf import wrappers_pb2
from physical_builder import (
    INT64_VALUE_URL,
    MIGHT_EQUAL,
    NOT_DISTINCT,
    Key,
    context_variable,
    exchange,
    expand,
    extension_leaf,
    extension_single,
    extension_table,
    hash_join,
    keys,
    lateral_join,
    lateral_ref,
    merge_join,
    nested_loop_join,
    ref,
    top_n,
)
from plan_builder import (
    ASC_NULLS_FIRST,
    DESC_NULLS_LAST,
    JoinRel,
    PlanBuilder,
    aggregate,
    assert_same_rows,
    boolean,
    field,
    filter_,
    i32,
    i64,
    join,
    lit,
    named,
    project,
    run,
    string,
    tuples,
    views,
    virtual,
)
from pyspark.sql import functions as F
from substrait import plan_pb2
from substrait_spark.consumer import SubstraitConsumer
from substrait_spark.consumer.errors import PlanInvalidError, UnsupportedFeatureError
from substrait_spark.consumer.translation.registry import register_extension_relation, unregister_extension_relation
from substrait_spark.consumer.translation.relation import Relation

# Each test carries its tier: `unit` (pure Python) or `spark`.

TABLES = {
    "phy_l": ("k int, a string", [(1, "a"), (2, "b"), (2, "b2"), (3, "c"), (None, "n")]),
    "phy_r": ("k int, b string", [(2, "x"), (3, "y"), (3, "y2"), (4, "z"), (None, "m")]),
    "phy_s": ("k int, s string", [(3, "c"), (1, "a"), (5, "e"), (2, "b"), (4, "d"), (6, "f"), (None, "n")]),
    "phy_t": ("k int, s string", [(1, "a"), (2, "b"), (2, "b2"), (2, "b3"), (3, "c"), (4, "d")]),
}


@pytest.fixture(autouse=True)
def _tables_for_spark_tests(request):
    """The module's views for its Spark tests only: its `unit` tests start no Spark."""
    if request.node.get_closest_marker("unit") is None:
        request.getfixturevalue("tables")


@pytest.fixture(scope="module")
def tables(spark):
    with views(spark, TABLES):
        yield


def tbl(name: str):
    return named(name, ["k", TABLES[name][0].split(",")[1].split()[0]], [i32(), string()])


def physical(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


J = JoinRel
BOTH = {"INNER": "join", "LEFT": "left join", "OUTER": "full join", "RIGHT": "right join"}
LEFT_ONLY = {"LEFT_SEMI": "left semi join", "LEFT_ANTI": "left anti join"}


# --- hash and merge joins ---------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("jt", [*BOTH, *LEFT_ONLY])
def test_hash_join_types(spark, jt):
    rel = hash_join(tbl("phy_l"), tbl("phy_r"), f"JOIN_TYPE_{jt}", keys((0, 0)))
    cols = "l.*, r.*" if jt in BOTH else "l.*"
    sql = f"select {cols} from phy_l l {(BOTH | LEFT_ONLY)[jt]} phy_r r on l.k = r.k"
    got = run(PlanBuilder().plan(rel, ["a", "b", "c", "d"][: 4 if jt in BOTH else 2]), spark)
    assert_same_rows(got, spark.sql(sql))
    if jt == "INNER":
        assert "ShuffledHashJoin" in physical(got)


@pytest.mark.spark
def test_hash_join_right_semi_swaps_sides(spark):
    rel = hash_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_RIGHT_SEMI", keys((0, 0)))
    got = run(PlanBuilder().plan(rel, ["k", "b"]), spark)
    assert_same_rows(got, spark.sql("select r.* from phy_r r left semi join phy_l l on l.k = r.k"))


@pytest.mark.spark
def test_hash_join_is_not_distinct_from_matches_nulls(spark):
    rel = hash_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_INNER", keys((0, 0), comparison=NOT_DISTINCT))
    got = run(PlanBuilder().plan(rel, ["a", "b", "c", "d"]), spark)
    assert_same_rows(got, spark.sql("select l.*, r.* from phy_l l join phy_r r on l.k <=> r.k"))
    assert (None, "n", None, "m") in tuples(got.collect())


@pytest.mark.spark
def test_hash_join_residual_and_post_filter(spark):
    b = PlanBuilder()
    residual = b.call("not_equal", field(1), lit("b2"), out=boolean())
    post = b.call("not_equal", field(3), lit("y2"), out=boolean())
    rel = hash_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_LEFT", keys((0, 0)), residual=residual, post=post)
    got = run(b.plan(rel, ["a", "b", "c", "d"]), spark)
    sql = "select * from (select l.*, r.* from phy_l l left join phy_r r on l.k = r.k and l.a <> 'b2') where b <> 'y2'"
    assert_same_rows(got, spark.sql(sql))


@pytest.mark.spark
def test_hash_join_build_left_hints_the_left_side(spark):
    rel = hash_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_INNER", keys((0, 0)), build_left=True)
    got = run(PlanBuilder().plan(rel, ["a", "b", "c", "d"]), spark)
    assert "BuildLeft" in physical(got)


@pytest.mark.spark
def test_merge_join_is_a_sort_merge_join(spark):
    rel = merge_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_INNER", keys((0, 0)))
    got = run(PlanBuilder().plan(rel, ["a", "b", "c", "d"]), spark)
    assert_same_rows(got, spark.sql("select l.*, r.* from phy_l l join phy_r r on l.k = r.k"))
    assert "SortMergeJoin" in physical(got)


@pytest.mark.spark
def test_keyed_join_refuses_might_equal_and_custom_comparisons(spark):
    rel = hash_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_INNER", keys((0, 0), comparison=MIGHT_EQUAL))
    with pytest.raises(UnsupportedFeatureError, match="MIGHT_EQUAL") as err:
        run(PlanBuilder().plan(rel, ["a", "b", "c", "d"]), spark)
    assert err.value.path.endswith("hash_join.keys[0].comparison")
    custom = Key(left=ref(0), right=ref(0), comparison=Key.ComparisonType(custom_function_reference=7))
    rel = merge_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_INNER", [custom])
    with pytest.raises(UnsupportedFeatureError, match="custom function"):
        run(PlanBuilder().plan(rel, ["a", "b", "c", "d"]), spark)


@pytest.mark.spark
def test_nested_loop_join(spark):
    b = PlanBuilder()
    rel = nested_loop_join(
        tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_LEFT", b.call("lt", field(0), field(2), out=boolean())
    )
    got = run(b.plan(rel, ["a", "b", "c", "d"]), spark)
    assert_same_rows(got, spark.sql("select l.*, r.* from phy_l l left join phy_r r on l.k < r.k"))
    cross = nested_loop_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_INNER")
    assert run(b.plan(cross, ["a", "b", "c", "d"]), spark).count() == 25


# --- top-N ----------------------------------------------------------------------------------------------------


@pytest.mark.spark
def test_top_n_rows_only_is_take_ordered(spark):
    rel = top_n(tbl("phy_s"), (field(0), DESC_NULLS_LAST), count=3, offset=1)
    got = run(PlanBuilder().plan(rel, ["k", "s"]), spark)
    expected = spark.sql("select * from phy_s order by k desc nulls last limit 3 offset 1")
    assert_same_rows(got, expected, ordered=True)
    assert "TakeOrderedAndProject" in physical(got)


@pytest.mark.spark
def test_top_n_null_count_means_all_rows(spark):
    rel = top_n(tbl("phy_s"), (field(0), ASC_NULLS_FIRST), count=None, offset=2)
    got = run(PlanBuilder().plan(rel, ["k", "s"]), spark)
    assert_same_rows(got, spark.sql("select * from phy_s order by k asc nulls first offset 2"), ordered=True)


@pytest.mark.spark
def test_top_n_with_ties_keeps_rows_tied_with_the_last(spark):
    rel = top_n(tbl("phy_t"), (field(0), ASC_NULLS_FIRST), count=2, ties=True)
    got = run(PlanBuilder().plan(rel, ["k", "s"]), spark)
    assert sorted(tuples(got.collect())) == [(1, "a"), (2, "b"), (2, "b2"), (2, "b3")]
    rel = top_n(tbl("phy_t"), (field(0), ASC_NULLS_FIRST), count=1, offset=4, ties=True)
    assert tuples(run(PlanBuilder().plan(rel, ["k", "s"]), spark).collect()) == [(3, "c")]


# --- expand -----------------------------------------------------------------------------------------------------


@pytest.mark.spark
def test_expand_is_one_spark_expand(spark):
    b = PlanBuilder()
    # fields: k (consistent), [a, upper(a)] (switching), [k + 1] (switching, one duplicate short: NULL)
    rel = expand(
        tbl("phy_l"),
        field(0),
        [field(1), b.call("upper", field(1), out=string())],
        [b.call("add", field(0), lit(1, i32()), out=i32())],
    )
    got = run(b.plan(rel, ["k", "v", "w", "ordinal"]), spark)
    expected = spark.sql(
        "select k, a, k + 1, cast(0 as bigint) from phy_l "
        "union all select k, upper(a), null, cast(1 as bigint) from phy_l"
    )
    assert_same_rows(got, expected)
    assert "Expand" in physical(got)
    assert got.schema["ordinal"].dataType.typeName() == "long"


@pytest.mark.spark
def test_expand_passes_remaining_columns_and_may_leave_the_ordinal_unnamed(spark):
    rel = expand(tbl("phy_l"), [field(0), lit(0, i32())])  # column 1 (a) passes through
    got = run(PlanBuilder().plan(rel, ["k", "a"]), spark)
    assert_same_rows(got, spark.sql("select k, a from phy_l union all select 0, a from phy_l"))


# --- exchange ---------------------------------------------------------------------------------------------------


@pytest.mark.spark
def test_exchange_scatter_by_fields_is_hash_partitioning(spark):
    got = run(PlanBuilder().plan(exchange(tbl("phy_l"), "scatter_by_fields", 4, fields=[0]), ["k", "a"]), spark)
    assert_same_rows(got, spark.table("phy_l"))
    assert "hashpartitioning(k" in physical(got) and ", 4)" in physical(got)


@pytest.mark.spark
def test_exchange_round_robin_and_single_target(spark):
    got = run(PlanBuilder().plan(exchange(tbl("phy_l"), "round_robin", 3), ["k", "a"]), spark)
    assert "RoundRobinPartitioning(3)" in physical(got)
    assert_same_rows(got, spark.table("phy_l"))
    b = PlanBuilder()
    bucket = b.call("modulus", field(0), lit(2, i32()), out=i32())
    got = run(b.plan(exchange(tbl("phy_l"), "single_target", 2, bucket=bucket), ["k", "a"]), spark)
    assert "hashpartitioning((k#" in physical(got) and "% 2), 2)" in physical(got)
    assert_same_rows(got, spark.table("phy_l"))


@pytest.mark.spark
def test_exchange_broadcast_makes_a_broadcast_join(spark):
    b = PlanBuilder()
    rel = join(tbl("phy_l"), exchange(tbl("phy_r"), "broadcast"), J.JOIN_TYPE_INNER, b.eq(field(0), field(2)))
    got = run(b.plan(rel, ["a", "b", "c", "d"]), spark)
    assert "BroadcastHashJoin" in physical(got)
    assert_same_rows(got, spark.sql("select l.*, r.* from phy_l l join phy_r r on l.k = r.k"))


@pytest.mark.spark
def test_exchange_multi_target_is_refused(spark):
    rel = exchange(tbl("phy_l"), "multi_target", 2, bucket=field(0))
    with pytest.raises(UnsupportedFeatureError, match="multi-target"):
        run(PlanBuilder().plan(rel, ["k", "a"]), spark)


# --- lateral joins ------------------------------------------------------------------------------------------------


@pytest.mark.spark
def test_lateral_inner_join_over_a_correlated_filter(spark):
    b = PlanBuilder()
    right = filter_(tbl("phy_r"), b.eq(field(0), lateral_ref(0, anchor=7)))
    rel = lateral_join(tbl("phy_l"), right, J.JOIN_TYPE_INNER, anchor=7)
    got = run(b.plan(rel, ["a", "b", "c", "d"]), spark)
    sql = "select l.*, r.* from phy_l l join lateral (select * from phy_r where phy_r.k = l.k) r"
    assert_same_rows(got, spark.sql(sql))


@pytest.mark.spark
def test_lateral_left_join_with_condition(spark):
    b = PlanBuilder()
    right = filter_(tbl("phy_r"), b.eq(field(0), lateral_ref(0, anchor=3)))
    cond = b.call("not_equal", field(3), lit("y2"), out=boolean())
    rel = lateral_join(tbl("phy_l"), right, J.JOIN_TYPE_LEFT, anchor=3, condition=cond)
    got = run(b.plan(rel, ["a", "b", "c", "d"]), spark)
    sql = "select l.*, r.* from phy_l l left join lateral (select * from phy_r where phy_r.k = l.k) r on r.b <> 'y2'"
    assert_same_rows(got, spark.sql(sql))


@pytest.mark.spark
def test_lateral_join_over_an_aggregate_keeps_every_left_row(spark):
    b = PlanBuilder()
    right = aggregate(
        filter_(tbl("phy_r"), b.eq(field(0), lateral_ref(0, anchor=1))), measures=[b.agg("max", field(1), out=string())]
    )
    rel = lateral_join(tbl("phy_l"), right, J.JOIN_TYPE_INNER, anchor=1)
    got = run(b.plan(rel, ["k", "a", "m"]), spark)
    sql = "select l.*, r.m from phy_l l join lateral (select max(b) m from phy_r where phy_r.k = l.k) r"
    assert_same_rows(got, spark.sql(sql))


@pytest.mark.spark
@pytest.mark.parametrize("jt, sql", [("LEFT_SEMI", "exists"), ("LEFT_ANTI", "not exists")])
def test_lateral_semi_and_anti_joins(spark, jt, sql):
    b = PlanBuilder()
    right = filter_(tbl("phy_r"), b.eq(field(0), lateral_ref(0, anchor=5)))
    cond = b.call("not_equal", field(3), lit("y"), out=boolean())
    rel = lateral_join(tbl("phy_l"), right, J.JoinType.Value(f"JOIN_TYPE_{jt}"), anchor=5, condition=cond)
    got = run(b.plan(rel, ["k", "a"]), spark)
    expected = spark.sql(f"select * from phy_l l where {sql} (select 1 from phy_r r where r.k = l.k and r.b <> 'y')")
    assert_same_rows(got, expected)


@pytest.mark.spark
def test_lateral_join_over_a_count_is_refused(spark):
    b = PlanBuilder()
    counted = aggregate(
        filter_(tbl("phy_r"), b.eq(field(0), lateral_ref(0, anchor=1))), measures=[b.agg("count", out=i64())]
    )
    rel = lateral_join(tbl("phy_l"), counted, J.JOIN_TYPE_INNER, anchor=1)
    with pytest.raises(UnsupportedFeatureError, match="counting aggregate"):
        run(b.plan(rel, ["k", "a", "n"]), spark)


@pytest.mark.spark
def test_lateral_join_reading_the_left_row_in_a_projection_is_refused(spark):
    b = PlanBuilder()
    right = project(tbl("phy_r"), b.call("add", field(0), lateral_ref(0, anchor=2), out=i32()))
    rel = lateral_join(tbl("phy_l"), right, J.JOIN_TYPE_INNER, anchor=2)
    with pytest.raises(UnsupportedFeatureError, match="outside a filter") as err:
        run(b.plan(rel, ["a", "b", "c", "d", "e"]), spark)
    assert ".right.project.expressions[0]" in err.value.path


@pytest.mark.spark
def test_lateral_right_join_is_invalid(spark):
    rel = lateral_join(tbl("phy_l"), tbl("phy_r"), J.JOIN_TYPE_RIGHT, anchor=1)
    with pytest.raises(PlanInvalidError, match="lateral join of type JOIN_TYPE_RIGHT"):
        run(PlanBuilder().plan(rel, ["a", "b", "c", "d"]), spark)


# --- execution context variables ------------------------------------------------------------------------------------


@pytest.mark.spark
def test_execution_context_variables(spark):
    rel = project(
        virtual(["x"], [i64()], [[1]]),
        context_variable("current_date"),
        context_variable("current_timestamp"),
        context_variable("current_timezone"),
        context_variable("current_timestamp", precision=0),
    )
    got = run(PlanBuilder().plan(rel, ["x", "d", "ts", "tz", "ts0"]), spark)
    row = got.collect()[0]
    expected = spark.sql("select current_date() d, current_timezone() tz, current_timestamp() ts").collect()[0]
    assert row.d == expected.d and row.tz == expected.tz
    assert abs(row.ts - expected.ts) < dt.timedelta(minutes=1)
    assert row.ts0.microsecond == 0 and row.ts0 <= row.ts


@pytest.mark.spark
def test_execution_context_variable_per_record_is_refused(spark):
    plan = PlanBuilder().plan(project(virtual(["x"], [i64()], [[1]]), context_variable("current_date")), ["x", "d"])
    plan.execution_behavior.variable_eval_mode = plan_pb2.ExecutionBehavior.VARIABLE_EVALUATION_MODE_PER_RECORD
    with pytest.raises(UnsupportedFeatureError, match="PER_RECORD"):
        run(plan, spark)


# --- extension relations through the registry --------------------------------------------------------------------


def _limit(cx, detail, inputs: list[Relation], path: str) -> Relation:
    """A custom 'keep the first N rows by the first column' relation, N packed as an Int64Value."""
    n = wrappers_pb2.Int64Value()
    detail.Unpack(n)
    if not inputs:
        name = cx.names.fresh()
        return Relation(cx.spark.range(n.value).select(F.col("id").alias(name)), [name])
    (source,) = inputs
    return source.with_df(source.df.orderBy(source.cols()[0]).limit(n.value))


@pytest.fixture
def registered_limit():
    register_extension_relation(INT64_VALUE_URL, _limit)
    yield
    unregister_extension_relation(INT64_VALUE_URL)


@pytest.mark.spark
def test_registered_extension_relations(spark, registered_limit):
    from substrait_spark.consumer.analysis.analyze import analyze

    two = wrappers_pb2.Int64Value(value=2)
    plan = PlanBuilder().plan(extension_single(tbl("phy_s"), two), ["k", "s"])
    assert analyze(plan) == []
    assert tuples(run(plan, spark).collect()) == [(None, "n"), (1, "a")]
    leaf = PlanBuilder().plan(extension_leaf(wrappers_pb2.Int64Value(value=3)), ["id"])
    assert sorted(tuples(run(leaf, spark).collect())) == [(0,), (1,), (2,)]
    table = PlanBuilder().plan(extension_table(["id"], [i64()], wrappers_pb2.Int64Value(value=2)), ["id"])
    assert sorted(tuples(run(table, spark).collect())) == [(0,), (1,)]


@pytest.mark.spark
def test_unregistered_extension_relation_is_refused(spark):
    from substrait_spark.consumer.analysis.analyze import analyze

    plan = PlanBuilder().plan(extension_single(tbl("phy_s"), wrappers_pb2.Int64Value(value=2)), ["k", "s"])
    findings = analyze(plan)
    assert [f.feature for f in findings] == [f"extension relation {INT64_VALUE_URL}"]
    with pytest.raises(UnsupportedFeatureError, match="Int64Value"):
        run(plan, spark)


@pytest.mark.spark
def test_consumer_class_table_takes_precedence(spark, registered_limit):
    class OneRow(SubstraitConsumer):
        extension_relations = {
            INT64_VALUE_URL: lambda cx, detail, inputs, path: inputs[0].with_df(inputs[0].df.limit(1))
        }

    from substrait_spark.consumer import to_dataframe
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver

    plan = PlanBuilder().plan(extension_single(tbl("phy_s"), wrappers_pb2.Int64Value(value=5)), ["k", "s"])
    got = to_dataframe(plan, spark, SessionCatalogResolver(), consumer_class=OneRow)
    assert got.count() == 1


# --- analysis and explain know every new kind -------------------------------------------------------------------


@pytest.mark.unit
def test_analyze_and_explain_cover_the_physical_relations():
    from substrait_spark.consumer.analysis.analyze import analyze
    from substrait_spark.consumer.analysis.explain import plan_tree_of

    b = PlanBuilder()
    left = top_n(tbl("phy_l"), (field(0), ASC_NULLS_FIRST), count=3)
    right = exchange(expand(tbl("phy_r"), field(0), [field(1), lit("z")]), "round_robin", 2)
    hj = hash_join(left, right, "JOIN_TYPE_INNER", keys((0, 0)))
    lat = lateral_join(hj, filter_(tbl("phy_s"), b.eq(field(0), lateral_ref(0, anchor=9))), J.JOIN_TYPE_LEFT, anchor=9)
    rel = project(nested_loop_join(lat, tbl("phy_t"), "JOIN_TYPE_LEFT_SEMI"), context_variable("current_date"))
    plan = b.plan(rel, [f"c{i}" for i in range(8)])
    assert analyze(plan) == []
    tree = plan_tree_of(plan)
    for kind in ("top_n", "exchange", "expand", "hash_join", "lateral_join", "nested_loop_join"):
        assert kind in tree


@pytest.mark.unit
def test_explain_shows_a_join_type_no_enum_names_as_its_number():
    """A plan may carry a join type its producer's Substrait version has and ours lacks: explain still draws
    the tree (the number stands for the name) for every join kind, and validate refuses it with its path."""
    from substrait_spark.consumer.analysis.analyze import analyze
    from substrait_spark.consumer.analysis.explain import plan_tree_of

    for rel, kind in (
        (nested_loop_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_INNER"), "nested_loop_join"),
        (hash_join(tbl("phy_l"), tbl("phy_r"), "JOIN_TYPE_INNER", keys((0, 0))), "hash_join"),
    ):
        getattr(rel, kind).type = 99
        plan = PlanBuilder().plan(rel, [f"c{i}" for i in range(4)])
        line = next(line for line in plan_tree_of(plan).splitlines() if kind in line)
        assert " 99" in line and "INNER" not in line, line
        with pytest.raises(UnsupportedFeatureError) as info:
            analyze(plan)
        assert info.value.path == f"relations[0].root.input.{kind}.type"


@pytest.mark.unit
def test_lineage_follows_the_physical_relations():
    from substrait_spark.consumer.analysis.lineage import column_lineage

    b = PlanBuilder()
    right = filter_(tbl("phy_r"), b.eq(field(0), lateral_ref(0, anchor=4)))
    lat = lateral_join(top_n(tbl("phy_l"), (field(1), ASC_NULLS_FIRST), count=2), right, J.JOIN_TYPE_INNER, anchor=4)
    rel = project(expand(lat, field(0), [field(1), field(3)]), context_variable("current_date"))
    lineage = column_lineage(b.plan(rel, ["k", "v", "rk", "b", "ordinal", "d"])).roots[0]

    def cols(sources):
        return {(f.dataset.name, f.field): {str(t) for t in ts} for f, ts in sources.items()}

    assert cols(lineage.field("v")) == {("phy_l", "a"): {"DIRECT/IDENTITY"}, ("phy_r", "b"): {"DIRECT/IDENTITY"}}
    assert cols(lineage.field("d")) == {} and cols(lineage.field("ordinal")) == {}
    indirect = cols(lineage.indirect)
    assert "INDIRECT/SORT" in indirect[("phy_l", "a")]
    assert "INDIRECT/FILTER" in indirect[("phy_r", "k")]


@pytest.mark.spark
def test_outer_reference_to_a_relation_outside_a_lateral_join_is_refused(spark):
    """A `rel_reference` outer reference is meaningful only inside the right input of the lateral join it names."""
    b = PlanBuilder()
    rel = filter_(tbl("phy_r"), b.eq(field(0), lateral_ref(0, anchor=9)))
    with pytest.raises(UnsupportedFeatureError, match="relation 9 outside a lateral join") as err:
        run(b.plan(rel, ["k", "b"]), spark)
    assert err.value.path.endswith(".outer_reference")
