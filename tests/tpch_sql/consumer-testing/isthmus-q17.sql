-- consumer-testing q17-isthmus_plan.json (Isthmus 2025) as its plan computes it, as tests/tpch_sql/ibm/q17.sql
-- states IBM's: the plan declares avg of decimal(15,2) as decimal(15,2) (Calcite) and 0.2 * avg as decimal(17,3).
select cast(cast(sum(l_extendedprice) as decimal(15,2)) / 7.0 as decimal(19,6)) as avg_yearly
from lineitem, part
where p_partkey = l_partkey
    and p_brand = 'Brand#23'
    and p_container = 'MED BOX'
    and cast(l_quantity as decimal(17,3)) < (
        select cast(0.2 * cast(avg(l_quantity) as decimal(15,2)) as decimal(17,3)) as threshold
        from lineitem where l_partkey = p_partkey)
