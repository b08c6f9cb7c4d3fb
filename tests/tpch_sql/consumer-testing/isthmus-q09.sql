-- consumer-testing q09-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q09.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q09.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
-- The year is extract's i64, cast to bigint as the plan declares.
select
    n_name as nation,
    cast(extract(year from o_orderdate) as bigint) as o_year,
    sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))
        - cast(ps_supplycost * l_quantity as decimal(30,4))) as sum_profit
from part, supplier, lineitem, partsupp, orders, nation
where s_suppkey = l_suppkey
    and ps_suppkey = l_suppkey
    and ps_partkey = l_partkey
    and p_partkey = l_partkey
    and o_orderkey = l_orderkey
    and s_nationkey = n_nationkey
    and p_name like '%green%'
group by n_name, cast(extract(year from o_orderdate) as bigint)
order by nation, o_year desc
