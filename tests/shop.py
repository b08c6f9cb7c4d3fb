"""A new user's own data: a small shop (customers, products, orders, order items) with NULLs, decimals, dates,
timestamps and unicode text, and the everyday queries a data team asks of it. Not TPC-H: the regression tests of
issue 28 run plans of this shape (DataFusion's, written by the test set-up: ``producers/shop_plans.py``).

``write_shop(dir)`` writes ``DIR/<table>.parquet`` (one file each, deterministic), so ``--tables-dir DIR`` binds
them; ``SHOP_SQL`` holds the queries by name; ``wrap_in_write`` puts a query plan's root under a WriteRel (how a
user of a query-only producer gets a CTAS or INSERT plan).
"""

from __future__ import annotations

import datetime as dt
import os
import random
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

SHOP_TABLES = ("customers", "products", "orders", "order_items")
SEED = 28

NAMES = ("Zoë", "José", "Ångström", "Françoise", "Łukasz", "Søren", "Ana", "Björk", "Miyu 美優", "O'Brien", "Chloé")
COUNTRIES = ("DE", "FR", "ES", "SE", "PL", "JP", "IE", None)
CATEGORIES = ("books", "garden", "kitchen", "toys", None)
STATUSES = ("paid", "shipped", "returned", "cancelled")


def shop_arrow() -> dict[str, object]:
    """The four tables as Arrow tables (for parquet, DuckDB and DataFusion)."""
    import pyarrow as pa

    rng = random.Random(SEED)
    customers = {
        "customer_id": list(range(1, 61)),
        "name": [f"{rng.choice(NAMES)} {i}" for i in range(1, 61)],
        "country": [rng.choice(COUNTRIES) for _ in range(60)],
        "signup_date": [dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(500)) for _ in range(60)],
    }
    products = {
        "product_id": list(range(1, 31)),
        "name": [f"product №{i}" for i in range(1, 31)],
        "category": [rng.choice(CATEGORIES) for _ in range(30)],
        "price": [Decimal(rng.randrange(199, 99999)) / 100 for _ in range(30)],
    }
    order_dates = [dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(365)) for _ in range(240)]
    orders = {
        "order_id": list(range(1001, 1241)),
        "customer_id": [None if i % 37 == 0 else rng.randrange(1, 51) for i in range(240)],
        "order_date": order_dates,
        "ordered_at": [
            dt.datetime.combine(
                d, dt.time(rng.randrange(24), rng.randrange(60), rng.randrange(60), rng.randrange(10**6))
            )
            for d in order_dates
        ],
        "status": [rng.choice(STATUSES) for _ in range(240)],
    }
    items: dict[str, list] = {"order_id": [], "product_id": [], "quantity": [], "unit_price": [], "discount": []}
    for order_id in orders["order_id"]:
        for _ in range(rng.randrange(1, 5)):
            product = rng.randrange(1, 31)
            items["order_id"].append(order_id)
            items["product_id"].append(product)
            items["quantity"].append(rng.randrange(1, 6))
            items["unit_price"].append(products["price"][product - 1])
            items["discount"].append(None if rng.random() < 0.6 else Decimal(rng.choice((5, 10, 15, 20))) / 100)
    schemas = {
        "customers": pa.schema(
            [
                ("customer_id", pa.int64(), False),
                ("name", pa.string()),
                ("country", pa.string()),
                ("signup_date", pa.date32()),
            ]
        ),
        "products": pa.schema(
            [
                ("product_id", pa.int64(), False),
                ("name", pa.string()),
                ("category", pa.string()),
                ("price", pa.decimal128(10, 2)),
            ]
        ),
        "orders": pa.schema(
            [
                ("order_id", pa.int64(), False),
                ("customer_id", pa.int64()),
                ("order_date", pa.date32()),
                ("ordered_at", pa.timestamp("us")),
                ("status", pa.string()),
            ]
        ),
        "order_items": pa.schema(
            [
                ("order_id", pa.int64(), False),
                ("product_id", pa.int64()),
                ("quantity", pa.int32()),
                ("unit_price", pa.decimal128(10, 2)),
                ("discount", pa.decimal128(4, 2)),
            ]
        ),
    }
    data = {"customers": customers, "products": products, "orders": orders, "order_items": items}
    return {name: pa.table(data[name], schema=schemas[name]) for name in SHOP_TABLES}


