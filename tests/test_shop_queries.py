"""A new user's own data (``shop.py``) and the everyday queries asked of it, written by the pinned DataFusion: each
plan gives DuckDB's answer to the same SQL on the same files (issue 28: the first hour with one's own data)."""

from __future__ import annotations

import pytest
from producers.check import assert_gives_duckdb_answer
from shop import SHOP_SQL

# Each test carries its tier: `unit` (pure Python) or `spark`.

# ORDER BY keys (output positions) whose order the answer must keep.
ORDERED = {
    "revenue_per_customer": (2, 0),
    "orders_per_month": (0,),
    "top_products": (1, 0),
    "category_share": (0,),
    "customers_without_orders": (0,),
    "discounted_items": (0, 1),
    "returns_rate": (0,),
    "recent_signups": (2, 0),
    "big_orders": (1, 0),
    "unicode_names": (0,),
}


@pytest.fixture(scope="module")
def shop_resolver(shop_dir):
    from substrait_spark.consumer import TableMapResolver

    return TableMapResolver.from_tables_dir(str(shop_dir))


@pytest.mark.unit
def test_every_shop_query_is_written_by_the_pinned_datafusion(shop_plans):
    errors = {name: g.error for name, g in shop_plans.items() if g.plan is None}
    assert not errors, errors
    assert sorted(shop_plans) == sorted(SHOP_SQL)


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(SHOP_SQL))
def test_shop_plan_gives_duckdbs_answer(name, shop_plans, spark, shop_resolver, shop_oracle):
    assert_gives_duckdb_answer(
        shop_plans[name], SHOP_SQL[name], spark, shop_resolver, shop_oracle, ORDERED.get(name, ())
    )
