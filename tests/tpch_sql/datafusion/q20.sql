-- DataFusion's plan of TPC-H Q20 (tests/tpch_sql/standard/q20.sql) as the plan computes it: DataFusion computes the
-- correlated threshold in fp64, 0.5 * cast(sum(l_quantity) as double), and compares ps_availqty cast to double
-- with it (the standard text's threshold is a decimal). The same rows at every scale where no sum is within a
-- double's rounding of twice an availability.
select s_name, s_address
from supplier, nation
where s_suppkey in (
        select ps_suppkey
        from partsupp
        where ps_partkey in (select p_partkey from part where p_name like 'forest%')
            and cast(ps_availqty as double) > (
                select 0.5D * cast(sum(l_quantity) as double)
                from lineitem
                where l_partkey = ps_partkey
                    and l_suppkey = ps_suppkey
                    and l_shipdate >= date '1994-01-01'
                    and l_shipdate < date '1995-01-01'))
    and s_nationkey = n_nationkey
    and n_name = 'CANADA'
order by s_name
