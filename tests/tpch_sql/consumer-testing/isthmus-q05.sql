-- consumer-testing q05-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q05.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q05.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
select n_name, sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))) as revenue
from customer, orders, lineitem, supplier, nation, region
where c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and l_suppkey = s_suppkey
    and c_nationkey = s_nationkey
    and s_nationkey = n_nationkey
    and n_regionkey = r_regionkey
    and r_name = 'ASIA'
    and o_orderdate >= date '1994-01-01'
    and o_orderdate < date '1995-01-01'
group by n_name
order by revenue desc
