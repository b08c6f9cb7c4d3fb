-- IBM compliance suite q11 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q11.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (value DESC NULLS FIRST).
select ps_partkey, cast(sum(cast(ps_supplycost * cast(ps_availqty as decimal(15,2)) as decimal(19,2))) as decimal(19,2)) as value
from partsupp, supplier, nation
where ps_suppkey = s_suppkey
    and s_nationkey = n_nationkey
    and n_name = 'GERMANY'
group by ps_partkey
having cast(sum(cast(ps_supplycost * cast(ps_availqty as decimal(15,2)) as decimal(19,2))) as decimal(19,2)) > cast((
    select cast(cast(sum(cast(ps_supplycost * cast(ps_availqty as decimal(15,2)) as decimal(19,2))) as decimal(19,2)) * 0.0001 as decimal(19,6)) as threshold
    from partsupp, supplier, nation
    where ps_suppkey = s_suppkey
        and s_nationkey = n_nationkey
        and n_name = 'GERMANY') as decimal(19,2))
order by value desc nulls first
