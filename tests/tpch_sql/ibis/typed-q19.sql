-- ibis-substrait tpc_h19 as its plan computes it: tests/tpch_sql/standard/q19.sql with the decimal type ibis declares for
-- every decimal result, decimal(15,2) (the column's type, not the YAML's p1+p2+1): 1.00 - l_discount and the
-- product are cast to it, so each product is rounded to cents. The sorts' null order: bench/plan_sets.py.
select sum(cast(l_extendedprice * cast(1.00 - l_discount as decimal(15,2)) as decimal(15,2))) as revenue
from lineitem, part
where (p_partkey = l_partkey
        and p_brand = 'Brand#12'
        and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
        and l_quantity >= 1 and l_quantity <= 1 + 10
        and p_size between 1 and 5
        and l_shipmode in ('AIR', 'AIR REG')
        and l_shipinstruct = 'DELIVER IN PERSON')
    or (p_partkey = l_partkey
        and p_brand = 'Brand#23'
        and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
        and l_quantity >= 10 and l_quantity <= 10 + 10
        and p_size between 1 and 10
        and l_shipmode in ('AIR', 'AIR REG')
        and l_shipinstruct = 'DELIVER IN PERSON')
    or (p_partkey = l_partkey
        and p_brand = 'Brand#34'
        and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
        and l_quantity >= 20 and l_quantity <= 20 + 10
        and p_size between 1 and 15
        and l_shipmode in ('AIR', 'AIR REG')
        and l_shipinstruct = 'DELIVER IN PERSON')
