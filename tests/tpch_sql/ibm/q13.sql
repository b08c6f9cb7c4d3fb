-- IBM compliance suite q13 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q13.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (custdist DESC NULLS FIRST, c_count DESC NULLS FIRST).
select c_count, count(*) as custdist
from (
    select c_custkey, count(o_orderkey) as c_count
    from customer left outer join orders
        on c_custkey = o_custkey and o_comment not like '%special%requests%'
    group by c_custkey
) as c_orders
group by c_count
order by custdist desc nulls first, c_count desc nulls first
