"""Subqueries with hand-built plans, checked against Spark SQL, DuckDB or a three-valued Python oracle.

Scalar (uncorrelated, correlated over an aggregate, more than one row), IN / NOT IN with NULLs,
EXISTS / NOT EXISTS, ANY / ALL set comparisons, subqueries in an OR or a projection (mark joins),
nested subqueries and outer references with steps_out.

Predicates under a cast to boolean, a NOT, an OR or a CASE — in a filter over a cross product, in a projection,
in a join condition — checked against DuckDB on the same SQL (Spark 3.5's own IN in a projection answers FALSE
where SQL says NULL), and TPC-H q18 as Isthmus writes it (`cast(<IN> as boolean)` beside the equi-conditions of
a filter over crosses) with variants, over TPC-H sf0.01 against DuckDB. The plan invariant (tests/
plan_invariants.py) checks each of them for cartesian products the plan does not ask for.
"""

from __future__ import annotations

import operator
from pathlib import Path

import pytest
from oracles import assert_same_result
from plan_builder import (
    ASC_NULLS_LAST,
    DESC_NULLS_FIRST,
    JoinRel,
    PlanBuilder,
    aggregate,
    assert_same_rows,
    boolean,
    cast,
    cross,
    date,
    decimal_,
    exists,
    fetch,
    field,
    filter_,
    fp64,
    i32,
    i64,
    if_then,
    in_list,
    in_subquery,
    join,
    lit,
    named,
    null,
    outer,
    project,
    run,
    scalar_subquery,
    set_comparison,
    sort,
    string,
    views,
    virtual,
)

pytestmark = [pytest.mark.spark]

EMP = [(1, 10, 100), (2, 10, 200), (3, 20, 150), (4, 20, None), (5, 30, 300), (6, None, 50), (7, 10, 120)]
DEPT = [(10, "eng"), (20, "ops"), (30, "hr"), (40, "empty"), (None, "nodept")]
TABLES = {
    "sq_emp": ("id int, dept int, sal int", EMP),
    "sq_dept": ("id int, name string", DEPT),
    "sq_n": ("v int", [(1,), (None,)]),
    "sq_v": ("v int", [(100,), (150,)]),
}


@pytest.fixture(scope="module", autouse=True)
def tables(spark):
    with views(spark, TABLES):
        yield


def emp():
    """sq_emp: 0 id, 1 dept, 2 sal."""
    return named("sq_emp", ["id", "dept", "sal"], [i32(), i32(), i32()])


def dept():
    """sq_dept: 0 id, 1 name."""
    return named("sq_dept", ["id", "name"], [i32(), string()])


def col(table: str, ddl_name: str = "v"):
    return named(table, [ddl_name], [i32()])


def sals_of_dept(b: PlanBuilder, d: int):
    """`select sal from sq_emp where dept = d`."""
    return project(filter_(emp(), b.eq(field(1), lit(d))), field(2), emit=[3])


EMP_NAMES = ["id", "dept", "sal"]


# Three-valued oracles ----------------------------------------------------------------------------


def cmp3(op, a, b):
    return None if a is None or b is None else op(a, b)


def any3(x, op, values):
    results = [cmp3(op, x, v) for v in values]
    return True if True in results else (None if None in results else False)


def all3(x, op, values):
    results = [cmp3(op, x, v) for v in values]
    return False if False in results else (None if None in results else True)


def sals(d=None, rows=EMP):
    return [r[2] for r in rows if d is None or r[1] == d]


# --------------------------------------------------------------------------------------------------
# Scalar subqueries
# --------------------------------------------------------------------------------------------------


def test_scalar_uncorrelated_in_filter(spark):
    b = PlanBuilder()
    avg = aggregate(emp(), measures=[b.agg("avg", field(2), out=fp64())])
    rel = filter_(emp(), b.call("gt", field(2), scalar_subquery(avg), out=boolean()))
    got = run(b.plan(rel, EMP_NAMES), spark)
    assert_same_rows(got, spark.sql("select * from sq_emp where sal > (select avg(sal) from sq_emp)"))


def test_scalar_uncorrelated_in_projection_and_empty(spark):
    b = PlanBuilder()
    top = aggregate(emp(), measures=[b.agg("max", field(2), out=i32())])
    none = project(filter_(emp(), b.eq(field(0), lit(99))), field(2), emit=[3])
    rel = project(
        emp(),
        b.call("subtract", scalar_subquery(top), field(2), out=i32()),
        scalar_subquery(none),
        emit=[0, 3, 4],
    )
    got = run(b.plan(rel, ["id", "gap", "nothing"]), spark)
    want = spark.sql(
        "select id, (select max(sal) from sq_emp) - sal, (select sal from sq_emp where id = 99) from sq_emp"
    )
    assert_same_rows(got, want)


def test_scalar_uncorrelated_more_than_one_row_fails(spark):
    b = PlanBuilder()
    rel = project(dept(), scalar_subquery(sals_of_dept(b, 10)))
    df = run(b.plan(rel, ["id", "name", "s"]), spark)
    with pytest.raises(Exception, match=r"(?i)more than one row"):
        df.collect()


