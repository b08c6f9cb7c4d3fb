"""Plans DataFusion writes over nanosecond timestamps (issue 28 item 10): it declares `precision_timestamp(9)` for
the column and writes its literals and casts at precision 9. Spark's data holds microseconds, so reading it as
nanoseconds changes no value: each plan runs, with DuckDB's answer to the same SQL over the same (microsecond)
files."""

from __future__ import annotations

import pytest
from oracles import assert_same_result

pytestmark = [pytest.mark.spark]

NS_SQL = {
    "filter_on_a_literal": """
        SELECT order_id, ordered_at FROM orders
        WHERE ordered_at >= TIMESTAMP '2025-06-01 00:00:00' AND ordered_at < TIMESTAMP '2025-06-15 12:30:00'""",
    "per_month": """
        SELECT date_trunc('month', ordered_at) AS month, COUNT(*) AS orders
        FROM orders GROUP BY date_trunc('month', ordered_at)""",
    "per_week_of_a_date": """
        SELECT date_trunc('week', order_date) AS week, COUNT(*) AS orders FROM orders GROUP BY 1""",
    "cast_and_hour": """
        SELECT CAST(ordered_at AS DATE) AS day, date_trunc('hour', ordered_at) AS hour, CAST(order_date AS TIMESTAMP)
               AS midnight, order_id
        FROM orders WHERE EXTRACT(hour FROM ordered_at) >= 20""",
}


@pytest.fixture(scope="module")
def ns_context(shop_dir):
    """DataFusion with the shop's orders as nanosecond timestamps (an Arrow table, as a DataFusion user has)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datafusion import SessionContext

    orders = pq.read_table(shop_dir / "orders.parquet")
    i = orders.schema.get_field_index("ordered_at")
    orders = orders.set_column(
        i, pa.field("ordered_at", pa.timestamp("ns")), orders["ordered_at"].cast(pa.timestamp("ns"))
    )
    ctx = SessionContext()
    ctx.register_record_batches("orders", [orders.to_batches()])
    return ctx


@pytest.mark.parametrize("name", sorted(NS_SQL))
def test_nanosecond_plan_reads_microsecond_data_losslessly(name, ns_context, shop_dir, spark, shop_oracle):
    from datafusion.substrait import Serde
    from substrait_spark.consumer import TableMapResolver, load_plan, to_dataframe

    data = Serde.serialize_bytes(NS_SQL[name], ns_context)
    loaded = load_plan(data)
    assert "precision: 9" in str(loaded.plan), "DataFusion no longer writes nanoseconds: the test tests nothing"
    df = to_dataframe(loaded, spark, TableMapResolver.from_tables_dir(str(shop_dir)))
    expected = shop_oracle.run(NS_SQL[name])
    assert_same_result([tuple(r) for r in df.collect()], expected.rows, context=f"{name}: {NS_SQL[name].strip()}")
