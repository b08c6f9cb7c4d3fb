-- IBM compliance suite q17 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q17.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (no sort).
-- The plan declares sum and avg of decimal(15,2) as decimal(15,2) (Calcite), and 0.2 * avg as decimal(17,3).
select cast(cast(sum(l_extendedprice) as decimal(15,2)) / 7.0 as decimal(19,6)) as avg_yearly
from lineitem, part
where p_partkey = l_partkey
    and p_brand = 'Brand#23'
    and p_container = 'MED BOX'
    and cast(l_quantity as decimal(17,3)) < (
        select cast(0.2 * cast(avg(l_quantity) as decimal(15,2)) as decimal(17,3)) as threshold
        from lineitem where l_partkey = p_partkey)
