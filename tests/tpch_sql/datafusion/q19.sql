-- DataFusion's plan of TPC-H Q19 (tests/tpch_sql/standard/q19.sql) as the plan computes it: DataFusion factors the
-- conjuncts the three OR branches share out of the OR and writes them where it evaluates them: `p_partkey =
-- l_partkey` as the join key, `l_shipmode in ('AIR', 'AIR REG')` (an OR of equalities: an IN list to us) and
-- `l_shipinstruct = 'DELIVER IN PERSON'` on lineitem; it derives a filter on each input from the branches
-- (lineitem: the OR of the quantity ranges; part: `p_size >= 1` and the OR of each branch's part conditions,
-- `between 1 and N` as `p_size <= N`), and keeps the OR of the branches, without the shared conjuncts, as the join's
-- condition, each branch's conjuncts nested as the plan nests them (Spark's parser would balance an unparenthesised
-- chain of ANDs). The quantity bounds are folded (1 + 10 = 11). The same query: each derived filter only drops rows the
-- OR drops.
select sum(l_extendedprice * (1 - l_discount)) as revenue
from lineitem, part
where p_partkey = l_partkey
    and l_shipmode in ('AIR', 'AIR REG')
    and l_shipinstruct = 'DELIVER IN PERSON'
    and ((l_quantity >= 1 and l_quantity <= 11)
        or (l_quantity >= 10 and l_quantity <= 20)
        or (l_quantity >= 20 and l_quantity <= 30))
    and p_size >= 1
    and ((p_brand = 'Brand#12' and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') and p_size <= 5)
        or (p_brand = 'Brand#23' and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') and p_size <= 10)
        or (p_brand = 'Brand#34' and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') and p_size <= 15))
    and (((((p_brand = 'Brand#12' and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG'))
            and l_quantity >= 1) and l_quantity <= 11) and p_size <= 5)
        or ((((p_brand = 'Brand#23' and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK'))
            and l_quantity >= 10) and l_quantity <= 20) and p_size <= 10)
        or ((((p_brand = 'Brand#34' and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG'))
            and l_quantity >= 20) and l_quantity <= 30) and p_size <= 15))
