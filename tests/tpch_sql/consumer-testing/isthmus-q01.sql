-- consumer-testing q01-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q01.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q01.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
select
    l_returnflag,
    l_linestatus,
    sum(l_quantity) as sum_qty,
    sum(l_extendedprice) as sum_base_price,
    sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))) as sum_disc_price,
    sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4)) * (1.00 + l_tax)) as sum_charge,
    avg(l_quantity) as avg_qty,
    avg(l_extendedprice) as avg_price,
    avg(l_discount) as avg_disc,
    count(*) as count_order
from lineitem
where l_shipdate <= date '1998-12-01' - interval '120' day
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus
