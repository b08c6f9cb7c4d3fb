-- consumer-testing q11-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q11.sql (JAPAN, 0.0001000000)
-- with the plan's casts and declared types: ps_availqty to decimal(21,2), the product and the sum decimal(34,2),
-- the threshold's product decimal(38,12), both sides of the HAVING comparison cast to decimal(38,6).
select ps_partkey,
    cast(sum(cast(ps_supplycost * cast(ps_availqty as decimal(21,2)) as decimal(34,2))) as decimal(34,2)) as `value`
from partsupp, supplier, nation
where ps_suppkey = s_suppkey
    and s_nationkey = n_nationkey
    and n_name = 'JAPAN'
group by ps_partkey
having cast(cast(sum(cast(ps_supplycost * cast(ps_availqty as decimal(21,2)) as decimal(34,2))) as decimal(34,2))
        as decimal(38,6)) > cast((
    select cast(cast(sum(cast(ps_supplycost * cast(ps_availqty as decimal(21,2)) as decimal(34,2))) as decimal(34,2))
        * 0.0001000000 as decimal(38,12))
    from partsupp, supplier, nation
    where ps_suppkey = s_suppkey
        and s_nationkey = n_nationkey
        and n_name = 'JAPAN') as decimal(38,6))
order by `value` desc
