"""Window functions with hand-built plans, each checked against the same query in Spark SQL over the same temp
view: ranking, lag/lead, ntile, value functions, aggregates over ROWS and RANGE frames, partitions, ordering —
both as `Expression.window_function` in a ProjectRel and as a ConsistentPartitionWindowRel. The translated
plan must use Spark's own Window operator (no Python UDF)."""

from __future__ import annotations

import pytest
from plan_builder import (
    ASC_NULLS_FIRST,
    ASC_NULLS_LAST,
    DESC_NULLS_LAST,
    PlanBuilder,
    assert_same_rows,
    date,
    field,
    fp64,
    i32,
    i64,
    lit,
    named,
    project,
    run,
    string,
    view,
)
from substrait_spark.consumer.analysis.analyze import validate_plan
from substrait_spark.consumer.errors import PlanInvalidError, UnsupportedFeatureError
from window_builder import (
    RANGE,
    ROWS,
    UNSPECIFIED,
    current_row,
    following,
    preceding,
    unbounded,
    window,
    window_rel,
    window_rel_function,
)

# Each test carries its tier: `unit` (pure Python) or `spark`.

# g (partition), k (order key, ties and a NULL), v (value, NULLs), d (a date)
ROWS_W = [
    ("a", 1, 10, "2024-01-01"),
    ("a", 2, 20, "2024-01-02"),
    ("a", 2, None, "2024-01-03"),
    ("a", 4, 40, "2024-01-05"),
    ("a", None, 5, "2024-01-06"),
    ("b", 1, 7, "2024-02-01"),
    ("b", 3, 7, "2024-02-02"),
    ("b", 6, None, "2024-02-03"),
    (None, 1, 1, "2024-03-01"),
]
COLUMNS = ["g", "k", "v", "d"]


@pytest.fixture(autouse=True)
def _tables_for_spark_tests(request):
    """The module's views for its Spark tests only: its `unit` tests start no Spark."""
    if request.node.get_closest_marker("unit") is None:
        request.getfixturevalue("tables")


@pytest.fixture(scope="module")
def tables(spark):
    view(spark, "win_t", "g string, k int, v int, d string", ROWS_W)
    spark.sql("select g, k, v, cast(d as date) as d from win_t").createOrReplaceTempView("win_td")
    yield
    spark.catalog.dropTempView("win_t")
    spark.catalog.dropTempView("win_td")


def tbl():
    return named("win_td", COLUMNS, [string(), i32(), i32(), date()])


G, K, V, D = field(0), field(1), field(2), field(3)
BY_G = [G]
ORDER_K = [(K, ASC_NULLS_LAST)]
SQL_OVER = "partition by g order by k asc nulls last"


def check_project(spark, b: PlanBuilder, exprs, sql_exprs: list[str], expect_window: bool = True):
    """Project the window expressions over the table; compare with Spark SQL's g, k, v, <exprs>."""
    names = [*COLUMNS, *(f"w{i}" for i in range(len(exprs)))]
    plan = b.plan(project(tbl(), *exprs), names)
    got = run(plan, spark)
    sql = f"select g, k, v, d, {', '.join(f'{e} as w{i}' for i, e in enumerate(sql_exprs))} from win_td"
    assert_same_rows(got, spark.sql(sql))
    text = got._jdf.queryExecution().executedPlan().toString()
    assert ("Window" in text) == expect_window, text
    assert "PythonUDF" not in text and "BatchEvalPython" not in text
    assert validate_plan(plan) == []
    return got


# --- ranking, lag/lead, ntile, value functions --------------------------------------------------------------


