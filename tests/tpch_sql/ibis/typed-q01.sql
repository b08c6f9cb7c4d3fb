-- ibis-substrait tpc_h01 as its plan computes it: the decimal type ibis declares for every decimal result,
-- decimal(15,2): 1.00 - l_discount, l_tax + 1.00 and each product are cast to it (rounded to cents), the operands
-- in the plan's order. The sorts' null order: bench/plan_sets.py.
select
    l_returnflag,
    l_linestatus,
    sum(l_quantity) as sum_qty,
    sum(l_extendedprice) as sum_base_price,
    sum(cast(l_extendedprice * cast(1.00 - l_discount as decimal(15,2)) as decimal(15,2))) as sum_disc_price,
    sum(cast(cast(l_extendedprice * cast(1.00 - l_discount as decimal(15,2)) as decimal(15,2))
        * cast(l_tax + 1.00 as decimal(15,2)) as decimal(15,2))) as sum_charge,
    avg(l_quantity) as avg_qty,
    avg(l_extendedprice) as avg_price,
    avg(l_discount) as avg_disc,
    count(*) as count_order
from lineitem
where l_shipdate <= date '1998-09-02'
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus
