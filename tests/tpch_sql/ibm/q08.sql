-- IBM compliance suite q08 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q08.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (o_year ASC NULLS LAST).
-- Calcite folds the derived table `all_nations` into the aggregate: grouped by its expression directly.
select
    cast(extract(year from o_orderdate) as bigint) as o_year,
    sum(case when n2.n_name = 'BRAZIL' then cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))
        else 0.0000 end)
        / sum(cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4))) as mkt_share
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
order by o_year asc nulls last
