-- The plan's query: DataFusion lowers GROUPING(c) to bit arithmetic over its grouping id (the id cast to i32, the
-- bit masked and cast to i8, shifted, cast to i32: apache/datafusion#25208), computed in a Project over the
-- aggregate that the window and the sort read, the level (their sum) computed over the sort and limit; and rank()
-- is the i64 Substrait's rank returns (Spark's is an int).
SELECT total_sum,
       i_category,
       i_class,
       g_category + g_class AS lochierarchy,
       rank_within_parent
FROM
  (SELECT *
FROM
  (SELECT i_category,
          i_class,
          total_sum,
          g_category,
          g_class,
          cast(rank() OVER (PARTITION BY g_category + g_class,
                                         CASE
                                             WHEN g_class = 0 THEN i_category
                                         END
                            ORDER BY total_sum DESC) AS bigint) AS rank_within_parent
FROM
  (SELECT i_category,
          i_class,
          total_sum,
          cast(cast(shiftright(cast(cast((gid & 2) AS tinyint) AS int), 1) AS tinyint) AS int) AS g_category,
          cast(cast((gid & 1) AS tinyint) AS int) AS g_class
   FROM
     (SELECT i_category,
             i_class,
             sum(ws_net_paid) AS total_sum,
             cast(grouping_id() AS int) AS gid
      FROM web_sales ,
           date_dim d1 ,
           item
      WHERE d1.d_month_seq BETWEEN 1200 AND 1200+11
        AND d1.d_date_sk = ws_sold_date_sk
        AND i_item_sk = ws_item_sk
      GROUP BY rollup(i_category,i_class)) AS grouped) AS lowered) AS ranked
ORDER BY g_category + g_class DESC NULLS FIRST,
         CASE
             WHEN g_category + g_class = 0 THEN i_category
         END NULLS FIRST,
         rank_within_parent NULLS FIRST
LIMIT 100) AS top;
