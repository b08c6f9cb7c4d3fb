-- IBM compliance suite q10 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q10.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (revenue DESC NULLS FIRST).
select
    c_custkey,
    c_name,
    sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))) as revenue,
    c_acctbal,
    n_name,
    c_address,
    c_phone,
    c_comment
from customer, orders, lineitem, nation
where c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and o_orderdate >= date '1993-10-01'
    and o_orderdate < date '1993-10-01' + interval 3 month
    and l_returnflag = 'R'
    and c_nationkey = n_nationkey
group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
order by revenue desc nulls first
limit 20
