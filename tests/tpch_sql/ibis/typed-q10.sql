-- ibis-substrait tpc_h10 as its plan computes it: tests/tpch_sql/ibis/q10.sql with the decimal type ibis declares for
-- every decimal result, decimal(15,2) (the column's type, not the YAML's p1+p2+1): 1.00 - l_discount and the
-- product are cast to it, so each product is rounded to cents. The sorts' null order: bench/plan_sets.py.
select
    c_custkey,
    c_name,
    c_acctbal,
    c_phone,
    n_name,
    c_address,
    c_comment,
    sum(cast(l_extendedprice * cast(1.00 - l_discount as decimal(15,2)) as decimal(15,2))) as revenue
from customer, orders, lineitem, nation
where c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and o_orderdate >= date '1993-01-01'
    and o_orderdate < date '1993-04-01'
    and l_returnflag = 'R'
    and c_nationkey = n_nationkey
group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
order by revenue desc
limit 20
