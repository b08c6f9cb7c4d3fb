-- IBM compliance suite q12 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q12.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (l_shipmode ASC NULLS LAST).
-- Also `o_orderpriority in (...)` for TPC-H's `o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH'`: Calcite
-- writes an IN list as an OR of equalities, so the plan cannot tell them apart and we build Spark's In for both.
select
    l_shipmode,
    sum(case when o_orderpriority in ('1-URGENT', '2-HIGH')
        then 1 else 0 end) as high_line_count,
    sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH'
        then 1 else 0 end) as low_line_count
from orders, lineitem
where o_orderkey = l_orderkey
    and l_shipmode in ('MAIL', 'SHIP')
    and l_commitdate < l_receiptdate
    and l_shipdate < l_commitdate
    and l_receiptdate >= date '1994-01-01'
    and l_receiptdate < date '1994-01-01' + interval 1 year
group by l_shipmode
order by l_shipmode asc nulls last
