"""Acceptance test: consumer-testing's function and relation plans run on Spark, and producers agree.

Corpus ``consumer-testing-function-relation-snapshots`` (548 plans; see its README.txt and tests/function_corpus.py):
one small query per plan, written by Isthmus, DuckDB 1.1.3, DataFusion 40 and ibis-substrait for the same
consumer-testing test (test definitions: substrait-io/consumer-testing ``substrait_consumer/testdata``, the same
test name in the same folder). Every plan runs once, in one SparkSession, over the TPC-H SF 0.01 tables and
consumer-testing's table ``t``; then

* every plan runs, or it is named in REFUSED with the reason (and a pattern of the error it raises);
* within a test, every plan that runs gives the group reference's result (the first plan of the group in
  ``function_corpus.REFERENCE_ORDER``, Isthmus first), compared with ``oracles.assert_same_result``: rows as
  multisets, and in order on the ORDER BY keys where both plans sort on the same output positions
  (``function_corpus.order_keys``; ibis' expression tests often do not sort where the SQL does);
  a plan whose result differs is named in DISAGREES with the reason;
* both tables are exact: a plan that starts to run, or to agree, fails the test until its entry is removed.

A result of more than ``function_corpus.MAX_COLLECTED_ROWS`` rows (only cross_join's 22.5 million) is compared by a
multiset digest computed in Spark. Measured at the time of writing: 547 of 548 plans run; 136 of the 159 tests have
two or more running plans, and in 125 of them every plan agrees.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pytest
from function_corpus import (
    CORPUS_NAME,
    TABLE_T_VIEW,
    CorpusPlan,
    Outcome,
    discover,
    groups_of,
    load,
    register_table_t,
    run_plan,
)
from oracles import assert_same_result

# Each test carries its tier: `unit` (pure Python) or `spark`.
pytestmark = [pytest.mark.corpus]

EXPECTED_PLANS = 548
EXPECTED_GROUPS = 159
EXPECTED_PRODUCERS = {
    "duckdb": 146,
    "datafusion": 131,
    "isthmus": 99,
    "validate-isthmus": 97,
    "ibis": 34,
    "ibis-expr": 34,
    "validate-datafusion": 7,
}


@dataclass(frozen=True)
class Refusal:
    reason: str
    error: str  # regular expression searched in "<ExceptionType>: <first line of the message>"


# Plan name (path without "_plan.json") -> why the consumer refuses it.
REFUSED: dict[str, Refusal] = {
    "function/comparison/is_not_distinct_from-duckdb": Refusal(
        'DuckDB 1.1.3 defect: `... IS NOT DISTINCT FROM NULL` is written as the literal `{"null": {}}`, a null '
        "literal without a type (Literal.null must hold the type). The consumer refuses it rather than guess; "
        "a DuckDB (spec <= 0.53) quirk reading it as an untyped SQL NULL would be the producer's evident meaning.",
        r"PlanInvalidError: type has no kind set .*literal\.null",
    ),
}

_DUCKDB_ONE_GROUPING = (
    "DuckDB 1.1.3 defect: its substrait extension drops {what}: the plan's AggregateRel has one grouping "
    "holding all the keys, (l_orderkey, l_linenumber) — a plain GROUP BY, 60175 rows at SF 0.01 — where the SQL "
    "`{sql}` has {sets}. The consumer runs the plan as written."
)
_ISTHMUS_GROUPING_SET_EMIT = (
    "Isthmus defect: the SQL `SELECT SUM(L_EXTENDEDPRICE), L_LINENUMBER, L_ORDERKEY FROM lineitem GROUP BY "
    "GROUPING SETS ((L_LINENUMBER), (L_ORDERKEY)) ORDER BY L_LINENUMBER` becomes an AggregateRel with two "
    "groupings, whose output is (l_linenumber, l_orderkey, sum, grouping-set index); the ProjectRel above it "
    "writes expressions (field 2, field 0, field 1) and emit [3, 4, 5], counting the aggregate as 3 columns, "
    "without the index. Read by the spec, the emit gives (index, sum, l_linenumber): every row is one column "
    "off. The plan carries no `version` for a producer quirk to key on, and the only other signal is the plan's "
    "shape (an emit that starts at the index column and leaves the last expression unused), so it is run as "
    "written and recorded here."
)

_IBIS_OTHER_QUERY = (
    "Another query: the ibis plans come from consumer-testing's ibis expression (`ps_availqty {op} {lit}`, literal "
    "i8 {lit}, unsorted); the SQL producers' plans filter `PS_AVAILQTY {op} {sql_lit}` and sort."
)
_IBIS_LEFT_3 = (
    "Another query: consumer-testing's ibis expression is `n_name.left(3)` (written substring(n_name, 0, 3)), its "
    "SQL `left(N_NAME, 2)`."
)

# Plan name -> why its result differs from its group's reference plan.
DISAGREES: dict[str, str] = {
    "relation/aggregate/aggregate_with_grouping_set-isthmus": _ISTHMUS_GROUPING_SET_EMIT,
    "relation/aggregate/aggregate_with_grouping_set-validate-isthmus": _ISTHMUS_GROUPING_SET_EMIT,
    "relation/aggregate/aggregate_with_grouping_set-duckdb": _DUCKDB_ONE_GROUPING.format(
        what="GROUPING SETS",
        sql="GROUP BY GROUPING SETS ((L_LINENUMBER), (L_ORDERKEY))",
        sets="two sets, 7 + 15000 groups (DataFusion's plan has both and gives them)",
    ),
    "relation/aggregate/aggregate_with_group_by_cube-duckdb": _DUCKDB_ONE_GROUPING.format(
        what="CUBE",
        sql="GROUP BY CUBE(L_ORDERKEY, L_LINENUMBER)",
        sets="four sets, 75183 rows (Isthmus' plan has them)",
    ),
    "relation/aggregate/aggregate_with_group_by_rollup-duckdb": _DUCKDB_ONE_GROUPING.format(
        what="ROLLUP",
        sql="GROUP BY ROLLUP(L_ORDERKEY, L_LINENUMBER)",
        sets="three sets, 75176 rows (the Isthmus and DataFusion plans have them)",
    ),
    "relation/set/union_distinct-duckdb": (
        "DuckDB 1.1.3 defect: `SELECT C_NATIONKEY FROM customer UNION SELECT N_NATIONKEY FROM nation` is written as "
        "SET_OP_UNION_ALL with no distinct step, so the plan returns all 1525 rows; Isthmus writes "
        "SET_OP_UNION_DISTINCT and DataFusion UNION_ALL under an AggregateRel (25 rows)."
    ),
    "function/comparison/gt-ibis": _IBIS_OTHER_QUERY.format(op=">", lit=10, sql_lit=9990),
    "function/comparison/gt": _IBIS_OTHER_QUERY.format(op=">", lit=10, sql_lit=9990),
    "function/comparison/gte-ibis": _IBIS_OTHER_QUERY.format(op=">=", lit=10, sql_lit=9990),
    "function/comparison/gte": _IBIS_OTHER_QUERY.format(op=">=", lit=10, sql_lit=9990),
    "function/string/left-ibis": _IBIS_LEFT_3,
    "function/string/left": _IBIS_LEFT_3,
    "function/arithmetic/divide-duckdb": (
        "Engine semantics, not a defect: `PS_PARTKEY / 10` is floating-point division in DuckDB (its plan casts "
        "ps_partkey to fp64 and calls divide:fp64_fp64, giving 0.1 ...) and integer division in Calcite and "
        "DataFusion (divide:i64_i64, giving 0 ...). Each plan runs as written."
    ),
    "relation/fetch/fetch-datafusion": (
        "DataFusion 40 defect: `SELECT O_ORDERKEY FROM orders FETCH NEXT 1 ROWS ONLY` has no FetchRel — the "
        "optimizer pushed the limit into its table scan, and the scan's fetch is not serialized — so the plan "
        "returns every row of orders."
    ),
    "relation/fetch/fetch_with_offset-datafusion": (
        "DataFusion 40 defect: `... OFFSET 5 ROWS FETCH NEXT 5 ROWS ONLY` is written as FetchRel offset 5, count -1 "
        "(all rows): the limit went into the unserialized table-scan fetch, so the plan returns all rows but 5."
    ),
}


# --------------------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fr_root(corpus):
    return corpus / CORPUS_NAME


@pytest.fixture(scope="module")
def fr_plans(fr_root) -> list[CorpusPlan]:
    return discover(fr_root)


@pytest.fixture(scope="module")
def outcomes(spark, tpch_dir, fr_root, fr_plans) -> dict[str, Outcome]:
    """Every plan run once (one session, one resolver that keeps the opened tables), three at a time, as a
    scheduler's concurrent tasks share a session. The plans are loaded first, one after another: protobuf's upb
    backend crashed the process once (SIGSEGV in `json_format.ParseDict`) while three threads parsed JSON plans."""
    from concurrent.futures import ThreadPoolExecutor

    from substrait_spark.consumer import TableMapResolver
    from substrait_spark.consumer.running.resolver import TableBinding

    register_table_t(spark)
    resolver = TableMapResolver.from_tables_dir(str(tpch_dir), {"t": TableBinding(TABLE_T_VIEW, "table")})
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            loaded = [load(p, fr_root) for p in fr_plans]
            done = pool.map(lambda p, plan: run_plan(p, fr_root, spark, resolver, plan), fr_plans, loaded)
            return {p.name: outcome for p, outcome in zip(fr_plans, done, strict=True)}
    finally:
        spark.catalog.dropTempView(TABLE_T_VIEW)


# --------------------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------------------


@pytest.mark.unit
@pytest.mark.corpus
def test_inventory(fr_plans):
    """The corpus holds exactly the plans this test was written for, so a missing file cannot hide."""
    assert len(fr_plans) == EXPECTED_PLANS
    counts: dict[str, int] = {}
    for p in fr_plans:
        counts[p.producer] = counts.get(p.producer, 0) + 1
    assert counts == EXPECTED_PRODUCERS
    assert len(groups_of(fr_plans)) == EXPECTED_GROUPS
    names = {p.name for p in fr_plans}
    stale = sorted((set(REFUSED) | set(DISAGREES)) - names)
    assert not stale, f"exception entries naming no plan of the corpus: {stale}"
    both = sorted(set(REFUSED) & set(DISAGREES))
    assert not both, f"a plan is either refused or disagrees, not both: {both}"


@pytest.mark.spark
@pytest.mark.corpus
def test_refused_plans_are_exactly_the_named_ones(outcomes):
    """Every plan runs, except those in REFUSED, which fail with the error their entry describes."""
    failed = {name: o.error for name, o in outcomes.items() if not o.ran}
    unexpected = {n: e for n, e in failed.items() if n not in REFUSED}
    now_running = sorted(n for n in REFUSED if n not in failed)
    wrong_error = {
        n: (REFUSED[n].error, e) for n, e in failed.items() if n in REFUSED and not re.search(REFUSED[n].error, e or "")
    }
    report = []
    if unexpected:
        report.append(f"{len(unexpected)} plans fail and are not in REFUSED:")
        report.extend(f"  {n}: {e}" for n, e in sorted(unexpected.items()))
    if now_running:
        report.append(f"{len(now_running)} plans in REFUSED now run (remove their entries): {now_running}")
    if wrong_error:
        report.append("plans in REFUSED fail differently than their entry says (pattern, error):")
        report.extend(f"  {n}: {pat!r} vs {e}" for n, (pat, e) in sorted(wrong_error.items()))
    assert not report, "\n".join(report)


def _same_exactly(a: list[tuple], b: list[tuple], keys: tuple[int, ...]) -> bool:
    """Cheap first check (hashing, no sorting): equal multisets of exactly equal rows, same ORDER BY key sequence."""
    if len(a) != len(b) or Counter(a) != Counter(b):
        return False
    return all(tuple(x[k] for k in keys) == tuple(y[k] for k in keys) for x, y in zip(a, b, strict=True))


def _disagreement(outcome: Outcome, reference: Outcome) -> str | None:
    keys = outcome.order if outcome.order == reference.order else ()
    if _same_exactly(outcome.rows, reference.rows, keys):
        return None
    try:
        assert_same_result(
            outcome.rows,
            reference.rows,
            ordered_keys=keys,
            actual_columns=outcome.columns,
            expected_columns=reference.columns,
            context=f"{outcome.plan.name} vs {reference.plan.name}",
        )
    except AssertionError as exc:
        return str(exc)
    return None


@pytest.mark.spark
@pytest.mark.corpus
def test_producers_agree_within_each_test(fr_plans, outcomes):
    """Within each test, every plan that runs gives the reference plan's result, except those in DISAGREES."""
    report = [f"{n} is in DISAGREES but does not run: {outcomes[n].error}" for n in DISAGREES if not outcomes[n].ran]
    for group, plans in groups_of(fr_plans).items():
        ran = [outcomes[p.name] for p in plans if outcomes[p.name].ran]
        candidates = [o for o in ran if o.plan.name not in DISAGREES]
        if not candidates:
            continue
        reference = candidates[0]
        for o in ran:
            if o is reference:
                continue
            problem = _disagreement(o, reference)
            if o.plan.name in DISAGREES and problem is None:
                report.append(f"{o.plan.name} now agrees with {reference.plan.name}: remove it from DISAGREES")
            elif o.plan.name not in DISAGREES and problem is not None:
                report.append(f"[{group}] {problem}")
    assert not report, "\n".join(report)


