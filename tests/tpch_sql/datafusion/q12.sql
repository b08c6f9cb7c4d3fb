-- DataFusion's plan of TPC-H Q12 (tests/tpch_sql/standard/q12.sql) as the plan computes it: the CASE's
-- `o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH'` as `o_orderpriority in (...)` (an OR of equalities
-- on one column is an IN list to us: the plan cannot tell them apart, tests/tpch_sql/ibm/q12.sql), and
-- `l_commitdate < l_receiptdate` with its operands swapped as DataFusion writes it, `l_receiptdate > l_commitdate`.
-- (DataFusion writes `l_shipmode in ('MAIL', 'SHIP')` as an OR of equalities: the same IN list to us.)
select
    l_shipmode,
    sum(case when o_orderpriority in ('1-URGENT', '2-HIGH')
        then 1 else 0 end) as high_line_count,
    sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH'
        then 1 else 0 end) as low_line_count
from orders, lineitem
where o_orderkey = l_orderkey
    and l_shipmode in ('MAIL', 'SHIP')
    and l_receiptdate > l_commitdate
    and l_shipdate < l_commitdate
    and l_receiptdate >= date '1994-01-01'
    and l_receiptdate < date '1994-01-01' + interval 1 year
group by l_shipmode
order by l_shipmode
