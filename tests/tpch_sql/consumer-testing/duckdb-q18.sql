-- consumer-testing q18-duckdb_plan.json as its plan computes it. DuckDB 1.1.3's optimizer wrote its own join order
-- and sides: lineitem JOIN ((orders LEFT SEMI JOIN the large orders) JOIN customer), the semi join on an equality
-- alone as Spark SQL's IN subquery (as the translation runs it; Spark SQL infers from it the same IN subquery on
-- lineitem through the join), and c_custkey <= 14999, a bound DuckDB derived from o_custkey's statistics at the
-- scale it planned at (sf0.01's largest o_custkey); it groups by o_orderkey and c_custkey (the join keys). 300 as
-- the decimal(38,2) it declares. The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
select
    c_name,
    c_custkey,
    o_orderkey,
    o_orderdate,
    o_totalprice,
    sum(l_quantity) as `sum(l_quantity)`
from lineitem
join (
    (
        select o_orderkey, o_custkey, o_orderdate, o_totalprice
        from orders
        where o_orderkey in (
            select l_orderkey
            from lineitem
            group by l_orderkey
            having sum(l_quantity) > cast(300 as decimal(38,2))
        )
    ) as o
    join customer on o_custkey = c_custkey
) on l_orderkey = o_orderkey
where c_custkey <= 14999 and c_custkey is not null
group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
order by o_totalprice desc, o_orderdate
limit 100
