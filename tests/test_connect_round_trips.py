"""On Spark Connect, translating a plan sends nothing to the server.

Building a DataFrame on a Connect client is free, but a schema read is an AnalyzePlan round trip in which the server
analyzes the whole plan so far, and a temp view is a command round trip: TPC-DS q14 took 1.3 s to translate with
40 of them (bench/RESULTS.md, "TPC-DS (a) Translation over Spark Connect"). The translation knows its frames'
columns (`Relation.columns()`), and a client with Spark 4's subquery DataFrame API states Spark's own scalar, EXISTS
and IN subqueries without a view (`consumer/translation/spark_subqueries.py`). Counted with the client's own
request methods wrapped (`round_trips.py`), over DataFusion's TPC-DS plans that make each kind of subquery.
"""

from __future__ import annotations

import pytest
from producers import datafusion_plans, tpcds
from round_trips import RoundTrips, count_round_trips
from spark_modes import SparkMode, current_mode

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(current_mode() is not SparkMode.CONNECT, reason="round trips are Spark Connect's"),
]

# TPC-DS plans (DataFusion's) and what their translation once sent: q09 scalar subqueries (15 views, 4 schema
# reads of a zero-column relation), q88 count(*) over zero columns (8 schema reads), q14 IN and EXISTS semi joins
# and a ROLLUP (19 views, 21 schema reads), q10 and q35 EXISTS under an OR (6 views, 4 schema reads), q05 a ROLLUP's
# empty-input row (1 view).
PLANS = (9, 88, 14, 10, 35, 5)


@pytest.fixture(scope="module")
def plans() -> dict[int, bytes]:
    small = tpcds.ensure_tpcds_data()
    made = datafusion_plans.plans_over(small, tpcds.TABLES, tpcds.query_texts(small))
    found = {q: made[tpcds.name(q)].plan for q in PLANS}
    missing = [q for q, p in found.items() if p is None]
    assert not missing, f"DataFusion wrote no plan for TPC-DS {missing}"
    return {q: p.read_bytes() for q, p in found.items() if p is not None}


@pytest.fixture(scope="module")
def resolver():
    from substrait_spark.consumer import TableMapResolver

    return TableMapResolver.from_tables_dir(str(tpcds.ensure_tpcds_data()))


def _translate(spark, plan_bytes: bytes, resolver, monkeypatch) -> RoundTrips:
    """What `run` does for a root before it executes it, with the client's requests counted: the second time, as
    the resolver opens each table (a schema read) once, when it first resolves it (table resolution, not
    translation; the CLI's resolver serves a batch of plans so)."""
    from substrait.plan_pb2 import Plan
    from substrait_spark.consumer.translation import plan_record
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    monkeypatch.delenv(plan_record.ENV, raising=False)  # the suite's plan check explains each root it records
    plan = Plan()
    plan.ParseFromString(plan_bytes)
    warm = SubstraitConsumer(spark, plan, resolver)
    try:
        warm.root(0)  # the tables opened
    finally:
        warm.close()
    consumer = SubstraitConsumer(spark, plan, resolver)
    try:
        with count_round_trips(spark) as sent:
            consumer.root(0)
            consumer.root_columns[0]  # what the run report reads
        return sent
    finally:
        consumer.close()


@pytest.mark.parametrize("q", PLANS, ids=[tpcds.name(q) for q in PLANS])
def test_translation_reads_no_schema(spark, plans, resolver, q, monkeypatch):
    """No AnalyzePlan call on any client: the columns and types are the translation's own."""
    sent = _translate(spark, plans[q], resolver, monkeypatch)
    analyses = [c for c in sent.calls if c[0] == "_analyze"]
    assert not analyses, f"{tpcds.name(q)}: {len(analyses)} schema round trip(s): {sent.describe()}"


@pytest.mark.parametrize("q", PLANS, ids=[tpcds.name(q) for q in PLANS])
def test_translation_sends_nothing_with_the_subquery_api(spark, plans, resolver, q, monkeypatch):
    """With Spark 4's subquery DataFrame API no temp view either: the translation sends nothing at all."""
    if not hasattr(spark.range(1), "scalar"):
        pytest.skip("this Connect client has no subquery DataFrame API (pyspark 3.5): temp views it is")
    sent = _translate(spark, plans[q], resolver, monkeypatch)
    assert not sent.calls, f"{tpcds.name(q)}: {len(sent)} round trip(s): {sent.describe()}"
