"""The benchmark's TPC-DS plan set (``bench/tpcds.py``): the SQL each DataFusion plan is compared with states the
plan's null order on every ORDER BY — the query's, a subquery's and a window's — without touching anything else.

DataFusion writes ASC NULLS LAST / DESC NULLS FIRST on every sort field, where Spark SQL's defaults are the
opposite; DuckDB's texts state NULLS FIRST on some keys. If the SQL does not say what the plan says, the physical
plan comparison (``bench/plans.py``) measures a different query (and a window's rank over a nullable key gives
different rows).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from producers import tpcds as tpcds_data
from substrait import algebra_pb2 as alg

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import tpcds  # noqa: E402
from common import split_top  # noqa: E402
from plan_sets import NullOrder, order_by_lists, with_null_order  # noqa: E402

pytestmark = [pytest.mark.unit, pytest.mark.corpus]

SORT = alg.SortField.SortDirection
_NAMES = {
    SORT.SORT_DIRECTION_ASC_NULLS_FIRST: ("asc", "nulls first"),
    SORT.SORT_DIRECTION_ASC_NULLS_LAST: ("asc", "nulls last"),
    SORT.SORT_DIRECTION_DESC_NULLS_FIRST: ("desc", "nulls first"),
    SORT.SORT_DIRECTION_DESC_NULLS_LAST: ("desc", "nulls last"),
}
_KEY = re.compile(r"\s(?:(asc|desc)\s+)?(nulls\s+(?:first|last))\s*$", re.IGNORECASE)


@pytest.fixture(scope="module")
def tpcds_set():
    tpcds_data.ensure_tpcds_data()
    return tpcds.plan_set()


def _top_sort_fields(plan) -> list[tuple[str, str]] | None:
    """(direction, nulls) of the plan's top SortRel (the root's input, under its FetchRel), or None."""
    rel = plan.relations[-1].root.input
    while rel.WhichOneof("rel_type") == "fetch":
        rel = rel.fetch.input
    if rel.WhichOneof("rel_type") != "sort":
        return None
    return [_NAMES[f.direction] for f in rel.sort.sorts]


def _outermost_keys(sql: str) -> list[tuple[str, str]]:
    """(direction, nulls) of each key of the query's own ORDER BY, or where the query only projects a sorted
    subquery (q70, q86: the level computed over the sort), the outermost subquery's (a key without a direction is
    ascending)."""
    lists = order_by_lists(sql)
    if not lists:
        return []
    outermost = min(depth for depth, _, _ in lists)
    spans = [s for s in lists if s[0] == outermost]
    _, start, end = spans[-1]
    out = []
    for key in split_top(sql[start:end]):
        m = _KEY.search(key)
        assert m, f"key without a NULLS clause: {key!r}"
        out.append(((m.group(1) or "asc").lower(), " ".join(m.group(2).lower().split())))
    return out


def test_sql_states_each_plans_null_order(tpcds_set):
    """The top sort of every DataFusion TPC-DS plan is its SQL's ORDER BY, key for key, with the same direction
    and null order; no key of any ORDER BY in the SQL is left without a NULLS clause."""
    plans = tpcds_set.load_plans(tpcds_set.queries)
    checked = 0
    for q, plan in plans.items():
        sql = tpcds_set.sql_text(q)
        for _, start, end in order_by_lists(sql):
            for key in split_top(sql[start:end]):
                assert _KEY.search(key), f"q{q:02d}: ORDER BY key without a null order: {key!r}"
        fields = _top_sort_fields(plan)
        if fields is None:
            continue
        assert _outermost_keys(sql) == fields, f"q{q:02d}: {sql[-300:]}"
        checked += 1
    assert checked >= 90, checked


def test_null_order_everywhere_rewrite():
    """Every ORDER BY gets the order — a window's (before its frame), a subquery's (before its LIMIT), the
    query's — while keys that state one, string literals and the rest of the text are kept."""
    sql = (
        "select a, rank() over (partition by b order by c desc rows between unbounded preceding and current row) r "
        "from (select a, b, c from t where s = 'x order by y' order by a limit 5) u order by a, r nulls first limit 3"
    )
    assert with_null_order(sql, NullOrder.HIGH, everywhere=True) == (
        "select a, rank() over (partition by b order by c desc nulls first\n"
        "rows between unbounded preceding and current row) r from (select a, b, c from t where s = 'x order by y' "
        "order by a asc nulls last\nlimit 5) u order by a asc nulls last, r nulls first\nlimit 3"
    )
    # Without `everywhere`, the query's own ORDER BY only (the TPC-H sets).
    assert with_null_order(sql, NullOrder.HIGH).startswith("select a, rank() over (partition by b order by c desc rows")


def test_refused_and_unwritten_plans_are_named(tpcds_set):
    """Every one of the 99 queries is either a plan of the set or excluded with DataFusion's error: none is lost."""
    assert set(tpcds_set.plans) | set(tpcds_set.excluded) == set(tpcds.QUERIES)
    assert all(why.startswith("DataFusion wrote no plan: ") for why in tpcds_set.excluded.values())


def test_plan_names_are_normalised():
    """Names are erased wherever Spark prints them: the fields of a merged scalar subquery (named after the
    aggregates' aliases: DataFusion's `_s0`, Spark SQL's `count(1)`) and an alias that is not a word (DataFusion's
    name for an unaliased expression); expressions stay."""
    from plans import normalise_text

    ours = "Project [CASE WHEN (Subquery subquery#12, [id=#301]._s0 > 74129) THEN 1 END AS bucket1#40]"
    sql = "Project [CASE WHEN (Subquery subquery#7, [id=#99].count(1) > 74129) THEN 1 END AS bucket1#3]"
    assert normalise_text(ours) == normalise_text(sql)
    assert normalise_text("Project [named_struct(_s0, _s0#5L, _s24, _s24#6) AS mergedValue#9]") == normalise_text(
        "Project [named_struct(count(1), count(1)#2L, avg(x), avg(x)#3) AS mergedValue#4]"
    )
    assert normalise_text("Project [(a#1 * 100) AS promotional_sales.promotions / all_sales.total * Int64(100)#7]") == (
        normalise_text("Project [(a#2 * 100) AS (promotions * 100)#8]")
    )
    assert normalise_text("Project [(a#1 * 100) AS x#7]") != normalise_text("Project [(a#1 * 10) AS x#7]")
    # A name Spark generates that holds an `AS` (a CAST) is erased whole, not from its `AS` on (TPC-H q20).
    generated = "Join (cast(a#1 as double) > (0.5 * CAST(sum(l_quantity) AS DOUBLE))#436)"
    assert normalise_text(generated) == normalise_text("Join (cast(a#2 as double) > _s3#9)")
    assert normalise_text(generated) != normalise_text("Join (cast(a#2 as double) > (0.5 * CAST(b#3 AS #9)")