def _avg_sal_of_outer_dept(b: PlanBuilder, outer_dept: int = 1, steps: int = 1):
    """`select avg(sal) from sq_emp e2 where e2.dept = <outer column>`."""
    body = filter_(emp(), b.eq(field(1), outer(outer_dept, steps)))
    return aggregate(body, measures=[b.agg("avg", field(2), out=fp64())])


def test_scalar_correlated_over_aggregate_in_filter(spark):
    b = PlanBuilder()
    rel = filter_(emp(), b.call("gt", field(2), scalar_subquery(_avg_sal_of_outer_dept(b)), out=boolean()))
    got = run(b.plan(rel, EMP_NAMES), spark)
    want = spark.sql("select * from sq_emp e where sal > (select avg(sal) from sq_emp e2 where e2.dept = e.dept)")
    assert_same_rows(got, want)


def test_scalar_correlated_over_aggregate_in_projection(spark):
    b = PlanBuilder()
    top = aggregate(filter_(emp(), b.eq(field(1), outer(0))), measures=[b.agg("max", field(2), out=i32())])
    rel = project(dept(), scalar_subquery(top))
    got = run(b.plan(rel, ["id", "name", "top"]), spark)
    want = spark.sql("select d.*, (select max(sal) from sq_emp e where e.dept = d.id) from sq_dept d")
    assert_same_rows(got, want)


def _count_of_outer_dept(b: PlanBuilder, distinct: bool = False):
    """`select count(*) from sq_emp e where e.dept = <outer d.id>` (count(DISTINCT sal) when `distinct`)."""
    args = [field(2)] if distinct else []
    body = filter_(emp(), b.eq(field(1), outer(0)))
    return aggregate(body, measures=[b.agg("count", *args, out=i64(), distinct=distinct)])


def test_scalar_correlated_count_is_zero_for_no_rows(spark):
    # COUNT over no rows is 0, not NULL (the "count bug" of naive decorrelation).
    b = PlanBuilder()
    passed_on = project(_count_of_outer_dept(b, distinct=True), field(0), emit=[1])  # a projection passing it on
    rel = project(dept(), scalar_subquery(_count_of_outer_dept(b)), scalar_subquery(passed_on))
    got = run(b.plan(rel, ["id", "name", "n", "nd"]), spark)
    want = spark.sql(
        "select d.*, (select count(*) from sq_emp e where e.dept = d.id), "
        "(select count(distinct sal) from sq_emp e where e.dept = d.id) from sq_dept d"
    )
    assert_same_rows(got, want)
    assert (40, "empty", 0, 0) in [tuple(r) for r in got.collect()]


def test_scalar_correlated_count_in_filter(spark):
    b = PlanBuilder()
    rel = filter_(dept(), b.call("lt", scalar_subquery(_count_of_outer_dept(b)), lit(2, i64()), out=boolean()))
    got = run(b.plan(rel, ["id", "name"]), spark)
    want = spark.sql("select * from sq_dept d where (select count(*) from sq_emp e where e.dept = d.id) < 2")
    assert_same_rows(got, want)


def test_scalar_correlated_expression_over_count_is_refused(spark):
    # count(*) + 1 over no rows is 1: not derivable from the join, so the plan is refused with a typed error.
    from substrait_spark.consumer.errors import UnsupportedFeatureError

    b = PlanBuilder()
    plus_one = project(_count_of_outer_dept(b), b.call("add", field(0), lit(1, i64()), out=i64()), emit=[1])
    rel = project(dept(), scalar_subquery(plus_one))
    with pytest.raises(UnsupportedFeatureError, match="COUNT"):
        run(b.plan(rel, ["id", "name", "n"]), spark)


def test_scalar_correlated_without_aggregate_at_most_one_row(spark):
    b = PlanBuilder()
    name = project(filter_(dept(), b.eq(field(0), outer(1))), field(1), emit=[2])
    rel = project(emp(), scalar_subquery(name), emit=[0, 3])
    got = run(b.plan(rel, ["id", "dname"]), spark)
    # Spark SQL refuses a correlated scalar subquery without an aggregate; dept ids are unique, so a left join.
    want = spark.sql("select e.id, d.name from sq_emp e left join sq_dept d on d.id = e.dept")
    assert_same_rows(got, want)


def test_scalar_correlated_more_than_one_row_fails(spark):
    b = PlanBuilder()
    body = project(filter_(emp(), b.eq(field(1), outer(0))), field(2), emit=[3])
    rel = project(dept(), scalar_subquery(body))
    df = run(b.plan(rel, ["id", "name", "sal"]), spark)
    with pytest.raises(Exception, match=r"(?i)more than one row"):
        df.collect()


# --------------------------------------------------------------------------------------------------
# IN / NOT IN
# --------------------------------------------------------------------------------------------------


def test_in_subquery(spark):
    b = PlanBuilder()
    ids = project(dept(), field(0), emit=[2])
    rel = filter_(emp(), in_subquery([field(1)], ids))
    got = run(b.plan(rel, EMP_NAMES), spark)
    assert_same_rows(got, spark.sql("select * from sq_emp where dept in (select id from sq_dept)"))


