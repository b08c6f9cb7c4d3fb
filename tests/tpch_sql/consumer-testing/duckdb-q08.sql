-- consumer-testing q08-duckdb_plan.json as its plan computes it. DuckDB 1.1.3's optimizer wrote its own join order
-- and sides: (supplier JOIN ((customer JOIN (orders JOIN (lineitem JOIN part))) JOIN (nation n1 JOIN region)))
-- JOIN nation n2; each filter on the table it reads (with the IS NOT NULL it adds), and c_custkey <= 14999, a bound
-- DuckDB derived from o_custkey's statistics at the scale it planned at (sf0.01's largest o_custkey). The types it
-- declares: 1.00 as decimal(16,2), 1.00 - l_discount decimal(16,2), the product decimal(18,4) (the CASE's 0 too),
-- the year a bigint (DuckDB's extract); the plan's Project under its Aggregate a derived table, as in the TPC-H
-- text. The share is divide:fp64_fp64 of the two sums cast to double, after the aggregate (no division-by-zero
-- option stated: Spark's own `/`). The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select
    o_year,
    cast(brazil as double) / cast(total as double) as mkt_share
from (
    select
        o_year,
        sum(case when nation = 'BRAZIL' then volume else cast(0 as decimal(18,4)) end) as brazil,
        sum(volume) as total
    from (
        select
            cast(extract(year from o_orderdate) as bigint) as o_year,
            cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2)) as decimal(18,4))
                as volume,
            n2.n_name as nation
        from (
            supplier
            join (
                (
                    customer
                    join (
                        orders
                        join (
                            lineitem
                            join part on l_partkey = p_partkey
                        ) on o_orderkey = l_orderkey
                    ) on c_custkey = o_custkey
                )
                join (
                    nation n1
                    join region on n1.n_regionkey = r_regionkey
                ) on c_nationkey = n1.n_nationkey
            ) on s_suppkey = l_suppkey
        )
        join nation n2 on s_nationkey = n2.n_nationkey
        where c_custkey <= 14999 and c_custkey is not null
            and o_orderdate >= date '1995-01-01' and o_orderdate <= date '1996-12-31' and o_orderdate is not null
            and p_type = 'ECONOMY ANODIZED STEEL' and p_type is not null
            and r_name = 'AMERICA' and r_name is not null
    ) as all_nations
    group by o_year
) as by_year
order by o_year