# The SQL of consumer-testing's test (substrait_consumer/testdata, and the plans' own literals), run by DuckDB on
# the same parquet files: for the tests where producers disagree, it shows which plan gives the SQL's result.
# Each group's reference plan (the first plan not in DISAGREES) must give it.
ORACLE_SQL: dict[str, str] = {
    "relation/aggregate/aggregate_with_grouping_set": (
        "SELECT SUM(L_EXTENDEDPRICE), L_LINENUMBER, L_ORDERKEY FROM lineitem "
        "GROUP BY GROUPING SETS ((L_LINENUMBER), (L_ORDERKEY)) ORDER BY L_LINENUMBER"
    ),
    "relation/aggregate/aggregate_with_group_by_cube": (
        "SELECT L_ORDERKEY, L_LINENUMBER, count(*) FROM lineitem "
        "GROUP BY CUBE(L_ORDERKEY, L_LINENUMBER) ORDER BY L_ORDERKEY, L_LINENUMBER"
    ),
    "relation/aggregate/aggregate_with_group_by_rollup": (
        "SELECT L_ORDERKEY, L_LINENUMBER, count(*) FROM lineitem "
        "GROUP BY ROLLUP(L_ORDERKEY, L_LINENUMBER) ORDER BY L_ORDERKEY, L_LINENUMBER"
    ),
    "relation/set/union_distinct": (
        "SELECT C_NATIONKEY FROM customer UNION SELECT N_NATIONKEY FROM nation ORDER BY C_NATIONKEY"
    ),
    "function/comparison/gt": "SELECT PS_AVAILQTY FROM partsupp WHERE PS_AVAILQTY > 9990 ORDER BY PS_AVAILQTY",
    "function/string/left": "SELECT N_NAME, left(N_NAME, 2) AS left_extract_N_NAME FROM nation",
}


@pytest.mark.spark
@pytest.mark.corpus
@pytest.mark.parametrize("group", sorted(ORACLE_SQL))
def test_reference_plan_gives_the_sql_result(group, fr_plans, outcomes, duckdb_oracle):
    """Where producers disagree, the plan taken as reference gives what the test's SQL gives (DuckDB as oracle)."""
    plans = groups_of(fr_plans)[group]
    assert any(p.name in DISAGREES for p in plans), f"{group}: no disagreement to settle; drop its ORACLE_SQL entry"
    reference = next(outcomes[p.name] for p in plans if outcomes[p.name].ran and p.name not in DISAGREES)
    expected = duckdb_oracle.run(ORACLE_SQL[group])
    assert_same_result(
        reference.rows,
        expected.rows,
        ordered_keys=reference.order,
        actual_columns=reference.columns,
        expected_columns=expected.columns,
        context=f"{reference.plan.name} vs DuckDB running {ORACLE_SQL[group]!r}",
    )