def test_not_in_subquery_with_null_filters_everything(spark):
    b = PlanBuilder()
    rel = filter_(emp(), b.not_(in_subquery([field(0)], col("sq_n"))))
    got = run(b.plan(rel, EMP_NAMES), spark)
    assert got.collect() == []
    assert spark.sql("select * from sq_emp where id not in (select v from sq_n)").collect() == []


def test_not_in_subquery_without_nulls(spark):
    b = PlanBuilder()
    rel = filter_(emp(), b.not_(in_subquery([field(2)], col("sq_v"))))
    got = run(b.plan(rel, EMP_NAMES), spark)
    assert_same_rows(got, spark.sql("select * from sq_emp where sal not in (select v from sq_v)"))


def test_not_in_literal_list_with_null_filters_everything(spark):
    b = PlanBuilder()
    rel = filter_(emp(), b.not_(in_list(field(0), lit(1), null(i32()))))
    assert run(b.plan(rel, EMP_NAMES), spark).collect() == []


def test_in_subquery_correlated(spark):
    # Employees whose salary is one of the salaries in their own department above 110.
    b = PlanBuilder()
    body = project(
        filter_(emp(), b.and_(b.eq(field(1), outer(1)), b.call("gt", field(2), lit(110), out=boolean()))),
        field(2),
        emit=[3],
    )
    rel = filter_(emp(), in_subquery([field(2)], body))
    got = run(b.plan(rel, EMP_NAMES), spark)
    want = spark.sql(
        "select * from sq_emp e where sal in (select sal from sq_emp e2 where e2.dept = e.dept and e2.sal > 110)"
    )
    assert_same_rows(got, want)


def test_in_and_not_in_as_values_are_three_valued(spark):
    # In a projection the subquery becomes a mark join: TRUE / FALSE / NULL exactly as SQL says.
    b = PlanBuilder()
    with_null = project(filter_(emp(), b.call("gt", field(0), lit(3), out=boolean())), field(2), emit=[3])
    rel = project(
        emp(),
        in_subquery([field(2)], col("sq_v")),
        in_subquery([field(2)], with_null),
        b.not_(in_subquery([field(2)], with_null)),
        emit=[0, 3, 4, 5],
    )
    got = run(b.plan(rel, ["id", "in_v", "in_n", "not_in_n"]), spark)
    hay_v, hay_n = [100, 150], [r[2] for r in EMP if r[0] > 3]
    want = []
    for i, _, s in EMP:
        in_n = any3(s, operator.eq, hay_n)
        want.append((i, any3(s, operator.eq, hay_v), in_n, None if in_n is None else not in_n))
    assert_same_rows(got, want)


# --------------------------------------------------------------------------------------------------
# EXISTS / NOT EXISTS
# --------------------------------------------------------------------------------------------------


def _emps_of_outer_dept(b: PlanBuilder, extra=None):
    cond = b.eq(field(1), outer(0))
    return filter_(emp(), b.and_(cond, extra) if extra is not None else cond)


def test_exists_correlated(spark):
    b = PlanBuilder()
    rel = filter_(dept(), exists(_emps_of_outer_dept(b)))
    got = run(b.plan(rel, ["id", "name"]), spark)
    want = spark.sql("select * from sq_dept d where exists (select 1 from sq_emp e where e.dept = d.id)")
    assert_same_rows(got, want)


def test_not_exists_correlated(spark):
    b = PlanBuilder()
    rel = filter_(dept(), b.not_(exists(_emps_of_outer_dept(b))))
    got = run(b.plan(rel, ["id", "name"]), spark)
    want = spark.sql("select * from sq_dept d where not exists (select 1 from sq_emp e where e.dept = d.id)")
    assert_same_rows(got, want)


def test_exists_with_non_equality_correlation(spark):
    b = PlanBuilder()
    # e.dept = d.id and e.sal > d.id * 10
    extra = b.call("gt", field(2), b.call("multiply", outer(0), lit(10), out=i32()), out=boolean())
    rel = filter_(dept(), exists(_emps_of_outer_dept(b, extra)))
    got = run(b.plan(rel, ["id", "name"]), spark)
    want = spark.sql(
        "select * from sq_dept d where exists (select 1 from sq_emp e where e.dept = d.id and e.sal > d.id * 10)"
    )
    assert_same_rows(got, want)


def test_exists_uncorrelated(spark):
    b = PlanBuilder()
    some = filter_(emp(), b.call("gt", field(2), lit(250), out=boolean()))
    none = filter_(emp(), b.call("gt", field(2), lit(1000), out=boolean()))
    assert len(run(b.plan(filter_(dept(), exists(some)), ["id", "name"]), spark).collect()) == len(DEPT)
    assert run(b.plan(filter_(dept(), exists(none)), ["id", "name"]), spark).collect() == []


