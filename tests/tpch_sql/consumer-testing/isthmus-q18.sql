-- consumer-testing q18-isthmus_plan.json (Isthmus 2025): sql/q18.sql with an alias for its unnamed sum(l_quantity)
-- output column (the plan names it): Spark names an unaliased column by its text, which the plan comparison's
-- id normalisation does not erase. The same query.
SELECT
    c_name,
    c_custkey,
    o_orderkey,
    o_orderdate,
    o_totalprice,
    sum(l_quantity) AS sum_quantity
FROM
    '{customer}', '{orders}', '{lineitem}'
WHERE
    o_orderkey IN (
        SELECT
            l_orderkey
        FROM
            '{lineitem}'
        GROUP BY
            l_orderkey
        HAVING
            sum(l_quantity) > 300)
    AND c_custkey = o_custkey
    AND o_orderkey = l_orderkey
GROUP BY
    c_name,
    c_custkey,
    o_orderkey,
    o_orderdate,
    o_totalprice
ORDER BY
    o_totalprice DESC,
    o_orderdate
LIMIT 100;
