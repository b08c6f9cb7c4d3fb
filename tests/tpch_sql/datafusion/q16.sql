-- DataFusion's plan of TPC-H Q16 (tests/tpch_sql/standard/q16.sql) as the plan computes it:
-- * `ps_suppkey not in (select s_suppkey ...)` is written as a LEFT ANTI join on `ps_suppkey = s_suppkey`, which
--   is NOT EXISTS (a NULL key on either side excludes nothing); NOT IN would return no row once the subquery held a
--   NULL. (s_suppkey is never NULL, so the results agree: the plans differ in the null checks the anti join allows.)
-- * `count(distinct ps_suppkey)` is written as two aggregates: the distinct (p_brand, p_type, p_size, ps_suppkey)
--   groups, then count(ps_suppkey) per (p_brand, p_type, p_size) (both ignore a NULL ps_suppkey).
-- * part's conditions in the order DataFusion writes them (p_size's IN list before p_type's NOT LIKE).
select p_brand, p_type, p_size, count(ps_suppkey) as supplier_cnt
from (
    select p_brand, p_type, p_size, ps_suppkey
    from partsupp, part
    where p_partkey = ps_partkey
        and p_brand <> 'Brand#45'
        and p_size in (49, 14, 23, 45, 19, 3, 36, 9)
        and p_type not like 'MEDIUM POLISHED%'
        and not exists (
            select 1 from supplier where s_suppkey = ps_suppkey and s_comment like '%Customer%Complaints%')
    group by p_brand, p_type, p_size, ps_suppkey
) as suppliers
group by p_brand, p_type, p_size
order by supplier_cnt desc, p_brand, p_type, p_size