def test_exists_inside_or(spark):
    b = PlanBuilder()
    rich = b.call("gt", field(2), lit(250), out=boolean())
    cond = b.or_(exists(_emps_of_outer_dept(b, rich)), b.eq(field(1), lit("ops")))
    got = run(b.plan(filter_(dept(), cond), ["id", "name"]), spark)
    want = spark.sql(
        "select * from sq_dept d "
        "where exists (select 1 from sq_emp e where e.dept = d.id and e.sal > 250) or d.name = 'ops'"
    )
    assert_same_rows(got, want)


def test_not_exists_and_in_inside_or(spark):
    b = PlanBuilder()
    cond = b.or_(
        b.not_(exists(_emps_of_outer_dept(b))),
        in_subquery([field(0)], project(emp(), field(1), emit=[3])),
    )
    rel = filter_(dept(), b.and_(cond, b.call("is_not_null", field(1), out=boolean())))
    got = run(b.plan(rel, ["id", "name"]), spark)
    want = spark.sql(
        "select * from sq_dept d where (not exists (select 1 from sq_emp e where e.dept = d.id) "
        "or d.id in (select dept from sq_emp)) and d.name is not null"
    )
    assert_same_rows(got, want)


def test_exists_as_a_value(spark):
    b = PlanBuilder()
    rel = project(dept(), exists(_emps_of_outer_dept(b)), emit=[0, 2])
    got = run(b.plan(rel, ["id", "has"]), spark)
    assert_same_rows(got, [(d, any(e[1] == d for e in EMP) if d is not None else False) for d, _ in DEPT])


# --------------------------------------------------------------------------------------------------
# ANY / ALL
# --------------------------------------------------------------------------------------------------

OPS = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}
COMPARISONS = [
    (">", "ANY", 10),
    (">", "ALL", 10),
    ("<", "ALL", 20),  # 20's salaries hold a NULL: never TRUE
    ("=", "ANY", 20),
    ("<>", "ALL", 10),
    (">=", "ALL", 40),  # no rows: TRUE, even for a NULL salary
    ("<", "ANY", 40),  # no rows: FALSE
    ("<=", "ANY", 30),
]


def _cmp_oracle(op, red, d):
    hay = sals(d)
    fn = any3 if red == "ANY" else all3
    return [(i, fn(s, OPS[op], hay)) for i, _, s in EMP]


@pytest.mark.parametrize("op, red, d", COMPARISONS, ids=lambda v: str(v))
def test_set_comparison_in_filter(spark, op, red, d):
    b = PlanBuilder()
    rel = filter_(emp(), set_comparison(field(2), op, red, sals_of_dept(b, d)), emit=[0])
    got = run(b.plan(rel, ["id"]), spark)
    assert_same_rows(got, [(i,) for i, v in _cmp_oracle(op, red, d) if v is True])


@pytest.mark.parametrize("op, red, d", COMPARISONS, ids=lambda v: str(v))
def test_set_comparison_as_value(spark, op, red, d):
    b = PlanBuilder()
    rel = project(emp(), set_comparison(field(2), op, red, sals_of_dept(b, d)), emit=[0, 3])
    got = run(b.plan(rel, ["id", "v"]), spark)
    assert_same_rows(got, _cmp_oracle(op, red, d))


def test_set_comparison_negated_in_filter(spark):
    b = PlanBuilder()
    rel = filter_(emp(), b.not_(set_comparison(field(2), ">", "ANY", sals_of_dept(b, 20))), emit=[0])
    got = run(b.plan(rel, ["id"]), spark)
    want = [(i,) for i, _, s in EMP if any3(s, operator.gt, sals(20)) is False]
    assert_same_rows(got, want)


def test_set_comparison_correlated(spark):
    # The top earners of each department: sal >= ALL (salaries of the same department).
    b = PlanBuilder()
    same_dept = project(filter_(emp(), b.eq(field(1), outer(1))), field(2), emit=[3])
    rel = filter_(emp(), set_comparison(field(2), ">=", "ALL", same_dept), emit=[0])
    got = run(b.plan(rel, ["id"]), spark)
    want = [(i,) for i, d, s in EMP if all3(s, operator.ge, [r[2] for r in EMP if cmp3(operator.eq, r[1], d)])]
    assert_same_rows(got, want)


# --------------------------------------------------------------------------------------------------
# Nested subqueries and steps_out
# --------------------------------------------------------------------------------------------------


def test_nested_subquery_correlated_to_its_own_parent(spark):
    # Departments with an employee who earns more than the average of that employee's department.
    b = PlanBuilder()
    above_avg = b.call("gt", field(2), scalar_subquery(_avg_sal_of_outer_dept(b, 1, 1)), out=boolean())
    rel = filter_(dept(), exists(_emps_of_outer_dept(b, above_avg)))
    got = run(b.plan(rel, ["id", "name"]), spark)
    want = spark.sql(
        "select * from sq_dept d where exists (select 1 from sq_emp e where e.dept = d.id "
        "and e.sal > (select avg(sal) from sq_emp e2 where e2.dept = e.dept))"
    )
    assert_same_rows(got, want)


