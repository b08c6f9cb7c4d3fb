-- IBM compliance suite q04 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q04.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (o_orderpriority ASC NULLS LAST).
select o_orderpriority, count(*) as order_count
from orders
where o_orderdate >= date '1993-07-01'
    and o_orderdate < date '1993-07-01' + interval 3 month
    and exists (
        select * from lineitem
        where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority asc nulls last
