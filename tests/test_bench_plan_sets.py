"""The benchmark's producer plan sets (``bench/plan_sets.py``): the SQL each plan is compared with states the plan's
null order, and the ORDER BY rewrite that does it keeps the query's keys and directions.

The physical-plan comparison (``bench/plans.py``) compares our plan with Spark SQL's for a SQL text; where a
producer writes a null order Spark SQL's defaults do not give (Calcite and DataFusion: ASC NULLS LAST, DESC NULLS
FIRST; DuckDB: NULLS LAST; ibis: NULLS FIRST), the text must say it, or the comparison measures a different query.
Each set declares its producer's order; here every sort field of every plan of the set is checked against it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from substrait import algebra_pb2 as alg

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from plan_sets import NullOrder, SetKey, plan_set, with_null_order  # noqa: E402

pytestmark = [pytest.mark.unit, pytest.mark.corpus]

SORT = alg.SortField.SortDirection
_NAMES = {
    SORT.SORT_DIRECTION_ASC_NULLS_FIRST: ("asc", "nulls first"),
    SORT.SORT_DIRECTION_ASC_NULLS_LAST: ("asc", "nulls last"),
    SORT.SORT_DIRECTION_DESC_NULLS_FIRST: ("desc", "nulls first"),
    SORT.SORT_DIRECTION_DESC_NULLS_LAST: ("desc", "nulls last"),
}
_KEY = re.compile(r"\b(asc|desc)\s+(nulls\s+(?:first|last))\s*(?:,|\n|$)", re.IGNORECASE)


def _plan_sort_fields(plan) -> list[tuple[str, str]]:
    """(direction, nulls) of every sort field of the plan's SortRels, in plan order."""
    from substrait_spark.consumer.walk import nodes

    return [_NAMES[f.direction] for m, _ in nodes(plan) if isinstance(m, alg.SortRel) for f in m.sorts]


def _sql_sort_keys(sql: str) -> list[tuple[str, str]]:
    tail = sql[sql.lower().rindex("order by") :] if "order by" in sql.lower() else ""
    return [(d.lower(), " ".join(n.lower().split())) for d, n in _KEY.findall(tail)]


@pytest.mark.parametrize("key", [k for k in SetKey if k is not SetKey.IBM], ids=lambda k: k.value)
def test_sql_states_the_plans_null_order(key, tpch_dir):
    """Every sort field of every plan in the set is the SQL's ORDER BY key at the same position: same direction,
    and the NULLS clause the set's declared producer order wrote into the SQL."""
    ps = plan_set(key)
    assert ps.null_order is not None
    plans = ps.load_plans(ps.queries)
    checked = 0
    for q, plan in plans.items():
        fields = _plan_sort_fields(plan)
        assert _sql_sort_keys(ps.sql_text(q)) == fields, f"{key.value} q{q:02d}: {ps.sql_text(q)[-200:]}"
        checked += bool(fields)
    assert checked >= len(plans) - 4  # TPC-H q06, q14, q17, q19 have no ORDER BY


def test_null_order_rewrite():
    """Keys keep their expressions and directions; a subquery's ORDER BY and a key with a NULLS clause are left
    alone; the LIMIT stays after the keys."""
    sql = "select a, b from (select a, b from t order by a) s order by a desc, f(b, 1), b nulls first limit 3"
    assert with_null_order(sql, NullOrder.HIGH) == (
        "select a, b from (select a, b from t order by a) s order by "
        "a desc nulls first, f(b, 1) asc nulls last, b nulls first\nlimit 3"
    )
    assert with_null_order("select a from t ORDER BY a ASC", NullOrder.FIRST).endswith("a ASC nulls first")
    assert with_null_order("select a from t", NullOrder.LAST) == "select a from t"