def test_count_subquery_with_an_exists_correlated_to_it(spark):
    # select d.id, (select count(*) from emp e where e.dept = d.id
    #               and exists (select 1 from emp e2 where e2.dept = e.dept and e2.sal > e.sal)) from dept d
    b = PlanBuilder()
    richer = filter_(emp(), b.and_(b.eq(field(1), outer(1)), b.call("gt", field(2), outer(2), out=boolean())))
    body = filter_(emp(), b.and_(b.eq(field(1), outer(0)), exists(richer)))
    n = aggregate(body, measures=[b.agg("count", out=i64())])
    rel = project(dept(), scalar_subquery(n), emit=[0, 2])
    got = run(b.plan(rel, ["id", "n"]), spark)

    def n_for(d):
        return sum(
            1
            for e in EMP
            if cmp3(operator.eq, e[1], d)
            and any(cmp3(operator.eq, e2[1], e[1]) and cmp3(operator.gt, e2[2], e[2]) for e2 in EMP)
        )

    assert_same_rows(got, [(d, n_for(d)) for d, _ in DEPT])


def test_subquery_in_a_subquery_filter_uncorrelated_inner(spark):
    # The inner subquery is uncorrelated; the middle one is correlated to the outermost query.
    b = PlanBuilder()
    overall = aggregate(emp(), measures=[b.agg("avg", field(2), out=fp64())])
    rich = b.call("gt", field(2), scalar_subquery(overall), out=boolean())
    rel = filter_(dept(), exists(_emps_of_outer_dept(b, rich)))
    got = run(b.plan(rel, ["id", "name"]), spark)
    want = spark.sql(
        "select * from sq_dept d where exists (select 1 from sq_emp e where e.dept = d.id "
        "and e.sal > (select avg(sal) from sq_emp))"
    )
    assert_same_rows(got, want)


def test_outer_reference_two_levels_out(spark):
    # dept d where exists (emp e where e.dept = d.id and exists (emp e2 where e2.dept = d.id and e2.sal > e.sal)):
    # the innermost subquery reads d.id with steps_out=2 and e.sal with steps_out=1.
    # Refused on every Spark here: Spark 4.3 itself does not resolve it either — the same query in Spark SQL and
    # through the DataFrame API's `Column.outer()` fail analysis with UNRESOLVED_COLUMN for d.id (an outer reference
    # resolves against the immediately enclosing query only; 4.3 has no nested-correlation setting).
    from substrait_spark.consumer.errors import UnsupportedFeatureError

    b = PlanBuilder()
    inner = filter_(
        emp(),
        b.and_(b.eq(field(1), outer(0, steps_out=2)), b.call("gt", field(2), outer(2, steps_out=1), out=boolean())),
    )
    rel = filter_(dept(), exists(_emps_of_outer_dept(b, exists(inner))))
    try:
        got = run(b.plan(rel, ["id", "name"]), spark).collect()
    except UnsupportedFeatureError as exc:
        pytest.xfail(f"refused with a typed error: {exc}")
    want = [
        (d, n)
        for d, n in DEPT
        if any(e[1] == d and any(e2[1] == d and cmp3(operator.gt, e2[2], e[2]) for e2 in EMP) for e in EMP)
    ]
    assert_same_rows(got, want)


def test_subquery_over_a_virtual_table(spark):
    b = PlanBuilder()
    hay = virtual(["v"], [i32()], [(100,), (300,), (None,)])
    rel = filter_(emp(), in_subquery([field(2)], hay), emit=[0])
    got = run(b.plan(rel, ["id"]), spark)
    assert_same_rows(got, [(1,), (5,)])


# --------------------------------------------------------------------------------------------------
# Predicates under a cast, NOT, OR or CASE, over cross products (DuckDB on the same SQL)
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def duck():
    """DuckDB holding the same tables (SQL types from their DDL)."""
    import duckdb

    con = duckdb.connect(":memory:")
    for name, (ddl, rows) in TABLES.items():
        con.execute(f"CREATE TABLE {name} ({ddl.replace('string', 'varchar')})")
        if rows:
            marks = ", ".join("?" for _ in rows[0])
            con.executemany(f"INSERT INTO {name} VALUES ({marks})", [list(r) for r in rows])
    yield con
    con.close()


# The record of cross(sq_emp e, sq_dept d): 0 e.id, 1 e.dept, 2 e.sal, 3 d.id, 4 d.name. Each predicate: a plan
# builder and its SQL. They cover IN and ANY/ALL with NULLs in the needle and in the subquery's column, EXISTS,
# uncorrelated, correlated by equalities (marks from keyed joins and per-key figures) and correlated otherwise
# (the semi/anti split).
def _sals_of_outer_dept(b: PlanBuilder, value=None, extra=None):
    cond = b.eq(field(1), outer(3))
    body = filter_(emp(), b.and_(cond, extra) if extra is not None else cond)
    return project(body, value if value is not None else field(2), emit=[3])


