-- consumer-testing q07-duckdb_plan.json as its plan computes it. DuckDB 1.1.3's optimizer wrote its own join order
-- and sides: (orders JOIN (lineitem JOIN (supplier JOIN nation n1))) JOIN (customer JOIN nation n2), each nation
-- filtered on its own to FRANCE or GERMANY (IN: the plan's OR of equalities), each filter on the table it reads
-- (with the IS NOT NULL it adds), and c_custkey <= 14999, a bound DuckDB derived from o_custkey's statistics at the
-- scale it planned at (sf0.01's largest o_custkey). The decimal types it declares: 1.00 as decimal(16,2),
-- 1.00 - l_discount decimal(16,2), the product decimal(18,4); the year a bigint (DuckDB's extract). The plan's
-- Project of the volume and year under its Aggregate is a derived table, as in the TPC-H text.
-- The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
    select
        n1.n_name as supp_nation,
        n2.n_name as cust_nation,
        cast(extract(year from l_shipdate) as bigint) as l_year,
        cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2)) as decimal(18,4))
            as volume
    from (
        orders
        join (
            lineitem
            join (
                supplier
                join nation n1 on s_nationkey = n1.n_nationkey
            ) on l_suppkey = s_suppkey
        ) on o_orderkey = l_orderkey
    )
    join (
        customer
        join nation n2 on c_nationkey = n2.n_nationkey
    ) on o_custkey = c_custkey
    where ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY')
            or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE'))
        and l_shipdate >= date '1995-01-01' and l_shipdate <= date '1996-12-31' and l_shipdate is not null
        and n1.n_name in ('FRANCE', 'GERMANY')
        and c_custkey <= 14999 and c_custkey is not null
        and n2.n_name in ('GERMANY', 'FRANCE')
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year
