-- IBM compliance suite q20 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q20.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (s_name ASC NULLS LAST).
-- The plan declares sum(l_quantity) as decimal(15,2) and 0.5 * sum as decimal(17,3).
select s_name, s_address
from supplier, nation
where s_suppkey in (
        select ps_suppkey
        from partsupp
        where ps_partkey in (select p_partkey from part where p_name like 'forest%')
            and cast(ps_availqty as decimal(17,3)) > (
                select cast(0.5 * cast(sum(l_quantity) as decimal(15,2)) as decimal(17,3)) as threshold
                from lineitem
                where l_partkey = ps_partkey
                    and l_suppkey = ps_suppkey
                    and l_shipdate >= date '1994-01-01'
                    and l_shipdate < date '1994-01-01' + interval 1 year))
    and s_nationkey = n_nationkey
    and n_name = 'CANADA'
order by s_name asc nulls last
