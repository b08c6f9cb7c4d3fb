-- ibis-substrait tpc_h05 as its plan computes it: tests/tpch_sql/standard/q05.sql with the decimal type ibis declares for
-- every decimal result, decimal(15,2) (the column's type, not the YAML's p1+p2+1): 1.00 - l_discount and the
-- product are cast to it, so each product is rounded to cents. The sorts' null order: bench/plan_sets.py.
select n_name, sum(cast(l_extendedprice * cast(1.00 - l_discount as decimal(15,2)) as decimal(15,2))) as revenue
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
order by revenue desc
