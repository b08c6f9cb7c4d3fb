-- consumer-testing q12-duckdb_plan.json as its plan computes it: orders JOIN lineitem (DuckDB 1.1.3's sides), the
-- filters on lineitem as DuckDB's optimizer wrote them: the date range on l_receiptdate carried over to l_shipdate
-- and l_commitdate (l_shipdate < l_commitdate < l_receiptdate < 1995-01-01), each with the IS NOT NULL it adds;
-- IN for the plan's OR of equalities; the sums as the decimal(38,0) DuckDB declares for a sum of integers.
-- The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select
    l_shipmode,
    cast(sum(case when o_orderpriority in ('1-URGENT', '2-HIGH') then 1 else 0 end) as decimal(38,0))
        as high_line_count,
    cast(sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end)
        as decimal(38,0)) as low_line_count
from orders
join lineitem on o_orderkey = l_orderkey
where l_shipdate < date '1995-01-01' and l_shipdate is not null
    and l_commitdate < date '1995-01-01' and l_commitdate is not null
    and l_receiptdate >= date '1994-01-01' and l_receiptdate < date '1995-01-01' and l_receiptdate is not null
    and l_shipdate < l_commitdate and l_commitdate < l_receiptdate
    and l_shipmode in ('MAIL', 'SHIP')
group by l_shipmode
order by l_shipmode
