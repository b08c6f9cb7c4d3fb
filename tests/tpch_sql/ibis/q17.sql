-- ibis-substrait tpc_h17: TPC-H Q17 but the plan divides by 0.7 (fp64 literal cast to decimal),
-- not 7.0. (At SF 0.01 no lineitem qualifies, the sum is NULL either way.)
select sum(l_extendedprice) / 0.7 as avg_yearly
from lineitem, part
where p_partkey = l_partkey
    and p_brand = 'Brand#23'
    and p_container = 'MED BOX'
    and l_quantity < (
        select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey)
