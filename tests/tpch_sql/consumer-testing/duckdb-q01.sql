-- consumer-testing q01-duckdb_plan.json as the plan computes it: DuckDB 1.1.3 declares avg:decimal's result
-- fp64 (DuckDB's avg of a decimal is a DOUBLE), so the averages are taken in double precision; sql/q01.sql's
-- avg of a decimal is a decimal in Spark SQL (decimal(19,6)), rounded where the plan's double is not.
-- Otherwise sql/q01.sql (120 days).
SELECT
  l_returnflag,
  l_linestatus,
  sum(l_quantity) AS sum_qty,
  sum(l_extendedprice) AS sum_base_price,
  sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
  sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
  avg(cast(l_quantity AS double)) AS avg_qty,
  avg(cast(l_extendedprice AS double)) AS avg_price,
  avg(cast(l_discount AS double)) AS avg_disc,
  count(*) AS count_order
FROM
  lineitem
WHERE
  l_shipdate <= date '1998-12-01' - interval '120' day
GROUP BY
  l_returnflag,
  l_linestatus
ORDER BY
  l_returnflag,
  l_linestatus