PREDICATES = {
    "in": (lambda b: in_subquery([field(2)], col("sq_v")), "e.sal in (select v from sq_v)"),
    "in_nulls": (lambda b: in_subquery([field(2)], col("sq_n")), "e.sal in (select v from sq_n)"),
    "in_correlated": (
        lambda b: in_subquery([field(2)], _sals_of_outer_dept(b, b.call("multiply", field(2), lit(2), out=i32()))),
        "e.sal in (select e2.sal * 2 from sq_emp e2 where e2.dept = d.id)",
    ),
    "in_residual": (
        lambda b: in_subquery(
            [field(2)], _sals_of_outer_dept(b, extra=b.call("not_equal", field(0), outer(0), out=boolean()))
        ),
        "e.sal in (select e2.sal from sq_emp e2 where e2.dept = d.id and e2.id <> e.id)",
    ),
    "exists": (
        lambda b: exists(
            filter_(emp(), b.and_(b.eq(field(1), outer(3)), b.call("gt", field(2), lit(150), out=boolean())))
        ),
        "exists (select 1 from sq_emp e2 where e2.dept = d.id and e2.sal > 150)",
    ),
    "exists_residual": (
        lambda b: exists(
            filter_(emp(), b.and_(b.eq(field(1), outer(3)), b.call("gt", field(2), outer(2), out=boolean())))
        ),
        "exists (select 1 from sq_emp e2 where e2.dept = d.id and e2.sal > e.sal)",
    ),
    "ge_all": (
        lambda b: set_comparison(field(2), ">=", "ALL", _sals_of_outer_dept(b)),
        "e.sal >= all (select e2.sal from sq_emp e2 where e2.dept = d.id)",
    ),
    "lt_any": (lambda b: set_comparison(field(2), "<", "ANY", col("sq_v")), "e.sal < any (select v from sq_v)"),
}
WRAPPERS = {
    "cast": (lambda b, p: cast(p, boolean()), "cast({p} as boolean)"),
    "not": (lambda b, p: b.not_(p), "not ({p})"),
    "or": (lambda b, p: b.or_(p, b.eq(field(4), lit("ops"))), "({p} or d.name = 'ops')"),
    "not_or": (lambda b, p: b.not_(b.or_(p, b.eq(field(0), lit(1)))), "not ({p} or e.id = 1)"),
    "case": (
        lambda b, p: if_then([(p, lit(True))], b.eq(field(4), lit("hr"))),
        "case when {p} then true else d.name = 'hr' end",
    ),
    "case_branches": (
        lambda b, p: if_then([(b.call("gt", field(0), lit(3), out=boolean()), p)], b.not_(p)),
        "case when e.id > 3 then {p} else not ({p}) end",
    ),
}


def _emp_dept(b: PlanBuilder, condition=None):
    """cross(sq_emp, sq_dept) filtered by e.dept = d.id (and `condition`): the filter over a cross Isthmus writes."""
    equi = b.eq(field(1), field(3))
    return filter_(cross(emp(), dept()), b.and_(condition, equi) if condition is not None else equi)


@pytest.mark.parametrize("wrap", sorted(WRAPPERS))
@pytest.mark.parametrize("pred", sorted(PREDICATES))
def test_predicate_in_a_filter_over_a_cross(spark, duck, pred, wrap):
    b = PlanBuilder()
    predicate, sql = PREDICATES[pred]
    wrapper, sql_wrapper = WRAPPERS[wrap]
    rel = project(_emp_dept(b, wrapper(b, predicate(b))), field(0), field(3), emit=[5, 6])
    got = run(b.plan(rel, ["e_id", "d_id"]), spark)
    where = sql_wrapper.format(p=sql.replace("{", "{{").replace("}", "}}")).replace("{{", "{").replace("}}", "}")
    want = duck.execute(f"select e.id, d.id from sq_emp e, sq_dept d where ({where}) and e.dept = d.id").fetchall()
    assert_same_rows(got, want)


@pytest.mark.parametrize("pred", sorted(PREDICATES))
def test_predicate_as_a_value_over_a_cross(spark, duck, pred):
    # Exact three-valued answers: the predicate, its negation, and a CASE on it, per row.
    b = PlanBuilder()
    predicate, sql = PREDICATES[pred]
    values = [predicate(b), b.not_(predicate(b)), if_then([(predicate(b), lit("y"))], lit("n"))]
    rel = project(_emp_dept(b), field(0), *values, emit=[5, 6, 7, 8])
    got = run(b.plan(rel, ["e_id", "p", "not_p", "case_p"]), spark)
    want = duck.execute(
        f"select e.id, {sql}, not ({sql}), case when {sql} then 'y' else 'n' end "
        "from sq_emp e, sq_dept d where e.dept = d.id"
    ).fetchall()
    assert_same_rows(got, want)


# --- in join conditions ------------------------------------------------------------------------------------

