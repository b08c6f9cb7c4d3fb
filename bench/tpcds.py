"""TPC-DS in the benchmarks: DataFusion's plans of DuckDB's 99 query texts against Spark SQL's plan of the same text.

The data and texts are the test set-up's (`make data-tpcds`: dsdgen sf0.1 and `queries/qNN.sql`; `make
data-tpcds-sf1` for the measurements); the plans are DataFusion's at the version the ``test`` extra pins, written
from those texts over the sf0.1 files into the producer cache (``tests/producers/datafusion_plans.plans_over``, as
``tests/test_tpcds.py`` does). The plan set is a ``plan_sets.PlanSet`` like the TPC-H producers' sets, so the
same-result check, the physical-plan comparison, the translation and the execution benchmarks run on it unchanged:

* SQL: DuckDB's text as Spark SQL reads it (``PlanSet.sql_text``: standard double-quoted identifiers as backticks,
  comment lines removed) with DataFusion's null order (ASC NULLS LAST, DESC NULLS FIRST) stated on every ORDER BY
  key that has none — the query's, a subquery's and a window's: DataFusion writes it on every sort field;
* where Spark SQL cannot take DuckDB's text, the minimal rewrite in ``bench/tpcds_sql/qNN.sql``, and why, in
  ``SQL_OVERRIDES``;
* a plan DataFusion does not write is listed with DataFusion's error; a plan the engine refuses is compared as an
  error with the engine's message.
"""

from __future__ import annotations

import sys
from pathlib import Path

from common import BENCH_DIR, REPO_ROOT, TESTS_DIR, qname
from plan_sets import NullOrder, PlanSet

TPCDS_DATA = REPO_ROOT / ".data" / "tpcds"
TPCDS_SMALL = TPCDS_DATA / "sf0.1"
TPCDS_SF1 = TPCDS_DATA / "sf1"
QUERIES = tuple(range(1, 100))
SQL_DIR = BENCH_DIR / "tpcds_sql"
KEY = "tpcds-datafusion"
# The RESULTS.md sections (`run_all.py --tpcds-only` replaces them; a full run keeps them as measured).
PLANS_HEADING = "## TPC-DS (c) Physical plans"
TRANSLATION_HEADING = "## TPC-DS (a) Translation time"
EXECUTION_HEADING = "## TPC-DS (b) Execution"
CONNECT_HEADING = "## TPC-DS (a) Translation over Spark Connect"

# Where the SQL is not DuckDB's text (Spark SQL cannot take it, or the plan states a different query than the text, in
# what the physical plan shows though not in the result): the rewrite in bench/tpcds_sql/qNN.sql (its header says
# how), and why. Never a difference our translation introduces: that is fixed in the translation (or reported).
_SORT_KEYS = "the ORDER BY keys DataFusion keeps (it drops keys the earlier ones determine)"
_IN_LIST = "IN for an OR of equalities on one column (the plan cannot tell them apart)"
_COUNT_DISTINCT = "count(DISTINCT order number) beside sums as DataFusion writes it: two aggregates"
SQL_OVERRIDES: dict[int, str] = {
    **{q: _SORT_KEYS for q in (43, 47, 54, 57, 58, 60, 78, 83, 89)},
    **{q: _IN_LIST for q in (34, 71, 73)},
    **{q: _COUNT_DISTINCT for q in (16, 94, 95)},
}

# Why the physical plan of ours differs from Spark SQL's, per query (what the comparison found, read in both plans).
PLAN_DIFFERENCES: dict[int, str] = {}


def _producers_on_path() -> None:
    for folder in (TESTS_DIR, REPO_ROOT / "tools"):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))


def require_tpcds(tables_dir: Path, make_target: str) -> None:
    """Exit with the make target to run when the folder lacks the TPC-DS tables."""
    _producers_on_path()
    from producers import tpcds

    if not all((tables_dir / f"{t}.parquet").exists() for t in tpcds.TABLES):
        raise SystemExit(f"TPC-DS data missing in {tables_dir}: run `make {make_target}` first")


def sql_path(small_dir: Path, q: int) -> Path:
    """The SQL stating query `q`'s plan: DuckDB's text, or its rewrite for Spark SQL (``SQL_OVERRIDES``)."""
    return SQL_DIR / f"{qname(q)}.sql" if q in SQL_OVERRIDES else small_dir / "queries" / f"{qname(q)}.sql"


def plan_set(small_dir: Path = TPCDS_SMALL) -> PlanSet:
    """DataFusion's TPC-DS plans (from the producer cache, written now where missing or stale) as a plan set."""
    require_tpcds(small_dir, "data-tpcds")
    _producers_on_path()
    from producers import datafusion_plans, tpcds

    made = datafusion_plans.plans_over(small_dir, tpcds.TABLES, tpcds.query_texts(small_dir))
    plans = {q: g.plan for q in QUERIES if (g := made[tpcds.name(q)]).plan is not None}
    unwritten = {q: f"DataFusion wrote no plan: {g.error}" for q in QUERIES if (g := made[tpcds.name(q)]).plan is None}
    version = datafusion_plans.version()
    return PlanSet(
        KEY,
        f"TPC-DS, DataFusion {version}",
        plans,
        {q: sql_path(small_dir, q) for q in QUERIES},
        {q: why for q, why in SQL_OVERRIDES.items() if q in plans},
        unwritten,
        f".data/producers/datafusion-{version}/tpcds-qNN.bin (from DuckDB's texts, "
        f"{small_dir.relative_to(REPO_ROOT)}/queries/qNN.sql, over the sf0.1 files)",
        NullOrder.HIGH,
        null_order_everywhere=True,
        benchmark="TPC-DS",
        universe=QUERIES,
        check_dir=small_dir,
    )
