-- DataFusion's plan of TPC-H Q16 (tests/tpch_sql/standard/q16.sql) as the plan computes it: DataFusion writes
-- `ps_suppkey not in (select s_suppkey ...)` as a LEFT ANTI join on `ps_suppkey = s_suppkey`, which is NOT EXISTS
-- (a NULL key on either side excludes nothing); NOT IN would return no row once the subquery held a NULL.
-- (s_suppkey is never NULL, so the results agree: the plans differ in the null checks the anti join allows.)
select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
from partsupp, part
where p_partkey = ps_partkey
    and p_brand <> 'Brand#45'
    and p_type not like 'MEDIUM POLISHED%'
    and p_size in (49, 14, 23, 45, 19, 3, 36, 9)
    and not exists (
        select 1 from supplier where s_suppkey = ps_suppkey and s_comment like '%Customer%Complaints%')
group by p_brand, p_type, p_size
order by supplier_cnt desc, p_brand, p_type, p_size
