-- consumer-testing q06-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q06.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q06.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
select sum(cast(l_extendedprice * l_discount as decimal(30,4))) as revenue
from lineitem
where l_shipdate >= date '1994-01-01'
    and l_shipdate < date '1995-01-01'
    and l_discount between 0.06 - 0.01 and 0.06 + 0.01
    and l_quantity < 24
