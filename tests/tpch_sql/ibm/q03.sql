-- IBM compliance suite q03 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q03.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (revenue DESC NULLS FIRST, o_orderdate ASC NULLS LAST).
select
    l_orderkey,
    sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))) as revenue,
    o_orderdate,
    o_shippriority
from customer, orders, lineitem
where c_mktsegment = 'BUILDING'
    and c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and o_orderdate < date '1995-03-15'
    and l_shipdate > date '1995-03-15'
group by l_orderkey, o_orderdate, o_shippriority
order by revenue desc nulls first, o_orderdate asc nulls last
limit 10
