-- ibis-substrait tpc_h06 as its plan computes it: the discount bounds are fp64 literals (0.05, 0.07: ibis
-- evaluates 0.06 -/+ 0.01 in Python), so l_discount is compared as a double; the product is cast to the
-- decimal(15,2) ibis declares for every decimal result.
select sum(cast(l_extendedprice * l_discount as decimal(15,2))) as revenue
from lineitem
where l_shipdate >= date '1994-01-01'
    and l_shipdate < date '1995-01-01'
    and l_discount >= 0.05D
    and l_discount <= 0.07D
    and l_quantity < 24
