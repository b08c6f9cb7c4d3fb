-- consumer-testing q15-duckdb_plan.json as its plan computes it. DuckDB 1.1.3 wrote the scalar subquery
-- (max(total_revenue)) as an inner join with the one row of any_value(max_revenue) on total_revenue = max_revenue
-- (a join the plan has; any_value ignoring nulls, as the translation takes it), and supplier JOIN that (its sides); the l_shipdate filter with the IS NOT NULL it adds.
-- The decimal types it declares: 1.00 as decimal(16,2), 1.00 - l_discount decimal(16,2), the product
-- decimal(18,4). The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
with revenue0 as (
    select
        l_suppkey as supplier_no,
        sum(cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2))
            as decimal(18,4))) as total_revenue
    from lineitem
    where l_shipdate >= date '1996-01-01' and l_shipdate < date '1996-04-01' and l_shipdate is not null
    group by l_suppkey
)
select
    s_suppkey,
    s_name,
    s_address,
    s_phone,
    total_revenue
from supplier
join (
    revenue0
    join (
        select any_value(max_revenue, true) as max_revenue
        from (select max(total_revenue) as max_revenue from revenue0) as m
    ) as top on total_revenue = max_revenue
) on s_suppkey = supplier_no
order by s_suppkey
