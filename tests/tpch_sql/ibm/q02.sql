-- IBM compliance suite q02 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q02.sql):
-- its sorts' null order (s_acctbal DESC NULLS FIRST, the others ASC NULLS LAST).
select
    s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
from part, supplier, partsupp, nation, region
where p_partkey = ps_partkey
    and s_suppkey = ps_suppkey
    and p_size = 15
    and p_type like '%BRASS'
    and s_nationkey = n_nationkey
    and n_regionkey = r_regionkey
    and r_name = 'EUROPE'
    and ps_supplycost = (
        select min(ps_supplycost)
        from partsupp, supplier, nation, region
        where p_partkey = ps_partkey
            and s_suppkey = ps_suppkey
            and s_nationkey = n_nationkey
            and n_regionkey = r_regionkey
            and r_name = 'EUROPE')
order by s_acctbal desc nulls first, n_name nulls last, s_name nulls last, p_partkey nulls last
limit 100
