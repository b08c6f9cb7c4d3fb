-- The plan's query: DataFusion joins store, sc and item first and sb last (on a unique key of sb, so the join
-- is Spark SQL's scalar-subquery join), whose condition compares cast(sc.revenue AS decimal(30,15)) with 0.1 * ave
-- in fp64 (the literal and ave as doubles) cast to decimal(30,15); stated, in its join order.
SELECT s_store_name,
       i_item_desc,
       sc.revenue,
       i_current_price,
       i_wholesale_cost,
       i_brand
FROM store,
  (SELECT ss_store_sk,
          ss_item_sk,
          sum(ss_sales_price) AS revenue
   FROM store_sales,
        date_dim
   WHERE ss_sold_date_sk = d_date_sk
     AND d_month_seq BETWEEN 1176 AND 1176+11
   GROUP BY ss_store_sk,
            ss_item_sk) sc,
     item,
  (SELECT ss_store_sk,
          avg(revenue) AS ave
   FROM
     (SELECT ss_store_sk,
             ss_item_sk,
             sum(ss_sales_price) AS revenue
      FROM store_sales,
           date_dim
      WHERE ss_sold_date_sk = d_date_sk
        AND d_month_seq BETWEEN 1176 AND 1176+11
      GROUP BY ss_store_sk,
               ss_item_sk) sa
   GROUP BY ss_store_sk) sb
WHERE s_store_sk = sc.ss_store_sk
  AND i_item_sk = sc.ss_item_sk
  AND sb.ss_store_sk = sc.ss_store_sk
  AND cast(sc.revenue AS decimal(30,15)) <= cast(0.1 * cast(sb.ave AS double) AS decimal(30,15))
ORDER BY s_store_name NULLS FIRST,
         i_item_desc NULLS FIRST
LIMIT 100;