_IN_V = "e.sal in (select v from sq_v)"
_DEPT_WITH_RICH = "d.id in (select e2.dept from sq_emp e2 where e2.sal > 150)"
_JOINS = {
    # name: (join type, the subquery conjunct's builder, its SQL)
    "inner_left_side": (JoinRel.JOIN_TYPE_INNER, lambda b: in_subquery([field(2)], col("sq_v")), _IN_V),
    "inner_both_sides": (JoinRel.JOIN_TYPE_INNER, PREDICATES["exists_residual"][0], PREDICATES["exists_residual"][1]),
    "left_preserved_side": (JoinRel.JOIN_TYPE_LEFT, lambda b: in_subquery([field(2)], col("sq_v")), _IN_V),
    "left_other_side": (
        JoinRel.JOIN_TYPE_LEFT,
        lambda b: in_subquery(
            [field(3)], project(filter_(emp(), b.call("gt", field(2), lit(150), out=boolean())), field(1), emit=[3])
        ),
        _DEPT_WITH_RICH,
    ),
    "full_or": (
        JoinRel.JOIN_TYPE_OUTER,
        lambda b: b.or_(in_subquery([field(2)], col("sq_n")), b.call("gt", field(2), lit(150), out=boolean())),
        "(e.sal in (select v from sq_n) or e.sal > 150)",
    ),
}
_SQL_JOIN = {JoinRel.JOIN_TYPE_INNER: "join", JoinRel.JOIN_TYPE_LEFT: "left join", JoinRel.JOIN_TYPE_OUTER: "full join"}


@pytest.mark.parametrize("case", sorted(_JOINS))
def test_predicate_in_a_join_condition(spark, duck, case):
    b = PlanBuilder()
    jt, predicate, sql = _JOINS[case]
    rel = join(emp(), dept(), jt, b.and_(b.eq(field(1), field(3)), predicate(b)), emit=[0, 3])
    got = run(b.plan(rel, ["e_id", "d_id"]), spark)
    want = duck.execute(f"select e.id, d.id from sq_emp e {_SQL_JOIN[jt]} sq_dept d on e.dept = d.id and {sql}")
    assert_same_rows(got, want.fetchall())


def test_predicate_in_a_post_join_filter(spark, duck):
    b = PlanBuilder()
    post = b.or_(in_subquery([field(2)], col("sq_v")), b.call("is_null", field(3), out=boolean()))
    rel = join(emp(), dept(), JoinRel.JOIN_TYPE_LEFT, b.eq(field(1), field(3)), post=post, emit=[0, 3])
    got = run(b.plan(rel, ["e_id", "d_id"]), spark)
    want = duck.execute(
        f"select * from (select e.id, d.id as d from sq_emp e left join sq_dept d on e.dept = d.id) j "
        f"where j.id in (select e.id from sq_emp e where {_IN_V}) or j.d is null"
    )
    assert_same_rows(got, want.fetchall())


def test_two_sided_subquery_in_an_outer_join_condition_is_refused(spark):
    # Which left rows keep a match would need the predicate over each pair: refused, by validate as by run.
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.errors import UnsupportedFeatureError

    b = PlanBuilder()
    rel = join(
        emp(), dept(), JoinRel.JOIN_TYPE_LEFT, b.and_(b.eq(field(1), field(3)), PREDICATES["exists_residual"][0](b))
    )
    plan = b.plan(rel, ["id", "dept", "sal", "did", "name"])
    with pytest.raises(UnsupportedFeatureError, match="reading both of its inputs") as info:
        run(plan, spark)
    findings = validate_plan(plan)
    assert [f.path for f in findings] == [info.value.path]
    assert info.value.path.endswith("join.expression.scalar_function.arguments[1].value")


def test_predicate_over_a_keyed_aggregate_is_refused(spark):
    # EXISTS (SELECT count(*) ... WHERE e.dept = d.id) holds for every department (an aggregate without keys
    # yields one row); decorrelated, the departments without employees would have none. Refused, not guessed.
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.errors import UnsupportedFeatureError

    b = PlanBuilder()
    rel = filter_(dept(), b.or_(exists(_count_of_outer_dept(b)), b.eq(field(1), lit("ops"))))
    plan = b.plan(rel, ["id", "name"])
    with pytest.raises(UnsupportedFeatureError, match="without grouping keys") as info:
        run(plan, spark)
    assert [(f.feature, f.path) for f in validate_plan(plan)] == [(info.value.message, info.value.path)]


# --------------------------------------------------------------------------------------------------
# TPC-H q18 as Isthmus writes it, and predicates of other kinds in its place (sf0.01, DuckDB on the same SQL)
# --------------------------------------------------------------------------------------------------

# The record of cross(cross(customer, orders), lineitem), the columns q18 reads:
# 0 c_custkey, 1 c_name, 2 o_orderkey, 3 o_custkey, 4 o_totalprice, 5 o_orderdate, 6 l_orderkey, 7 l_quantity.
_PRICE = decimal_(15, 2)


def _q18_cross():
    customer = named("customer", ["c_custkey", "c_name"], [i64(), string()])
    orders = named("orders", ["o_orderkey", "o_custkey", "o_totalprice", "o_orderdate"], [i64(), i64(), _PRICE, date()])
    lineitem = named("lineitem", ["l_orderkey", "l_quantity"], [i64(), _PRICE])
    return cross(cross(customer, orders), lineitem)


