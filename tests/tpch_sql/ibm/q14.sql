-- IBM compliance suite q14 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q14.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (no sort).
select
    100.00 * sum(case when p_type like 'PROMO%'
        then cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4)) else 0.0000 end)
    / sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))) as promo_revenue
from lineitem, part
where l_partkey = p_partkey
    and l_shipdate >= date '1995-09-01'
    and l_shipdate < date '1995-09-01' + interval 1 month
