-- consumer-testing q08-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q08.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(31,4),
-- as tests/tpch_sql/ibm/q08.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
-- The year is extract's i64, cast to bigint as the plan declares; the derived table folds into the aggregate.
select
    cast(extract(year from o_orderdate) as bigint) as o_year,
    sum(case when n2.n_name = 'BRAZIL' then cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))
        else 0.0000 end)
        / sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))) as mkt_share
from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
where p_partkey = l_partkey
    and s_suppkey = l_suppkey
    and l_orderkey = o_orderkey
    and o_custkey = c_custkey
    and c_nationkey = n1.n_nationkey
    and n1.n_regionkey = r_regionkey
    and r_name = 'AMERICA'
    and s_nationkey = n2.n_nationkey
    and o_orderdate between date '1995-01-01' and date '1996-12-31'
    and p_type = 'ECONOMY ANODIZED STEEL'
group by cast(extract(year from o_orderdate) as bigint)
order by o_year
