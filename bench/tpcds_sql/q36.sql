-- The plan's query: DataFusion reads the decimal literal as fp64: it drops `* 1.0000` and divides the sums cast to
-- fp64 (the casts written into the plan); rank() is the i64 Substrait's rank returns (Spark's rank is an int); and
-- the UNION's DISTINCT is an aggregate over the UNION ALL grouping by the columns in the plan's order.
WITH results AS
  (SELECT sum(ss_net_profit) AS ss_net_profit,
          sum(ss_ext_sales_price) AS ss_ext_sales_price,
          cast(sum(ss_net_profit) AS double)/cast(sum(ss_ext_sales_price) AS double) AS gross_margin ,
          i_category ,
          i_class ,
          0 AS g_category,
          0 AS g_class
   FROM store_sales ,
        date_dim d1 ,
        item ,
        store
   WHERE d1.d_year = 2001
     AND d1.d_date_sk = ss_sold_date_sk
     AND i_item_sk = ss_item_sk
     AND s_store_sk = ss_store_sk
     AND s_state ='TN'
   GROUP BY i_category,
            i_class) ,
     results_rollup AS
  (SELECT gross_margin, i_category, i_class, t_category, t_class, lochierarchy FROM (SELECT gross_margin,
          i_category,
          i_class,
          0 AS t_category,
          0 AS t_class,
          0 AS lochierarchy
   FROM results
   UNION ALL SELECT cast(sum(ss_net_profit) AS double)/cast(sum(ss_ext_sales_price) AS double) AS gross_margin,
                i_category,
                NULL AS i_class,
                0 AS t_category,
                1 AS t_class,
                1 AS lochierarchy
   FROM results
   GROUP BY i_category
   UNION ALL SELECT cast(sum(ss_net_profit) AS double)/cast(sum(ss_ext_sales_price) AS double) AS gross_margin,
                NULL AS i_category,
                NULL AS i_class,
                1 AS t_category,
                1 AS t_class,
                2 AS lochierarchy
   FROM results) AS branches
   GROUP BY t_category, i_class, i_category, t_class, gross_margin, lochierarchy)
SELECT gross_margin,
       i_category,
       i_class,
       lochierarchy,
       cast(rank() OVER ( PARTITION BY lochierarchy,
                                  CASE
                                      WHEN t_class = 0 THEN i_category
                                  END
                    ORDER BY gross_margin ASC) AS bigint) AS rank_within_parent
FROM results_rollup
ORDER BY lochierarchy DESC NULLS FIRST,
         CASE
             WHEN lochierarchy = 0 THEN i_category
         END NULLS FIRST,
         rank_within_parent NULLS FIRST
LIMIT 100;

