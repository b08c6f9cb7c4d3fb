-- IBM compliance suite q09 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q09.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (nation ASC NULLS LAST, o_year DESC NULLS FIRST).
-- As in the TPC-H text, a derived table stands under the aggregate: the plan's projection below its
-- AggregateRel computes a grouping key, and Spark SQL evaluates that projection in a Project of its own.
select nation, o_year, sum(amount) as sum_profit
from (
    select
        n_name as nation,
        cast(extract(year from o_orderdate) as bigint) as o_year,
        cast(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))
            - cast(ps_supplycost * l_quantity as decimal(19,4)) as decimal(19,4)) as amount
    from part, supplier, lineitem, partsupp, orders, nation
    where s_suppkey = l_suppkey
        and ps_suppkey = l_suppkey
        and ps_partkey = l_partkey
        and p_partkey = l_partkey
        and o_orderkey = l_orderkey
        and s_nationkey = n_nationkey
        and p_name like '%green%'
) as profit
group by nation, o_year
order by nation asc nulls last, o_year desc nulls first
