"""Outer references by `rel_reference` (spec 0.106; the `substrait` package writes them) read as `steps_out`.

A plan written with `steps_out` is rewritten into the `rel_reference` spelling (the enclosing relation's input
gets a rel_anchor); it must load to the `steps_out` plan with a note and give Spark SQL's rows. A `rel_reference`
that names no enclosing subquery's record is left as written and refused where it stands.
"""

from __future__ import annotations

import pytest
from plan_builder import PlanBuilder, aggregate, boolean, exists, field, filter_, i32, named, outer, run, view
from substrait import algebra_pb2 as alg
from substrait_spark.consumer.errors import UnsupportedFeatureError
from substrait_spark.consumer.loading.loader import parse_plan_bytes
from substrait_spark.consumer.walk import nodes

# Each test carries its tier: `unit` (pure Python) or `spark`.

ROWS = [(1, 10, 100), (2, 10, 200), (3, 20, 150), (4, None, 50)]
NAMES = ["id", "dept", "sal"]
ANCHOR = 7


@pytest.fixture(autouse=True)
def _table_for_spark_tests(request):
    """The module's views for its Spark tests only: its `unit` tests start no Spark."""
    if request.node.get_closest_marker("unit") is None:
        request.getfixturevalue("table")


@pytest.fixture(scope="module")
def table(spark):
    view(spark, "orr_emp", "id int, dept int, sal int", ROWS)
    yield
    spark.catalog.dropTempView("orr_emp")


def emp():
    return named("orr_emp", NAMES, [i32(), i32(), i32()])


def _richer_colleague(b: PlanBuilder):
    """emp e where exists (select 1 from emp e2 where e2.dept = e.dept and e2.sal > e.sal)."""
    richer = b.and_(b.eq(field(1), outer(1)), b.call("gt", field(2), outer(2), out=boolean()))
    return filter_(emp(), exists(filter_(emp(), richer)))


def _to_rel_references(plan, anchor: int) -> None:
    """The same plan written the spec 0.106 way: the outer filter's input carries `anchor`, references name it."""
    outer_filter = plan.relations[0].root.input.filter
    outer_filter.input.read.common.rel_anchor = anchor
    for msg, _ in nodes(plan):
        if isinstance(msg, alg.Expression.FieldReference) and msg.WhichOneof("root_type") == "outer_reference":
            msg.outer_reference.rel_reference = anchor


@pytest.mark.spark
def test_rel_reference_to_the_enclosing_record_runs_as_steps_out(spark):
    b = PlanBuilder()
    modern = b.plan(_richer_colleague(b), NAMES)
    written = b.plan(_richer_colleague(b), NAMES)
    _to_rel_references(written, ANCHOR)
    assert written != modern
    loaded = parse_plan_bytes(written.SerializeToString())
    (note,) = [n for n in loaded.notes if n.startswith("outer reference rel_reference read as steps_out")]
    assert note.endswith("and 1 more")
    refs = [m.outer_reference for m, _ in nodes(loaded.plan) if isinstance(m, alg.Expression.FieldReference)]
    assert [r.WhichOneof("outer_reference_type") for r in refs if r.ByteSize()] == ["steps_out", "steps_out"]
    got = sorted(tuple(r) for r in run(loaded.plan, spark).collect())
    want = spark.sql(
        "select * from orr_emp e where exists (select 1 from orr_emp e2 where e2.dept = e.dept and e2.sal > e.sal)"
    )
    assert got == sorted(tuple(r) for r in want.collect()) == [(1, 10, 100)]


@pytest.mark.unit
def test_rel_reference_two_subqueries_out():
    """A reference two boundaries out names the outermost filter's input: it loads as steps_out 2 (the plan the
    same query written with steps_out is). (The engine does not decorrelate this shape; loading is what is tested.)"""

    def plan(rel_reference: bool):
        b = PlanBuilder()
        inner = filter_(emp(), b.call("lt", field(2), outer(2, steps_out=2), out=boolean()))
        p = b.plan(filter_(emp(), exists(filter_(emp(), exists(inner)))), NAMES)
        p.relations[0].root.input.filter.input.read.common.rel_anchor = ANCHOR
        if rel_reference:
            for msg, _ in nodes(p):
                if isinstance(msg, alg.Expression.FieldReference) and msg.WhichOneof("root_type") == "outer_reference":
                    msg.outer_reference.rel_reference = ANCHOR
        return p

    written = plan(rel_reference=True)
    assert written != plan(rel_reference=False)
    loaded = parse_plan_bytes(written.SerializeToString())
    assert loaded.plan == plan(rel_reference=False)
    assert loaded.notes == (
        "outer reference rel_reference read as steps_out at relations[0].root.input.filter.condition.subquery"
        ".set_predicate.tuples.filter.condition.subquery.set_predicate.tuples.filter.condition.scalar_function"
        ".arguments[1].value.selection",
    )


@pytest.mark.spark
def test_rel_reference_to_no_enclosing_record_is_refused(spark):
    b = PlanBuilder()
    written = b.plan(_richer_colleague(b), NAMES)
    _to_rel_references(written, ANCHOR)
    written.relations[0].root.input.filter.input.read.common.rel_anchor = ANCHOR + 1  # the anchor names nothing
    loaded = parse_plan_bytes(written.SerializeToString())
    assert not any("rel_reference" in n for n in loaded.notes)
    with pytest.raises(UnsupportedFeatureError, match=f"outer reference to relation {ANCHOR}") as err:
        run(loaded.plan, spark)
    assert err.value.path and err.value.path.endswith(".outer_reference")


@pytest.mark.unit
def test_plan_without_rel_reference_is_unchanged():
    """A plan without rel_reference loads without the note (the rewrite touches nothing else)."""
    b = PlanBuilder()
    plan = b.plan(aggregate(emp(), [field(1)], measures=[b.agg("count", field(0), out=i32())]), ["dept", "n"])
    loaded = parse_plan_bytes(plan.SerializeToString())
    assert loaded.plan == plan and not loaded.notes
