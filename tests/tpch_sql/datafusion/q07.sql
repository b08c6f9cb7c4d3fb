-- DataFusion's plan of TPC-H Q7 (tests/tpch_sql/standard/q07.sql) as the plan computes it: DataFusion derives from
-- the join's `(n1 = FRANCE and n2 = GERMANY) or (n1 = GERMANY and n2 = FRANCE)` a filter on each nation read,
-- `n_name = 'FRANCE' or n_name = 'GERMANY'` (n2: GERMANY first), and writes it into the plan; an OR of equalities
-- on one column is an IN list to us (the plan cannot tell them apart: tests/tpch_sql/ibm/q12.sql). The join's
-- condition stays as written. The same query: the derived filters only drop rows the join condition drops.
select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
    select
        n1.n_name as supp_nation,
        n2.n_name as cust_nation,
        extract(year from l_shipdate) as l_year,
        l_extendedprice * (1 - l_discount) as volume
    from supplier, lineitem, orders, customer, nation n1, nation n2
    where s_suppkey = l_suppkey
        and o_orderkey = l_orderkey
        and c_custkey = o_custkey
        and s_nationkey = n1.n_nationkey
        and c_nationkey = n2.n_nationkey
        and ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY')
            or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE'))
        and n1.n_name in ('FRANCE', 'GERMANY')
        and n2.n_name in ('GERMANY', 'FRANCE')
        and l_shipdate between date '1995-01-01' and date '1996-12-31'
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year
