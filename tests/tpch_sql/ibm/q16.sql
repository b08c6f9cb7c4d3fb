-- IBM compliance suite q16 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q16.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (supplier_cnt DESC NULLS FIRST, then ASC NULLS LAST).
select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
from partsupp, part
where p_partkey = ps_partkey
    and p_brand <> 'Brand#45'
    and p_type not like 'MEDIUM POLISHED%'
    and p_size in (49, 14, 23, 45, 19, 3, 36, 9)
    and ps_suppkey not in (
        select s_suppkey from supplier where s_comment like '%Customer%Complaints%')
group by p_brand, p_type, p_size
order by supplier_cnt desc nulls first, p_brand asc nulls last, p_type asc nulls last, p_size asc nulls last
