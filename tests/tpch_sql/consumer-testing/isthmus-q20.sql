-- consumer-testing q20-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q20.sql with the types the
-- plan declares for the comparison (Calcite): ps_availqty and the correlated threshold, 0.5 * sum(l_quantity),
-- each cast to decimal(22,3) where the plan casts them (the threshold outside its subquery).
SELECT
    s_name,
    s_address
FROM
    '{supplier}', '{nation}'
WHERE
    s_suppkey IN (
        SELECT
            ps_suppkey
        FROM
            '{partsupp}'
        WHERE
            ps_partkey IN (
                SELECT
                    p_partkey
                FROM
                    '{part}'
                WHERE
                    p_name LIKE 'forest%')
                AND cast(ps_availqty AS decimal(22,3)) > cast((
                    SELECT
                        0.5 * sum(l_quantity)
                    FROM
                        '{lineitem}'
                    WHERE
                        l_partkey = ps_partkey
                        AND l_suppkey = ps_suppkey
                        AND l_shipdate >= CAST('1994-01-01' AS date)
                        AND l_shipdate < CAST('1995-01-01' AS date)) AS decimal(22,3)))
            AND s_nationkey = n_nationkey
            AND n_name = 'CANADA'
        ORDER BY
            s_name;
