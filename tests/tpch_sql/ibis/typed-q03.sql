-- ibis-substrait tpc_h03 as its plan computes it: tests/tpch_sql/ibis/q03.sql with the decimal type ibis declares for
-- every decimal result, decimal(15,2) (the column's type, not the YAML's p1+p2+1): 1.00 - l_discount and the
-- product are cast to it, so each product is rounded to cents. The sorts' null order: bench/plan_sets.py.
select
    l_orderkey,
    o_orderdate,
    o_shippriority,
    sum(cast(l_extendedprice * cast(1.00 - l_discount as decimal(15,2)) as decimal(15,2))) as revenue
from customer, orders, lineitem
where c_mktsegment = 'BUILDING'
    and c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and o_orderdate < date '1995-03-15'
    and l_shipdate > date '1995-03-15'
group by l_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10
