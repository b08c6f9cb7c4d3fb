-- The plan's query: DataFusion writes count(DISTINCT order number) beside plain sums as two aggregates: the sums
-- per order number, then count(order number) and the sums of those sums (the same result). And it writes the joins
-- whose columns nothing above uses (ws2 in ws_wh, ws_wh in the web_returns subquery) as LEFT SEMI joins: stated as
-- EXISTS and IN.
WITH ws_wh AS
  (SELECT ws1.ws_order_number
   FROM web_sales ws1
   WHERE EXISTS
       (SELECT 1
        FROM web_sales ws2
        WHERE ws1.ws_order_number = ws2.ws_order_number
          AND ws1.ws_warehouse_sk <> ws2.ws_warehouse_sk))
SELECT count(ws_order_number) AS "order count",
       sum(ship_cost) AS "total shipping cost",
       sum(net_profit) AS "total net profit"
FROM
  (SELECT ws_order_number,
          sum(ws_ext_ship_cost) AS ship_cost,
          sum(ws_net_profit) AS net_profit
FROM web_sales ws1 ,
     date_dim ,
     customer_address ,
     web_site
WHERE d_date BETWEEN '1999-02-01' AND cast('1999-04-02' AS date)
  AND ws1.ws_ship_date_sk = d_date_sk
  AND ws1.ws_ship_addr_sk = ca_address_sk
  AND ca_state = 'IL'
  AND ws1.ws_web_site_sk = web_site_sk
  AND web_company_name = 'pri'
  AND ws1.ws_order_number IN
    (SELECT ws_order_number
     FROM ws_wh)
  AND ws1.ws_order_number IN
    (SELECT wr_order_number
     FROM web_returns
     WHERE wr_order_number IN
         (SELECT ws_order_number
          FROM ws_wh))
   GROUP BY ws_order_number) orders
ORDER BY count(ws_order_number)
LIMIT 100;
