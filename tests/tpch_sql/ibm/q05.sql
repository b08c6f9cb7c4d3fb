-- IBM compliance suite q05 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q05.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (revenue DESC NULLS FIRST).
select n_name, sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))) as revenue
from customer, orders, lineitem, supplier, nation, region
where c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and l_suppkey = s_suppkey
    and c_nationkey = s_nationkey
    and s_nationkey = n_nationkey
    and n_regionkey = r_regionkey
    and r_name = 'ASIA'
    and o_orderdate >= date '1994-01-01'
    and o_orderdate < date '1994-01-01' + interval 1 year
group by n_name
order by revenue desc nulls first
