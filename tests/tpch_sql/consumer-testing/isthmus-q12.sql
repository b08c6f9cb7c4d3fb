-- consumer-testing q12-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q12.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(p1+p2,
-- s1+s2) (decimal(31,4), decimal(30,4); Spark's and the Substrait YAML's are one digit wider), as
-- tests/tpch_sql/ibm/q12.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
-- IN for the OR of equalities the plan writes (Calcite expands IN lists; the plan cannot tell them apart).
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
    and l_receiptdate < date '1995-01-01'
group by l_shipmode
order by l_shipmode
