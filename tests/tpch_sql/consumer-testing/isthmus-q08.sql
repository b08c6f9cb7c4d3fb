-- consumer-testing q08-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q08.sql with the plan's
-- decimal literals (1.00) and each decimal product cast to the type the plan declares, Calcite's decimal(31,4),
-- as tests/tpch_sql/ibm/q08.sql states IBM's. The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
-- The year is extract's i64, cast to bigint as the plan declares.
-- As in the TPC-H text, a derived table stands under the aggregate: the plan's projection below its
-- AggregateRel computes a grouping key, and Spark SQL evaluates that projection in a Project of its own.
select o_year, sum(brazil_volume) / sum(volume) as mkt_share
from (
    select
        cast(extract(year from o_orderdate) as bigint) as o_year,
        case when n2.n_name = 'BRAZIL' then cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4))
            else 0.0000 end as brazil_volume,
        cast(l_extendedprice * (1.00 - l_discount) as decimal(31,4)) as volume
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
) as all_nations
group by o_year
order by o_year
