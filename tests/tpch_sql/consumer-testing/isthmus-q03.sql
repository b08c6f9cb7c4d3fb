-- consumer-testing q03-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q03.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q03.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
select
    l_orderkey,
    sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))) as revenue,
    o_orderdate,
    o_shippriority
from customer, orders, lineitem
where c_mktsegment = 'BUILDING'
    and c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and o_orderdate < date '1995-03-15'
    and l_shipdate > date '1995-03-15'
group by l_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10
