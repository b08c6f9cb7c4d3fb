-- IBM compliance suite q06 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q06.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (no sort).
select sum(cast(l_extendedprice * l_discount as decimal(19,4))) as revenue
from lineitem
where l_shipdate >= date '1994-01-01'
    and l_shipdate < date '1994-01-01' + interval 1 year
    and l_discount between 0.06 - 0.01 and 0.06 + 0.01
    and l_quantity < 24
