-- consumer-testing q01-validate-isthmus_plan.json as the plan computes it. Its filter is
-- lte(l_shipdate, subtract(date 1998-12-01, intervalDayToSecond{seconds: 10368})): the "validate"
-- variant encodes the interval as 10368 seconds (2:52:48), not 120 days (10368000 s) as the
-- non-validate plan and sql/q01.sql do. The date minus 10368 s, as a date, is 1998-11-30.
-- (At SF 0.01 the latest l_shipdate is 1998-11-29, so every lineitem row qualifies either way.)
select
    l_returnflag,
    l_linestatus,
    sum(l_quantity) as sum_qty,
    sum(l_extendedprice) as sum_base_price,
    sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
    avg(l_quantity) as avg_qty,
    avg(l_extendedprice) as avg_price,
    avg(l_discount) as avg_disc,
    count(*) as count_order
from lineitem
where l_shipdate <= cast(date '1998-12-01' - interval 10368 second as date)
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus
