-- consumer-testing q06-duckdb_plan.json as its plan computes it: sql/q06.sql with the product cast to the type
-- DuckDB 1.1.3 declares for it, decimal(18,4) (DuckDB's; the Substrait YAML's is decimal(31,4)), and the filter's
-- conjuncts as the plan writes them (DuckDB's optimizer: l_quantity first, BETWEEN as two comparisons, an explicit
-- IS NOT NULL after each column's comparisons).
SELECT
    sum(cast(l_extendedprice * l_discount AS decimal(18,4))) AS revenue
FROM
    '{lineitem}'
WHERE
    l_quantity < 24
    AND l_quantity IS NOT NULL
    AND l_discount >= 0.05
    AND l_discount <= 0.07
    AND l_discount IS NOT NULL
    AND l_shipdate >= CAST('1994-01-01' AS date)
    AND l_shipdate < CAST('1995-01-01' AS date)
    AND l_shipdate IS NOT NULL;
