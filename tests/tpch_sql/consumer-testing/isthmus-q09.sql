-- consumer-testing q09-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q09.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q09.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
-- The year is extract's i64, cast to bigint as the plan declares.
-- As in the TPC-H text, a derived table stands under the aggregate: the plan's projection below its
-- AggregateRel computes a grouping key, and Spark SQL evaluates that projection in a Project of its own.
select nation, o_year, sum(amount) as sum_profit
from (
    select
        n_name as nation,
        cast(extract(year from o_orderdate) as bigint) as o_year,
        cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))
            - cast(ps_supplycost * l_quantity as decimal(30,4)) as amount
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
order by nation, o_year desc
