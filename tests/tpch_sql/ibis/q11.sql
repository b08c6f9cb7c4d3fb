-- ibis-substrait tpc_h11: TPC-H Q11, but the plan casts the fraction, the fp64 literal 0.0001, to
-- decimal(38,2) before multiplying: cast(0.0001 as decimal(38,2)) = 0.00, so the threshold is 0 and
-- every GERMANY part with a positive stock value qualifies (374 rows at SF 0.01, TPC-H gives 359).
select ps_partkey, sum(ps_supplycost * ps_availqty) as value
from partsupp, supplier, nation
where ps_suppkey = s_suppkey
    and s_nationkey = n_nationkey
    and n_name = 'GERMANY'
group by ps_partkey
having sum(ps_supplycost * ps_availqty) > (
    select sum(ps_supplycost * ps_availqty) * cast(0.0001 as decimal(38, 2))
    from partsupp, supplier, nation
    where ps_suppkey = s_suppkey
        and s_nationkey = n_nationkey
        and n_name = 'GERMANY')
order by value desc
