-- ibis-substrait tpc_h14 as its plan computes it: tests/tpch_sql/standard/q14.sql with the decimal type ibis declares for
-- every decimal result, decimal(15,2) (the column's type, not the YAML's p1+p2+1): 1.00 - l_discount and the
-- product are cast to it, so each product is rounded to cents. The sorts' null order: bench/plan_sets.py.
select
    100.00 * sum(case when p_type like 'PROMO%'
        then cast(l_extendedprice * cast(1.00 - l_discount as decimal(15,2)) as decimal(15,2)) else 0 end)
    / sum(cast(l_extendedprice * cast(1.00 - l_discount as decimal(15,2)) as decimal(15,2))) as promo_revenue
from lineitem, part
where l_partkey = p_partkey
    and l_shipdate >= date '1995-09-01'
    and l_shipdate < date '1995-09-01' + interval 1 month