@pytest.mark.spark
def test_ranking_functions(spark):
    b = PlanBuilder()
    kw = {"partitions": BY_G, "sorts": ORDER_K}
    exprs = [window(b, f, **kw) for f in ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist")]
    got = check_project(
        spark,
        b,
        exprs,
        [f"{f}() over ({SQL_OVER})" for f in ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist")],
    )
    types = [f.dataType.simpleString() for f in got.schema.fields[4:]]
    assert types == ["bigint", "bigint", "bigint", "double", "double"]  # Substrait: i64 and fp64


@pytest.mark.spark
def test_rank_descending_and_nulls_first(spark):
    b = PlanBuilder()
    exprs = [
        window(b, "rank", partitions=BY_G, sorts=[(K, DESC_NULLS_LAST)]),
        window(b, "dense_rank", sorts=[(K, ASC_NULLS_FIRST), (V, DESC_NULLS_LAST)]),
    ]
    check_project(
        spark,
        b,
        exprs,
        [
            "rank() over (partition by g order by k desc nulls last)",
            "dense_rank() over (order by k asc nulls first, v desc nulls last)",
        ],
    )


@pytest.mark.spark
def test_lag_lead(spark):
    b = PlanBuilder()
    kw = {"partitions": BY_G, "sorts": [(K, ASC_NULLS_LAST), (V, ASC_NULLS_LAST)]}
    exprs = [
        window(b, "lag", V, **kw),
        window(b, "lead", V, lit(2), **kw),
        window(b, "lag", V, lit(2), lit(-1), **kw),
        window(b, "lead", V, lit(1), K, **kw),  # a default computed from the current row
        window(b, "lag", V, lit(-1), **kw),  # a negative offset looks the other way
    ]
    over = f"{SQL_OVER}, v asc nulls last"
    check_project(
        spark,
        b,
        exprs,
        [
            f"lag(v) over ({over})",
            f"lead(v, 2) over ({over})",
            f"lag(v, 2, -1) over ({over})",
            f"lead(v, 1, k) over ({over})",
            f"lead(v, 1) over ({over})",
        ],
    )


@pytest.mark.spark
def test_lag_offset_must_be_constant(spark):
    b = PlanBuilder()
    plan = b.plan(project(tbl(), window(b, "lag", V, K, sorts=ORDER_K)), [*COLUMNS, "w"])
    with pytest.raises(UnsupportedFeatureError, match="row_offset computed by an expression") as err:
        run(plan, spark)
    assert err.value.path == "relations[0].root.input.project.expressions[0].window_function"
    [finding] = validate_plan(plan)
    assert "computed by an expression" in finding.feature and finding.path == err.value.path


@pytest.mark.spark
def test_ntile_and_value_functions(spark):
    b = PlanBuilder()
    whole = {"bounds": ROWS, "lower": unbounded(), "upper": unbounded()}
    exprs = [
        window(b, "ntile", lit(2), partitions=BY_G, sorts=ORDER_K, out=i32()),
        window(b, "first_value", V, partitions=BY_G, sorts=ORDER_K, **whole),
        window(b, "last_value", V, partitions=BY_G, sorts=ORDER_K, **whole),
        window(b, "nth_value", V, lit(2), partitions=BY_G, sorts=ORDER_K, **whole),
        window(b, "first_value", V, partitions=BY_G, sorts=ORDER_K, lower=following(1), upper=following(2)),
    ]
    whole_sql = f"{SQL_OVER} rows between unbounded preceding and unbounded following"
    check_project(
        spark,
        b,
        exprs,
        [
            f"ntile(2) over ({SQL_OVER})",
            f"first_value(v) over ({whole_sql})",
            f"last_value(v) over ({whole_sql})",
            f"nth_value(v, 2) over ({whole_sql})",
            f"first_value(v) over ({SQL_OVER} rows between 1 following and 2 following)",
        ],
    )


# --- aggregates over frames ---------------------------------------------------------------------------------


@pytest.mark.spark
def test_aggregates_over_rows_frames(spark):
    b = PlanBuilder()
    kw = {"partitions": BY_G, "sorts": [(K, ASC_NULLS_LAST), (V, ASC_NULLS_LAST)], "bounds": ROWS}
    exprs = [
        window(b, "sum", V, lower=unbounded(), upper=current_row(), out=i64(), **kw),
        window(b, "avg", V, lower=preceding(1), upper=following(1), out=fp64(), **kw),
        window(b, "min", V, lower=preceding(2), upper=current_row(), **kw),
        window(b, "max", V, lower=current_row(), upper=unbounded(), **kw),
        window(b, "count", V, lower=preceding(lit(1)), upper=following(lit(1)), out=i64(), **kw),  # offset_expr
        window(b, "count", out=i64(), **kw),  # no bounds: the whole partition
    ]
    over = f"{SQL_OVER}, v asc nulls last rows between"
    check_project(
        spark,
        b,
        exprs,
        [
            f"sum(v) over ({over} unbounded preceding and current row)",
            f"avg(v) over ({over} 1 preceding and 1 following)",
            f"min(v) over ({over} 2 preceding and current row)",
            f"max(v) over ({over} current row and unbounded following)",
            f"count(v) over ({over} 1 preceding and 1 following)",
            "count(1) over (partition by g)",
        ],
    )


@pytest.mark.spark
def test_aggregates_over_range_frames(spark):
    b = PlanBuilder()
    kw = {"partitions": BY_G, "sorts": ORDER_K, "bounds": RANGE}
    exprs = [
        window(b, "sum", V, lower=unbounded(), upper=current_row(), out=i64(), **kw),  # peers included
        window(b, "sum", V, lower=preceding(1), upper=following(1), out=i64(), **kw),
        window(b, "count", out=i64(), lower=current_row(), upper=following(2), **kw),
        window(b, "max", V, partitions=BY_G, sorts=ORDER_K, bounds=UNSPECIFIED, lower=unbounded(), upper=current_row()),
    ]
    over = f"{SQL_OVER} range between"
    check_project(
        spark,
        b,
        exprs,
        [
            f"sum(v) over ({over} unbounded preceding and current row)",
            f"sum(v) over ({over} 1 preceding and 1 following)",
            f"count(1) over ({over} current row and 2 following)",
            f"max(v) over ({over} unbounded preceding and current row)",  # unspecified + sorts: RANGE
        ],
    )


@pytest.mark.spark
def test_aggregates_without_order_and_distinct(spark):
    b = PlanBuilder()
    exprs = [
        window(b, "sum", V, partitions=BY_G, out=i64()),
        window(b, "count", V, partitions=BY_G, distinct=True, out=i64()),
        window(b, "sum", V, partitions=BY_G, distinct=True, out=i64()),
        window(b, "avg", V, partitions=BY_G, distinct=True, out=fp64()),
        window(b, "sum", V, bounds=RANGE, lower=unbounded(), upper=current_row(), out=i64()),  # all peers
    ]
    plan = b.plan(project(tbl(), *exprs), [*COLUMNS, "s", "cd", "sd", "ad", "all"])
    got = run(plan, spark)
    # Spark SQL has no DISTINCT window aggregate: the same per-group values by a GROUP BY joined back
    sql = """select o.g, k, v, d, sum(v) over (partition by o.g), x.cd, x.sd, x.ad, sum(v) over ()
        from win_td o left join (select g, count(distinct v) cd, sum(distinct v) sd, avg(distinct v) ad
                                 from win_td group by g) x on o.g <=> x.g"""
    assert_same_rows(got, spark.sql(sql))
    assert "Window" in got._jdf.queryExecution().executedPlan().toString()


@pytest.mark.spark
def test_range_offset_over_a_date_is_refused(spark):
    b = PlanBuilder()
    e = window(b, "count", sorts=[(D, ASC_NULLS_LAST)], bounds=RANGE, lower=preceding(1), upper=current_row())
    plan = b.plan(project(tbl(), e), [*COLUMNS, "w"])
    with pytest.raises(UnsupportedFeatureError, match="RANGE window bound with an offset over a date") as err:
        run(plan, spark)
    assert err.value.path == "relations[0].root.input.project.expressions[0].window_function"


@pytest.mark.spark
def test_range_fractional_offset_is_refused(spark):
    b = PlanBuilder()
    e = window(b, "count", sorts=ORDER_K, bounds=RANGE, lower=preceding(lit(1.5)), upper=current_row())
    plan = b.plan(project(tbl(), e), [*COLUMNS, "w"])
    with pytest.raises(UnsupportedFeatureError, match=r"non-integer offset 1\.5") as err:
        run(plan, spark)
    assert err.value.path.endswith("window_function.lower_bound.preceding")
    [finding] = validate_plan(plan)  # `validate` finds it without Spark
    assert "non-integer offset" in finding.feature and finding.path == err.value.path


@pytest.mark.spark
def test_range_offset_without_sort_is_invalid(spark):
    b = PlanBuilder()
    e = window(b, "count", bounds=RANGE, lower=preceding(1), upper=current_row())
    with pytest.raises(PlanInvalidError, match="no sort field"):
        run(b.plan(project(tbl(), e), [*COLUMNS, "w"]), spark)


@pytest.mark.spark
def test_window_output_can_be_filtered(spark):
    """A window column is computed in its own select: a filter above it must not pull it into a WHERE."""
    from plan_builder import filter_

    b = PlanBuilder()
    rel = filter_(
        project(tbl(), window(b, "row_number", partitions=BY_G, sorts=[(K, ASC_NULLS_LAST), (V, ASC_NULLS_LAST)])),
        b.eq(field(4), lit(1, i64())),
    )
    got = run(b.plan(rel, [*COLUMNS, "rn"]), spark)
    sql = f"select * from (select *, row_number() over ({SQL_OVER}, v asc nulls last) as rn from win_td) where rn = 1"
    assert_same_rows(got, spark.sql(sql))


# --- ConsistentPartitionWindowRel ---------------------------------------------------------------------------


@pytest.mark.spark
def test_consistent_partition_window_rel(spark):
    b = PlanBuilder()
    fns = [
        window_rel_function(b, "row_number"),
        window_rel_function(b, "rank"),
        window_rel_function(b, "lag", V),
        window_rel_function(b, "sum", V, lower=unbounded(), upper=current_row(), out=i64()),
        window_rel_function(b, "avg", V, bounds=RANGE, lower=preceding(2), upper=current_row(), out=fp64()),
        window_rel_function(b, "count", out=i64()),  # no bounds: the whole partition
    ]
    rel = window_rel(tbl(), fns, partitions=BY_G, sorts=[(K, ASC_NULLS_LAST)])
    names = [*COLUMNS, "rn", "rk", "lg", "s", "a", "n"]
    plan = b.plan(rel, names)
    got = run(plan, spark)
    assert got.columns == names
    # row_number/lag over ties in k are not deterministic: compare those on a tie-free ordering below
    sql = f"""select g, k, v, d, rank() over ({SQL_OVER}) as rk,
        sum(v) over ({SQL_OVER} rows between unbounded preceding and current row) as s0,
        avg(v) over ({SQL_OVER} range between 2 preceding and current row) as a,
        count(1) over (partition by g) as n
        from win_td"""
    expected = spark.sql(sql)
    cols = ["g", "k", "v", "d", "rk", "a", "n"]
    assert_same_rows(got.select(*cols), expected.select(*cols))
    assert "Window" in got._jdf.queryExecution().executedPlan().toString()
    assert validate_plan(plan) == []


@pytest.mark.spark
def test_window_rel_with_emit_and_tie_free_order(spark):
    b = PlanBuilder()
    fns = [
        window_rel_function(b, "row_number"),
        window_rel_function(b, "lead", V, lit(1), lit(0)),
        window_rel_function(b, "sum", V, lower=preceding(1), upper=current_row(), out=i64()),
    ]
    order = [(K, ASC_NULLS_LAST), (D, ASC_NULLS_LAST)]
    rel = window_rel(tbl(), fns, partitions=BY_G, sorts=order, emit=[0, 3, 4, 5, 6])
    got = run(b.plan(rel, ["g", "d", "rn", "nx", "s"]), spark)
    over = f"{SQL_OVER}, d asc nulls last"
    sql = f"""select g, d, row_number() over ({over}), lead(v, 1, 0) over ({over}),
        sum(v) over ({over} rows between 1 preceding and current row) from win_td"""
    assert_same_rows(got, spark.sql(sql))


@pytest.mark.spark
def test_unknown_window_function_is_unsupported(spark):
    b = PlanBuilder()
    rel = window_rel(tbl(), [window_rel_function(b, "no_such_window")], sorts=ORDER_K)
    plan = b.plan(rel, [*COLUMNS, "x"])
    with pytest.raises(UnsupportedFeatureError, match="window function no_such_window") as err:
        run(plan, spark)
    assert [(f.feature, f.path) for f in validate_plan(plan)] == [("window function no_such_window", err.value.path)]


@pytest.mark.unit
def test_explain_and_lineage_of_windows():
    """`explain` shows the window relation with its schema; lineage: window columns come from their arguments
    (AGGREGATION) and the partition and order keys (WINDOW)."""
    from substrait_spark.consumer.analysis.explain import plan_tree_of
    from substrait_spark.consumer.analysis.lineage import column_lineage

    b = PlanBuilder()
    fns = [window_rel_function(b, "row_number"), window_rel_function(b, "sum", V, out=i64())]
    rel = window_rel(tbl(), fns, partitions=BY_G, sorts=ORDER_K)
    rel = project(rel, window(b, "lag", V, partitions=BY_G, sorts=ORDER_K))
    plan = b.plan(rel, [*COLUMNS, "rn", "s", "lg"])
    tree = plan_tree_of(plan)
    assert "window partitions=1 [$0] sorts=1 [$1 ASC NULLS LAST] functions=2 [row_number(), sum($2)]" in tree
    assert "-> 6 columns" in tree and "lag($2) OVER (...)" in tree
    fields = column_lineage(plan).to_dict()["outputs"][0]["columnLineage"]["fields"]

    def sources(name: str) -> set[tuple[str, str]]:
        return {(f["field"], t["subtype"]) for f in fields[name]["inputFields"] for t in f["transformations"]}

    assert sources("rn") == {("g", "WINDOW"), ("k", "WINDOW")}
    assert sources("s") == {("v", "AGGREGATION"), ("g", "WINDOW"), ("k", "WINDOW")}
    assert ("v", "AGGREGATION") in sources("lg") or ("v", "IDENTITY") in sources("lg")


@pytest.mark.spark
def test_window_inside_an_expression_and_user_aggregate_as_window(spark):
    """A window call nested in a scalar call; an aggregate a consumer subclass adds works over a frame too."""
    from pyspark.sql import functions as F
    from substrait_spark.consumer import to_dataframe
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    class WithMaxBy(SubstraitConsumer):
        aggregate_functions = {**SubstraitConsumer.aggregate_functions, "my_max": lambda c, distinct: F.max(c.cols[0])}

    b = PlanBuilder()
    rn = window(b, "row_number", partitions=BY_G, sorts=[(K, ASC_NULLS_LAST), (D, ASC_NULLS_LAST)])
    exprs = [
        b.call("add", rn, lit(100, i64()), out=i64()),
        window(b, "my_max", V, partitions=BY_G, sorts=ORDER_K, lower=preceding(1), upper=current_row()),
    ]
    plan = b.plan(project(tbl(), *exprs), [*COLUMNS, "rn100", "m"])
    got = to_dataframe(plan, spark, SessionCatalogResolver(), consumer_class=WithMaxBy)
    sql = f"""select g, k, v, d, 100 + row_number() over ({SQL_OVER}, d asc nulls last),
        max(v) over ({SQL_OVER} rows between 1 preceding and current row) from win_td"""
    assert_same_rows(got, spark.sql(sql))
    assert validate_plan(plan, WithMaxBy) == []
    assert [f.feature for f in validate_plan(plan)] == ["window function my_max"]


@pytest.mark.spark
def test_distinct_median_over_a_window_is_unsupported(spark):
    b = PlanBuilder()
    plan = b.plan(project(tbl(), window(b, "median", V, partitions=BY_G, distinct=True)), [*COLUMNS, "m"])
    with pytest.raises(UnsupportedFeatureError, match="median: DISTINCT invocation over a window"):
        run(plan, spark)


@pytest.mark.spark
def test_nth_value_domain_error_option(spark):
    b = PlanBuilder()
    whole = {"partitions": BY_G, "sorts": ORDER_K, "lower": unbounded(), "upper": unbounded()}
    nan = window(b, "nth_value", V, lit(0), options={"on_domain_error": ["NAN"]}, **whole)
    got = run(b.plan(project(tbl(), nan), [*COLUMNS, "n"]), spark)
    assert {r.n for r in got.collect()} == {None}
    error = window(b, "nth_value", V, lit(0), options={"on_domain_error": ["ERROR"]}, **whole)
    with pytest.raises(Exception, match="window_offset 0 is not a positive integer"):
        run(b.plan(project(tbl(), error), [*COLUMNS, "n"]), spark).collect()


@pytest.mark.spark
def test_window_in_a_correlated_subquery_is_unsupported(spark):
    """The correlated predicate is applied where the body joins its host: a window below it would see the rows
    of every correlation key."""
    from plan_builder import exists, filter_, outer

    b = PlanBuilder()
    body = project(filter_(tbl(), b.eq(field(0), outer(0))), window(b, "row_number", sorts=ORDER_K))
    rel = filter_(tbl(), exists(filter_(body, b.eq(field(4), lit(1, i64())))))
    plan = b.plan(rel, COLUMNS)
    with pytest.raises(UnsupportedFeatureError, match="window function inside a correlated subquery") as err:
        run(plan, spark)
    assert err.value.path.endswith("project.expressions[0].window_function")
    assert [(f.feature, f.path) for f in validate_plan(plan)] == [
        ("window function inside a correlated subquery", err.value.path)
    ]
