-- consumer-testing q01-duckdb_plan.json as the plan computes it: DuckDB 1.1.3 declares avg:decimal's result
-- fp64 (DuckDB's avg of a decimal is a DOUBLE), so the averages are taken in double precision; sql/q01.sql's
-- avg of a decimal is a decimal in Spark SQL (decimal(19,6)), rounded where the plan's double is not.
-- The decimal types it declares: 1.00 as decimal(16,2), 1.00 - l_discount and 1.00 + l_tax decimal(16,2), the
-- discounted price decimal(18,4) (the plan computes it once in a Project the aggregate reads: Spark inlines it,
-- as the translation does), the charge decimal(18,6); the filter with the IS NOT NULL it adds. Otherwise sql/q01.sql (120 days).
SELECT
  l_returnflag,
  l_linestatus,
  sum(l_quantity) AS sum_qty,
  sum(l_extendedprice) AS sum_base_price,
  sum(cast(l_extendedprice * cast(cast(1.00 AS decimal(16,2)) - l_discount AS decimal(16,2)) AS decimal(18,4)))
    AS sum_disc_price,
  sum(cast(
    cast(l_extendedprice * cast(cast(1.00 AS decimal(16,2)) - l_discount AS decimal(16,2)) AS decimal(18,4))
    * cast(cast(1.00 AS decimal(16,2)) + l_tax AS decimal(16,2)) AS decimal(18,6))) AS sum_charge,
  avg(cast(l_quantity AS double)) AS avg_qty,
  avg(cast(l_extendedprice AS double)) AS avg_price,
  avg(cast(l_discount AS double)) AS avg_disc,
  count(*) AS count_order
FROM
  lineitem
WHERE
  l_shipdate <= date '1998-12-01' - interval '120' day AND l_shipdate IS NOT NULL
GROUP BY
  l_returnflag,
  l_linestatus
ORDER BY
  l_returnflag,
  l_linestatus
