-- consumer-testing q03-duckdb_plan.json as its plan computes it. DuckDB 1.1.3's optimizer wrote its own join order
-- and sides: lineitem JOIN (orders JOIN customer), each filter on the table it reads (with the IS NOT NULL it adds),
-- and c_custkey <= 14999, a bound DuckDB derived from o_custkey's statistics at the scale it planned at (sf0.01's
-- largest o_custkey; at a larger scale the plan's query is not TPC-H's). It groups by o_orderkey (the join key
-- equal to l_orderkey). The decimal types it declares: 1.00 as decimal(16,2), 1.00 - l_discount decimal(16,2),
-- the product decimal(18,4). The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select
    o_orderkey as l_orderkey,
    sum(cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2)) as decimal(18,4)))
        as revenue,
    o_orderdate,
    o_shippriority
from lineitem
join (
    orders
    join customer on o_custkey = c_custkey
) on l_orderkey = o_orderkey
where l_shipdate > date '1995-03-15' and l_shipdate is not null
    and o_orderdate < date '1995-03-15' and o_orderdate is not null
    and c_mktsegment = 'BUILDING' and c_mktsegment is not null
    and c_custkey <= 14999
group by o_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10
