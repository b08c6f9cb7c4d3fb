-- The plan's query: DataFusion lowers GROUPING(c) to bit arithmetic over its grouping id (the id cast to i32, the
-- bit masked and cast to i8, shifted, cast to i32: apache/datafusion#25208), computed in a Project over the
-- aggregate that the window and the sort read, the level (their sum) computed over the sort and limit; and rank()
-- is the i64 Substrait's rank returns (Spark's is an int); the subquery's window over its aggregate's sum column.
-- The sort's null order is DuckDB's (ASC NULLS LAST).
SELECT total_sum,
       s_state,
       s_county,
       g_state + g_county AS lochierarchy,
       rank_within_parent
FROM
  (SELECT *
   FROM
     (SELECT s_state,
             s_county,
             total_sum,
             g_state,
             g_county,
             cast(rank() OVER (PARTITION BY g_state + g_county,
                                            CASE
                                                WHEN g_county = 0 THEN s_state
                                            END
                               ORDER BY total_sum DESC) AS bigint) AS rank_within_parent
      FROM
        (SELECT s_state,
                s_county,
                total_sum,
                cast(cast(shiftright(cast(cast((gid & 2) AS tinyint) AS int), 1) AS tinyint) AS int) AS g_state,
                cast(cast((gid & 1) AS tinyint) AS int) AS g_county
         FROM
           (SELECT s_state,
                   s_county,
                   sum(ss_net_profit) AS total_sum,
                   cast(grouping_id() AS int) AS gid
            FROM store_sales,
                 date_dim d1,
                 store
            WHERE d1.d_month_seq BETWEEN 1200 AND 1200+11
              AND d1.d_date_sk = ss_sold_date_sk
              AND s_store_sk = ss_store_sk
              AND s_state IN
                (SELECT s_state
                 FROM
                   (SELECT s_state,
                           rank() OVER (PARTITION BY s_state
                                        ORDER BY state_profit DESC) AS ranking
                    FROM
                      (SELECT s_state,
                              sum(ss_net_profit) AS state_profit
                       FROM store_sales,
                            store,
                            date_dim
                       WHERE d_month_seq BETWEEN 1200 AND 1200+11
                         AND d_date_sk = ss_sold_date_sk
                         AND s_store_sk = ss_store_sk
                       GROUP BY s_state) AS state_sums) tmp1
                 WHERE ranking <= 5 )
            GROUP BY rollup(s_state,s_county)) AS grouped) AS lowered) AS ranked
   ORDER BY g_state + g_county DESC NULLS FIRST,
            CASE
                WHEN g_state + g_county = 0 THEN s_state
            END ASC NULLS LAST,
            rank_within_parent ASC NULLS LAST
   LIMIT 100) AS top;
