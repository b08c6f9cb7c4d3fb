-- ibis-substrait tpc_h12 as its plan computes it: each priority count is a CASE with one WHEN per value (ibis's
-- isin inside a case expression), not an OR of the two.
select
    l_shipmode,
    sum(case when o_orderpriority = '1-URGENT' then 1 when o_orderpriority = '2-HIGH' then 1 else 0 end)
        as high_line_count,
    sum(case when o_orderpriority = '1-URGENT' then 0 when o_orderpriority = '2-HIGH' then 0 else 1 end)
        as low_line_count
from orders, lineitem
where o_orderkey = l_orderkey
    and l_shipmode in ('MAIL', 'SHIP')
    and l_commitdate < l_receiptdate
    and l_shipdate < l_commitdate
    and l_receiptdate >= date '1994-01-01'
    and l_receiptdate < date '1995-01-01'
group by l_shipmode
order by l_shipmode
