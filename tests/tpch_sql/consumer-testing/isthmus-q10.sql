-- consumer-testing q10-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q10.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q10.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
select
    c_custkey,
    c_name,
    sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))) as revenue,
    c_acctbal,
    n_name,
    c_address,
    c_phone,
    c_comment
from customer, orders, lineitem, nation
where c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and o_orderdate >= date '1993-10-01'
    and o_orderdate < date '1994-01-01'
    and l_returnflag = 'R'
    and c_nationkey = n_nationkey
group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
order by revenue desc
limit 20
