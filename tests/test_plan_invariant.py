"""The plan invariant itself (tests/plan_invariants.py, tests/cartesian_check.py, consumer/translation/plan_record.py).

It must catch what it exists for — the cartesian product the old translation of TPC-H q18 (as Isthmus writes
it) made Spark build, reproduced here with the same non-deterministic column over a cross product — and let
through a plan that truly is a cartesian product. Its links are checked on real corpus plans.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json

import pytest
from cartesian_check import Link, equi_links, offences, parse_physical
from plan_builder import JoinRel, PlanBuilder, cross, field, filter_, i64, join, named, run, string
from plan_invariants import PlanInvariant
from pyspark.sql import functions as F
from substrait.plan_pb2 import Plan

# Each test carries its tier: `unit` (pure Python) or `spark`.
pytestmark = [pytest.mark.corpus]

IBM = "ibm-substrait-compliance-tpch"


def _customer():
    return named("customer", ["c_custkey", "c_name"], [i64(), string()])


def _orders():
    return named("orders", ["o_orderkey", "o_custkey"], [i64(), i64()])


def _explain(df) -> str:
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        df.explain()
    return text.getvalue()


def _customer_orders_plan():
    """`select * from customer, orders where c_custkey = o_custkey`: a filter over a cross, as Isthmus writes it."""
    b = PlanBuilder()
    return b.plan(filter_(cross(_customer(), _orders()), b.eq(field(0), field(3))), ["ck", "name", "ok", "ock"])


def _old_translation(spark, tpch_dir):
    """What the old mark join made of the plan: a row id over the cross product keeps the equality above it."""
    customer = spark.read.parquet(str(tpch_dir / "customer.parquet")).select("c_custkey", "c_name")
    orders = spark.read.parquet(str(tpch_dir / "orders.parquet")).select("o_orderkey", "o_custkey")
    tagged = customer.crossJoin(orders).withColumn("row_id", F.monotonically_increasing_id())
    return tagged.filter(F.col("c_custkey") == F.col("o_custkey"))


@pytest.mark.spark
def test_the_old_mark_join_shape_is_an_offence(spark, tpch_dir):
    # Spark builds a nested loop join of customer and orders, which the invariant names.
    plan = _customer_orders_plan()
    found = offences(equi_links(plan).links, _explain(_old_translation(spark, tpch_dir)))
    assert len(found) == 1
    assert found[0].link.path == "relations[0].root.input.filter.condition"
    assert found[0].link.left == {"c_custkey"} and found[0].link.right == {"o_custkey"}
    assert "NestedLoopJoin" in found[0].operator or "CartesianProduct" in found[0].operator


@pytest.mark.spark
def test_the_translation_of_the_same_plan_is_no_offence(spark, tpch_resolver):
    plan = _customer_orders_plan()
    physical = _explain(run(plan, spark, tpch_resolver))
    assert "BroadcastNestedLoopJoin" not in physical and "CartesianProduct" not in physical
    assert offences(equi_links(plan).links, physical) == []


@pytest.mark.spark
def test_a_true_cartesian_product_is_allowed(spark, tpch_resolver):
    b = PlanBuilder()
    nation = named("nation", ["n_nationkey", "n_name"], [i64(), string()])
    region = named("region", ["r_regionkey", "r_name"], [i64(), string()])
    plan = b.plan(cross(nation, region), ["nk", "nn", "rk", "rn"])
    physical = _explain(run(plan, spark, tpch_resolver))
    assert any(
        n.name in ("BroadcastNestedLoopJoin", "CartesianProduct") for r in parse_physical(physical) for n in r.walk()
    )
    assert equi_links(plan).links == []
    assert offences([], physical) == []


def _nested_loops(left: list[str], right: list[str]) -> str:
    """A physical plan's text: a nested loop join of two aggregates, each over a join of two scans that output
    the given columns."""
    return "\n".join(
        [
            "== Physical Plan ==",
            "AdaptiveSparkPlan isFinalPlan=false",
            "+- BroadcastNestedLoopJoin BuildRight, Inner, (value#9 > threshold#35)",
            "   :- HashAggregate(keys=[], functions=[sum(x#1)])",
            "   :  +- BroadcastHashJoin [a#1L], [b#2L], Inner, BuildLeft, false",
            f"   :     :- FileScan parquet [{left[0]}] Batched: true",
            f"   :     +- FileScan parquet [{left[1]}] Batched: true",
            "   +- HashAggregate(keys=[], functions=[sum(x#1)])",
            "      +- BroadcastHashJoin [a#1L], [b#2L], Inner, BuildLeft, false",
            f"         :- FileScan parquet [{right[0]}] Batched: true",
            f"         +- FileScan parquet [{right[1]}] Batched: true",
        ]
    )


@pytest.mark.unit
def test_inputs_holding_both_sides_of_a_link_prove_nothing():
    # DuckDB's TPC-H q11: a nested loop join (value > threshold) of two aggregates over partsupp and supplier,
    # each joined inside on ps_suppkey = s_suppkey. Which scan is which instance is unknown: no offence.
    link = Link("p", frozenset({"ps_suppkey"}), frozenset({"s_suppkey"}), "equal($1, $2)")
    both = _nested_loops(["ps_suppkey#2L,ps_supplycost#4", "s_suppkey#5L"], ["ps_suppkey#12L", "s_suppkey#15L"])
    assert [n.name for n in parse_physical(both)[0].walk()].count("FileScan") == 4
    assert offences([link], both) == []
    # One side of the link under each input: the equality could have joined them.
    split = _nested_loops(["ps_suppkey#2L,ps_supplycost#4", "s_name#5"], ["s_suppkey#12L", "s_nationkey#15L"])
    [offence] = offences([link], split)
    assert offence.operator.startswith("BroadcastNestedLoopJoin") and offence.link == link


@pytest.mark.unit
def test_a_mark_join_condition_is_no_link():
    # Its NULLs count (TRUE / NULL / FALSE per left row): an equality in it is not a join key.
    b = PlanBuilder()
    mark = join(_customer(), _orders(), JoinRel.JOIN_TYPE_LEFT_MARK, b.eq(field(0), field(3)))
    inner = join(_customer(), _orders(), JoinRel.JOIN_TYPE_LEFT, b.eq(field(0), field(3)))
    assert equi_links(b.plan(mark, ["ck", "name", "m"])).links == []
    [link] = equi_links(b.plan(inner, ["ck", "name", "ok", "ock"])).links
    assert link.path == "relations[0].root.input.join.expression"


@pytest.mark.unit
def test_links_of_corpus_plans(corpus):
    """q18 links customer-orders and orders-lineitem; q21's links reach into its EXISTS subqueries' bodies."""
    from substrait_spark.consumer import load_plan

    q18 = equi_links(load_plan(str(corpus / IBM / "q18.json")).plan)
    assert q18.error is None
    assert {(min(k.left | k.right), max(k.left | k.right)) for k in q18.links} == {
        ("c_custkey", "o_custkey"),
        ("l_orderkey", "o_orderkey"),
    }
    q21 = equi_links(load_plan(str(corpus / IBM / "q21.json")).plan)
    pairs = {frozenset(k.left | k.right) for k in q21.links}
    assert {frozenset({"s_suppkey", "l_suppkey"}), frozenset({"o_orderkey", "l_orderkey"})} <= pairs
    assert frozenset({"s_nationkey", "n_nationkey"}) in pairs


@pytest.mark.spark
def test_the_engine_records_each_root_and_the_plugin_fails_an_offending_one(
    spark, tpch_resolver, tpch_dir, tmp_path, monkeypatch
):
    from substrait_spark.consumer.translation.plan_record import ENV

    record = tmp_path / "record.jsonl"
    monkeypatch.setenv(ENV, str(record))
    plan = _customer_orders_plan()
    df = run(plan, spark, tpch_resolver)
    [entry] = [json.loads(line) for line in record.read_text().splitlines()]
    assert Plan.FromString(base64.b64decode(entry["plan"])) == plan
    assert entry["physical"].startswith("== Physical Plan ==") and "BroadcastHashJoin" in entry["physical"]
    assert entry["explain_ms"] >= 0 and df.count() > 0

    # The same plan with the physical plan of the old translation: the plugin's check names the offence.
    entry["physical"] = _explain(_old_translation(spark, tpch_dir))
    record.write_text(json.dumps(entry) + "\n")
    invariant = PlanInvariant()
    try:
        [problem] = invariant._check(record)
    finally:
        invariant.pytest_unconfigure(None)  # type: ignore[arg-type]
    assert "cartesian product the Substrait plan does not ask for" in problem
    assert "relations[0].root.input.filter.condition" in problem
    assert invariant.plans == 1 and invariant.offending == 1
