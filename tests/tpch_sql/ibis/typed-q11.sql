-- ibis-substrait tpc_h11 as its plan computes it: tests/tpch_sql/ibis/q11.sql with the decimal(15,2) ibis declares
-- for every decimal result (each product cast to it), and the threshold as the plan writes it: the subquery's sum
-- times the fraction cast to decimal(38,2) (0.00), outside the subquery, the product cast to decimal(38,2); the
-- sum of each part as the decimal(38,2) the plan declares for it.
select ps_partkey, cast(sum(cast(ps_supplycost * cast(ps_availqty as decimal(15,2)) as decimal(15,2))) as decimal(38,2)) as value
from partsupp, supplier, nation
where ps_suppkey = s_suppkey
    and s_nationkey = n_nationkey
    and n_name = 'GERMANY'
group by ps_partkey
having value > cast((
    select sum(cast(ps_supplycost * cast(ps_availqty as decimal(15,2)) as decimal(15,2)))
    from partsupp, supplier, nation
    where ps_suppkey = s_suppkey
        and s_nationkey = n_nationkey
        and n_name = 'GERMANY') * cast(0.0001 as decimal(38, 2)) as decimal(38, 2))
order by value desc
