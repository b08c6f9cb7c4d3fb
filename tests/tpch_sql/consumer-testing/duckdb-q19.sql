-- consumer-testing q19-duckdb_plan.json as its plan computes it: lineitem JOIN part (DuckDB 1.1.3's sides), the
-- conditions as DuckDB's optimizer wrote them: l_shipinstruct and l_shipmode (IN) filtered on lineitem, and in the
-- OR the lower bounds l_quantity >= 1 and p_size >= 1 dropped (DuckDB's statistics proved them at the scale it
-- planned at). The decimal types it declares: 1.00 as decimal(16,2), 1.00 - l_discount decimal(16,2), the product
-- decimal(18,4).
select
    sum(cast(l_extendedprice * cast(cast(1.00 as decimal(16,2)) - l_discount as decimal(16,2)) as decimal(18,4)))
        as revenue
from lineitem
join part on l_partkey = p_partkey
where l_shipinstruct = 'DELIVER IN PERSON' and l_shipinstruct is not null
    and l_shipmode in ('AIR', 'AIR REG')
    and (
        (l_quantity <= 11.00 and p_size <= 5 and p_brand = 'Brand#12'
            and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG'))
        or (l_quantity >= 10.00 and l_quantity <= 20.00 and p_size <= 10 and p_brand = 'Brand#23'
            and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK'))
        or (l_quantity >= 20.00 and l_quantity <= 30.00 and p_size <= 15 and p_brand = 'Brand#34'
            and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG'))
    )
