-- ibis-substrait tpc_h10: TPC-H Q10 with the plan's dates [1993-01-01, 1993-04-01) (TPC-H:
-- [1993-10-01, 1994-01-01)) and ibis' column order (group keys, then revenue).
select
    c_custkey,
    c_name,
    c_acctbal,
    c_phone,
    n_name,
    c_address,
    c_comment,
    sum(l_extendedprice * (1 - l_discount)) as revenue
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
