-- IBM compliance suite q15 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q15.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (s_suppkey ASC NULLS LAST).
with revenue0 as (
    select l_suppkey as supplier_no, sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))) as total_revenue
    from lineitem
    where l_shipdate >= date '1996-01-01'
        and l_shipdate < date '1996-01-01' + interval 3 month
    group by l_suppkey
)
select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, revenue0
where s_suppkey = supplier_no
    and total_revenue = (select max(total_revenue) as max_revenue from revenue0)
order by s_suppkey asc nulls last
