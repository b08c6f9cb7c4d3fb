-- DataFusion's plan of TPC-H Q4 (tests/tpch_sql/standard/q04.sql) as the plan computes it: DataFusion writes the
-- subquery's `l_commitdate < l_receiptdate` with its operands swapped, `l_receiptdate > l_commitdate` (the same
-- comparison; Spark keeps the order it is given). The same query.
select o_orderpriority, count(*) as order_count
from orders
where o_orderdate >= date '1993-07-01'
    and o_orderdate < date '1993-07-01' + interval 3 month
    and exists (
        select * from lineitem
        where l_orderkey = o_orderkey and l_receiptdate > l_commitdate)
group by o_orderpriority
order by o_orderpriority
