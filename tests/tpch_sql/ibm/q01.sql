-- IBM compliance suite q01 as its plan computes it: the plan (q01.json and q01.bin alike) filters
-- `lte(l_shipdate, date 10470)`, i.e. l_shipdate <= 1998-09-01, one day earlier than TPC-H's
-- 1998-12-01 - 90 days = 1998-09-02. IBM's expected/q01.csv holds the 1998-09-02 result, so it is
-- not the oracle for this plan (it differs in the N|O group: 29181 vs 29162 rows at SF 0.01).
-- As in every ibm/qNN.sql, the rest is the plan's own reading of the TPC-H text (Isthmus/Calcite): its decimal
-- literals (1.00), each product and difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not decimal(31,4)), and its sort's null order (ASC NULLS LAST, DESC NULLS FIRST).
select
    l_returnflag,
    l_linestatus,
    sum(l_quantity) as sum_qty,
    sum(l_extendedprice) as sum_base_price,
    sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))) as sum_disc_price,
    sum(cast(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4)) * (1.00 + l_tax) as decimal(19,6))) as sum_charge,
    avg(l_quantity) as avg_qty,
    avg(l_extendedprice) as avg_price,
    avg(l_discount) as avg_disc,
    count(*) as count_order
from lineitem
where l_shipdate <= date '1998-09-01'
group by l_returnflag, l_linestatus
order by l_returnflag asc nulls last, l_linestatus asc nulls last
