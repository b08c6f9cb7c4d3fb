-- IBM compliance suite q18 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q18.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (o_totalprice DESC NULLS FIRST, o_orderdate ASC NULLS LAST).
-- The plan declares sum(l_quantity) as decimal(15,2); its HAVING filters the aggregate's output column.
select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, cast(sum(l_quantity) as decimal(15,2)) as sum_qty
from customer, orders, lineitem
where o_orderkey in (
        select l_orderkey
        from (
            select l_orderkey, cast(sum(l_quantity) as decimal(15,2)) as total_quantity
            from lineitem
            group by l_orderkey) as big_orders
        where total_quantity > 300.00)
    and c_custkey = o_custkey
    and o_orderkey = l_orderkey
group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
order by o_totalprice desc nulls first, o_orderdate asc nulls last
limit 100
