-- consumer-testing q05-duckdb_plan.json as its plan computes it. DuckDB 1.1.3's optimizer wrote its own join order
-- and sides: lineitem JOIN (orders JOIN (customer JOIN (nation JOIN region))), then supplier on both keys; each
-- filter on the table it reads (with the IS NOT NULL it adds), and c_custkey <= 14999, a bound DuckDB derived from
-- o_custkey's statistics at the scale it planned at (sf0.01's largest o_custkey). The decimal types it declares:
-- 1.00 as decimal(16,2), 1.00 - l_discount decimal(16,2), the product decimal(18,4).
-- The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select
    n_name,
    sum(cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2)) as decimal(18,4)))
        as revenue
from lineitem
join (
    orders
    join (
        customer
        join (
            nation
            join region on n_regionkey = r_regionkey
        ) on c_nationkey = n_nationkey
    ) on o_custkey = c_custkey
) on l_orderkey = o_orderkey
join supplier on c_nationkey = s_nationkey and l_suppkey = s_suppkey
where o_orderdate >= date '1994-01-01' and o_orderdate < date '1995-01-01' and o_orderdate is not null
    and r_name = 'ASIA' and r_name is not null
    and c_custkey <= 14999
group by n_name
order by revenue desc
