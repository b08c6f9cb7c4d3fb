-- IBM compliance suite q07 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q07.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (ASC NULLS LAST).
-- As in the TPC-H text, a derived table stands under the aggregate: the plan's projection below its
-- AggregateRel computes a grouping key, and Spark SQL evaluates that projection in a Project of its own.
select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
    select
        n1.n_name as supp_nation,
        n2.n_name as cust_nation,
        cast(extract(year from l_shipdate) as bigint) as l_year,
        cast(l_extendedprice * (1.00 - l_discount) as decimal(19,4)) as volume
    from supplier, lineitem, orders, customer, nation n1, nation n2
    where s_suppkey = l_suppkey
        and o_orderkey = l_orderkey
        and c_custkey = o_custkey
        and s_nationkey = n1.n_nationkey
        and c_nationkey = n2.n_nationkey
        and ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY')
            or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE'))
        and l_shipdate between date '1995-01-01' and date '1996-12-31'
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation asc nulls last, cust_nation asc nulls last, l_year asc nulls last
