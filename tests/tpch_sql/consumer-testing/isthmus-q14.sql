-- consumer-testing q14-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q14.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q14.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
select
    100.00 * sum(case when p_type like 'PROMO%'
        then cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4)) else 0.0000 end)
    / sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))) as promo_revenue
from lineitem, part
where l_partkey = p_partkey
    and l_shipdate >= date '1995-09-01'
    and l_shipdate < date '1995-10-01'
