-- consumer-testing q13-duckdb_plan.json as its plan computes it: DuckDB 1.1.3 wrote the LEFT OUTER JOIN of customer
-- and orders as orders RIGHT OUTER JOIN customer (its sides), with the orders filter below the join, and
-- `o_comment NOT LIKE '%special%requests%'` as not_equal:string_string; the plan wins.
-- The sorts' null order: bench/plan_sets.py (NullOrder.LAST).
SELECT
    c_count,
    count(*) AS custdist
FROM (
    SELECT
        c_custkey,
        count(o_orderkey)
    FROM (
        SELECT o_custkey, o_orderkey FROM orders WHERE o_comment <> '%special%requests%'
    ) AS o
    RIGHT OUTER JOIN customer ON o_custkey = c_custkey
GROUP BY
    c_custkey) AS c_orders (c_custkey,
        c_count)
GROUP BY
    c_count
ORDER BY
    custdist DESC,
    c_count DESC;
