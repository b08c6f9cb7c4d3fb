-- consumer-testing q11-duckdb_plan.json as its plan computes it. DuckDB 1.1.3 wrote the HAVING's scalar subquery
-- as an inner join with the one row of any_value(threshold) on value > threshold (a join the plan has, so Spark
-- runs a nested-loop join, not a filter; any_value ignoring nulls, as the translation takes it; the plan's
-- Project of the threshold under it inlined), and its own join order and sides: partsupp JOIN (supplier JOIN nation),
-- the nation filter with the IS NOT NULL it adds. The decimal types it declares: the product of
-- decimal(34,2) and decimal(34,0) casts, decimal(34,2); 0.0001 as decimal(38,10); the threshold and the compared
-- value decimal(38,12). The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select
    ps_partkey,
    value
from (
    select
        ps_partkey,
        sum(cast(cast(ps_supplycost as decimal(34,2)) * cast(ps_availqty as decimal(34,0)) as decimal(34,2)))
            as value
    from partsupp
    join (
        supplier
        join nation on s_nationkey = n_nationkey
    ) on ps_suppkey = s_suppkey
    where n_name = 'JAPAN' and n_name is not null
    group by ps_partkey
) as by_part
join (
    select any_value(cast(total * cast(0.0001 as decimal(38,10)) as decimal(38,12)), true) as threshold
    from (
        select
            sum(cast(cast(ps_supplycost as decimal(34,2)) * cast(ps_availqty as decimal(34,0)) as decimal(34,2)))
                as total
        from partsupp
        join (
            supplier
            join nation on s_nationkey = n_nationkey
        ) on ps_suppkey = s_suppkey
        where n_name = 'JAPAN' and n_name is not null
    ) as total
) as limit_ on cast(value as decimal(38,12)) > threshold
order by value desc
