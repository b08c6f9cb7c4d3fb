-- consumer-testing q14-duckdb_plan.json as its plan computes it: the types DuckDB 1.1.3 declares (1.00 as
-- decimal(16,2), 1.00 - l_discount decimal(16,2), the product decimal(18,4), 100.00 as decimal(38,2)), the filter's
-- conjuncts as written, and the share as divide:fp64_fp64 of 100.00 * the promo sum and the total, both cast to
-- double, after the aggregate (no division-by-zero option stated: Spark's own `/`).
select
    cast(cast(100.00 as decimal(38,2)) * promo as double) / cast(total as double) as promo_revenue
from (
    select
        sum(case
            when p_type like 'PROMO%' then cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount
                as decimal(16,2)) as decimal(18,4))
            else cast(0 as decimal(18,4))
        end) as promo,
        sum(cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2)) as decimal(18,4)))
            as total
    from lineitem
    join part on l_partkey = p_partkey
    where l_shipdate >= date '1995-09-01' and l_shipdate < date '1995-10-01' and l_shipdate is not null
) as sums
