-- consumer-testing q10-duckdb_plan.json as its plan computes it. DuckDB 1.1.3's optimizer wrote its own join order
-- and sides: lineitem JOIN ((customer JOIN nation) JOIN orders); each filter on the table it reads (with the
-- IS NOT NULL it adds), and c_custkey <= 14999, a bound DuckDB derived from o_custkey's statistics at the scale it
-- planned at (sf0.01's largest o_custkey). The decimal types it declares: 1.00 as decimal(16,2), 1.00 - l_discount
-- decimal(16,2), the product decimal(18,4). The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select
    c_custkey,
    c_name,
    sum(cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2)) as decimal(18,4)))
        as revenue,
    c_acctbal,
    n_name,
    c_address,
    c_phone,
    c_comment
from lineitem
join (
    (
        customer
        join nation on c_nationkey = n_nationkey
    )
    join orders on c_custkey = o_custkey
) on l_orderkey = o_orderkey
where l_returnflag = 'R' and l_returnflag is not null
    and c_custkey <= 14999 and c_custkey is not null
    and o_orderdate >= date '1993-10-01' and o_orderdate < date '1994-01-01' and o_orderdate is not null
group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
order by revenue desc
limit 20
