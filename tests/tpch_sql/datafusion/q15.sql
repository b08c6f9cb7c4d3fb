-- DataFusion's plan of TPC-H Q15 (tests/tpch_sql/standard/q15.sql) as the plan computes it: an alias for the
-- subquery's unnamed `max(total_revenue)` (the plan names it): Spark names an unaliased column by its text, which
-- the plan comparison's id normalisation does not erase. The same query.
with revenue0 as (
    select l_suppkey as supplier_no, sum(l_extendedprice * (1 - l_discount)) as total_revenue
    from lineitem
    where l_shipdate >= date '1996-01-01'
        and l_shipdate < date '1996-01-01' + interval 3 month
    group by l_suppkey
)
select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, revenue0
where s_suppkey = supplier_no
    and total_revenue = (select max(total_revenue) as max_revenue from revenue0)
order by s_suppkey