def write_shop(directory: str | Path) -> Path:
    """`DIR/<table>.parquet` for the four tables (rewritten only when missing); the folder."""
    import pyarrow.parquet as pq

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tables = None
    for name in SHOP_TABLES:
        path = out / f"{name}.parquet"
        if not path.is_file():
            tables = tables or shop_arrow()
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # two test runs may write at once
            pq.write_table(tables[name], tmp)
            tmp.replace(path)
    return out


# Everyday questions a shop's data team asks, as DataFusion 55 takes them.
SHOP_SQL: dict[str, str] = {
    "revenue_per_customer": """
        SELECT c.customer_id, c.name, SUM(i.quantity * i.unit_price) AS gross_revenue
        FROM customers c JOIN orders o ON o.customer_id = c.customer_id
        JOIN order_items i ON i.order_id = o.order_id
        WHERE o.status <> 'cancelled'
        GROUP BY c.customer_id, c.name ORDER BY gross_revenue DESC, c.customer_id""",
    "orders_per_month": """
        SELECT date_trunc('month', o.ordered_at) AS month, COUNT(*) AS orders
        FROM orders o GROUP BY date_trunc('month', o.ordered_at) ORDER BY month""",
    "top_products": """
        SELECT p.name, SUM(i.quantity) AS units FROM order_items i JOIN products p ON p.product_id = i.product_id
        GROUP BY p.name ORDER BY units DESC, p.name LIMIT 5""",
    "category_share": """
        SELECT COALESCE(p.category, 'uncategorised') AS category, COUNT(DISTINCT i.order_id) AS orders,
               SUM(i.quantity * i.unit_price) AS revenue
        FROM order_items i JOIN products p ON p.product_id = i.product_id GROUP BY 1 ORDER BY 1""",
    "customers_without_orders": """
        SELECT c.customer_id, c.name FROM customers c
        WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id) ORDER BY c.customer_id""",
    "orders_by_country": """
        SELECT c.country, COUNT(o.order_id) AS orders FROM customers c LEFT JOIN orders o
        ON o.customer_id = c.customer_id GROUP BY c.country ORDER BY c.country NULLS FIRST""",
    "discounted_items": """
        SELECT i.order_id, i.product_id, i.unit_price * (1 - i.discount) AS net_price
        FROM order_items i WHERE i.discount IS NOT NULL ORDER BY i.order_id, i.product_id, net_price""",
    "returns_rate": """
        SELECT status, COUNT(*) AS n, CAST(COUNT(*) AS DOUBLE) / (SELECT COUNT(*) FROM orders) AS share
        FROM orders GROUP BY status ORDER BY status""",
    "recent_signups": """
        SELECT customer_id, name, signup_date FROM customers
        WHERE signup_date >= DATE '2025-01-01' ORDER BY signup_date, customer_id""",
    "big_orders": """
        SELECT o.order_id, SUM(i.quantity * i.unit_price) AS total FROM orders o
        JOIN order_items i ON i.order_id = o.order_id GROUP BY o.order_id
        HAVING SUM(i.quantity * i.unit_price) > 5000 ORDER BY total DESC, o.order_id""",
    "unicode_names": """
        SELECT name, upper(name) AS shout, length(name) AS chars FROM customers
        WHERE name LIKE '%ö%' OR name LIKE '%美%' ORDER BY name""",
    "all_orders": "SELECT * FROM orders",
}


def wrap_in_write(
    plan_bytes: bytes,
    table: str | Sequence[str],
    names: Sequence[str],
    types: Sequence[object],
    op: int,
    create_mode: int = 0,
) -> bytes:
    """`plan_bytes` (one root) with its root's input under a WriteRel into `table`, declaring `names`/`types`
    (plan_builder types): a CTAS (`WRITE_OP_CTAS`) or INSERT (`WRITE_OP_INSERT`) plan of a query-only producer."""
    from plan_builder import write
    from substrait import plan_pb2

    plan = plan_pb2.Plan.FromString(plan_bytes)
    root = plan.relations[0].root
    wrapped = write(table, root.input, names, types, op=op, create_mode=create_mode)  # type: ignore[arg-type]
    root.input.CopyFrom(wrapped)
    del root.names[:]
    return plan.SerializeToString()
