-- consumer-testing q09-duckdb_plan.json as its plan computes it. DuckDB 1.1.3's optimizer wrote its own join order
-- and sides: ((lineitem JOIN part) JOIN orders) JOIN (partsupp JOIN (supplier JOIN nation)), the last join on
-- l_suppkey = s_suppkey and p_partkey = ps_partkey (DuckDB's equivalence classes: l_suppkey = ps_suppkey is implied
-- by ps_suppkey = s_suppkey), p_name LIKE '%green%' as contains. The decimal types it declares: 1.00 as
-- decimal(16,2), 1.00 - l_discount decimal(16,2), each product and the difference decimal(18,4); the year a
-- bigint (DuckDB's extract). The plan's Project under its Aggregate is a derived table, as in the TPC-H text.
-- The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select nation, o_year, sum(amount) as sum_profit
from (
    select
        n_name as nation,
        cast(extract(year from o_orderdate) as bigint) as o_year,
        cast(
            cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2)) as decimal(18,4))
            - cast(ps_supplycost * l_quantity as decimal(18,4))
            as decimal(18,4)) as amount
    from (
        (
            lineitem
            join part on l_partkey = p_partkey
        )
        join orders on l_orderkey = o_orderkey
    )
    join (
        partsupp
        join (
            supplier
            join nation on s_nationkey = n_nationkey
        ) on ps_suppkey = s_suppkey
    ) on l_suppkey = s_suppkey and p_partkey = ps_partkey
    where contains(p_name, 'green')
) as profit
group by nation, o_year
order by nation, o_year desc
