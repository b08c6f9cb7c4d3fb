-- The plan's query: DataFusion's common-subexpression elimination computes the date difference (ship date
-- minus sold date) once, in a projection below the aggregate, which the CASE tests then read; stated here as a
-- derived table computing it once. The same rows.
SELECT w_substr,
       sm_type,
       web_name,
       sum(CASE
               WHEN (ship_diff <= 30) THEN 1
               ELSE 0
           END) AS "30 days",
       sum(CASE
               WHEN (ship_diff > 30)
                    AND (ship_diff <= 60) THEN 1
               ELSE 0
           END) AS "31-60 days",
       sum(CASE
               WHEN (ship_diff > 60)
                    AND (ship_diff <= 90) THEN 1
               ELSE 0
           END) AS "61-90 days",
       sum(CASE
               WHEN (ship_diff > 90)
                    AND (ship_diff <= 120) THEN 1
               ELSE 0
           END) AS "91-120 days",
       sum(CASE
               WHEN (ship_diff > 120) THEN 1
               ELSE 0
           END) AS ">120 days"
FROM
  (SELECT ws_ship_date_sk - ws_sold_date_sk AS ship_diff, w_substr, sm_type, web_name
   FROM web_sales,
  (SELECT SUBSTRING(w_warehouse_name,1,20) w_substr,
          *
   FROM warehouse) sq1,
     ship_mode,
     web_site,
     date_dim
WHERE d_month_seq BETWEEN 1200 AND 1200 + 11
  AND ws_ship_date_sk = d_date_sk
  AND ws_warehouse_sk = w_warehouse_sk
  AND ws_ship_mode_sk = sm_ship_mode_sk
  AND ws_web_site_sk = web_site_sk) diffs
GROUP BY w_substr,
         sm_type,
         web_name
ORDER BY 1 NULLS FIRST,
         2 NULLS FIRST,
         3 NULLS FIRST
LIMIT 100;

