-- ibis-substrait tpc_h09: TPC-H Q9 with the plan's pattern '%GREEN%' (upper case; TPC-H says
-- '%green%'). Substrait `like` without a case_sensitivity option is read as SQL LIKE, case-sensitive:
-- p_name is lower case, so no row qualifies and the result is empty. The year is cast to a string.
select nation, o_year, sum(amount) as sum_profit
from (
    select
        n_name as nation,
        cast(extract(year from o_orderdate) as string) as o_year,
        l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
    from part, supplier, lineitem, partsupp, orders, nation
    where s_suppkey = l_suppkey
        and ps_suppkey = l_suppkey
        and ps_partkey = l_partkey
        and p_partkey = l_partkey
        and o_orderkey = l_orderkey
        and s_nationkey = n_nationkey
        and p_name like '%GREEN%'
) as profit
group by nation, o_year
order by nation, o_year desc