def _big_orders(b: PlanBuilder):
    """`select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300`."""
    lineitem = named("lineitem", ["l_orderkey", "l_quantity"], [i64(), _PRICE])
    sums = aggregate(lineitem, keys=[field(0)], measures=[b.agg("sum", field(1), out=decimal_(38, 2))])
    return project(filter_(sums, b.call("gt", field(1), lit(300, decimal_(38, 2)), out=boolean())), field(0), emit=[2])


def _q18_filter(b: PlanBuilder, predicate):
    equi = [b.eq(field(0), field(3)), b.eq(field(2), field(6))]
    return filter_(_q18_cross(), b.and_(predicate, *equi))


_BIG = "select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300"
_RICH = "o_totalprice > 450000"
Q18_VARIANTS = {
    # name: (the predicate beside the equi-conditions, its SQL)
    "in_under_cast": (lambda b: cast(in_subquery([field(2)], _big_orders(b)), boolean()), f"o_orderkey in ({_BIG})"),
    "in_under_or": (
        lambda b: b.or_(
            in_subquery([field(2)], _big_orders(b)), b.call("gt", field(4), lit(450000, _PRICE), out=boolean())
        ),
        f"(o_orderkey in ({_BIG}) or {_RICH})",
    ),
    "not_in_under_cast": (
        lambda b: cast(b.not_(in_subquery([field(2)], _big_orders(b))), boolean()),
        f"o_orderkey not in ({_BIG})",
    ),
    "in_under_case": (
        lambda b: if_then(
            [(in_subquery([field(2)], _big_orders(b)), lit(True))],
            b.call("gt", field(4), lit(450000, _PRICE), out=boolean()),
        ),
        f"case when o_orderkey in ({_BIG}) then true else {_RICH} end",
    ),
    "not_exists_under_or": (
        lambda b: b.or_(
            b.not_(
                exists(
                    filter_(
                        named("lineitem", ["l_orderkey", "l_quantity"], [i64(), _PRICE]),
                        b.and_(b.eq(field(0), outer(2)), b.call("gt", field(1), lit(49, _PRICE), out=boolean())),
                    )
                )
            ),
            b.call("gt", field(4), lit(450000, _PRICE), out=boolean()),
        ),
        f"(not exists (select 1 from lineitem l2 where l2.l_orderkey = o_orderkey and l2.l_quantity > 49) or {_RICH})",
    ),
}


def test_q18_as_isthmus_writes_it(spark, tpch_resolver, duckdb_oracle):
    """filter(and(cast(<IN> as boolean), c_custkey = o_custkey, o_orderkey = l_orderkey), cross(cross(...))):
    the IN is a semi join and the equi-conditions join the crosses (before, a 1500 x 15000 x 60175 cartesian
    product that never finished)."""
    b = PlanBuilder()
    rel = project(_q18_filter(b, Q18_VARIANTS["in_under_cast"][0](b)), *[field(i) for i in (1, 0, 2, 5, 4, 7)])
    rel = aggregate(rel, keys=[field(i) for i in range(8, 13)], measures=[b.agg("sum", field(13), out=decimal_(38, 2))])
    rel = fetch(sort(rel, (field(4), DESC_NULLS_FIRST), (field(3), ASC_NULLS_LAST)), count=100)
    names = ["c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice", "sum_qty"]
    got = run(b.plan(rel, names), spark, tpch_resolver)
    want = duckdb_oracle.run_file(Path(__file__).parent / "tpch_sql" / "standard" / "q18.sql")
    assert len(want.rows) > 0
    assert_same_result([tuple(r) for r in got.collect()], want.rows, ordered_keys=(4, 3))


@pytest.mark.parametrize("variant", sorted(Q18_VARIANTS))
def test_q18_shape_with_other_predicates(spark, tpch_resolver, duckdb_oracle, variant):
    b = PlanBuilder()
    predicate, sql = Q18_VARIANTS[variant]
    count = [b.agg("count", out=i64()), b.agg("sum", field(7), out=decimal_(38, 2))]
    rel = aggregate(_q18_filter(b, predicate(b)), measures=count)
    got = run(b.plan(rel, ["n", "quantity"]), spark, tpch_resolver)
    want = duckdb_oracle.run(
        "select count(*), sum(l_quantity) from customer, orders, lineitem "
        f"where c_custkey = o_custkey and o_orderkey = l_orderkey and {sql}"
    )
    assert want.rows[0][0] > 0
    assert_same_result([tuple(r) for r in got.collect()], want.rows)


def test_q18_shape_in_as_a_value(spark, tpch_resolver, duckdb_oracle):
    # The IN in a projection over the joined crosses: one row per answer with its count.
    b = PlanBuilder()
    rel = project(_q18_filter(b, lit(True)), in_subquery([field(2)], _big_orders(b)), emit=[8])
    rel = aggregate(rel, keys=[field(0)], measures=[b.agg("count", out=i64())])
    got = run(b.plan(rel, ["big", "n"]), spark, tpch_resolver)
    want = duckdb_oracle.run(
        f"select o_orderkey in ({_BIG}), count(*) from customer, orders, lineitem "
        "where c_custkey = o_custkey and o_orderkey = l_orderkey group by 1"
    )
    assert_same_result([tuple(r) for r in got.collect()], want.rows)
