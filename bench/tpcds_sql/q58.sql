-- The plan's query: DataFusion keeps only the ORDER BY keys the earlier keys do not determine (it drops the
-- others: functional dependencies on the GROUP BY keys); the rows come in the same order.
-- And DataFusion reads 0.9 and 1.1 as fp64 and compares in decimal(30,15): each bound
-- CAST(0.9 * CAST(rev AS double) AS decimal(30,15)), the revenue cast to decimal(30,15); stated so.
WITH ss_items AS
  (SELECT i_item_id item_id,
          sum(ss_ext_sales_price) ss_item_rev
   FROM store_sales,
        item,
        date_dim
   WHERE ss_item_sk = i_item_sk
     AND d_date IN
       (SELECT d_date
        FROM date_dim
        WHERE d_week_seq =
            (SELECT d_week_seq
             FROM date_dim
             WHERE d_date = '2000-01-03'))
     AND ss_sold_date_sk = d_date_sk
   GROUP BY i_item_id),
     cs_items AS
  (SELECT i_item_id item_id,
          sum(cs_ext_sales_price) cs_item_rev
   FROM catalog_sales,
        item,
        date_dim
   WHERE cs_item_sk = i_item_sk
     AND d_date IN
       (SELECT d_date
        FROM date_dim
        WHERE d_week_seq =
            (SELECT d_week_seq
             FROM date_dim
             WHERE d_date = '2000-01-03'))
     AND cs_sold_date_sk = d_date_sk
   GROUP BY i_item_id),
     ws_items AS
  (SELECT i_item_id item_id,
          sum(ws_ext_sales_price) ws_item_rev
   FROM web_sales,
        item,
        date_dim
   WHERE ws_item_sk = i_item_sk
     AND d_date IN
       (SELECT d_date
        FROM date_dim
        WHERE d_week_seq =
            (SELECT d_week_seq
             FROM date_dim
             WHERE d_date = '2000-01-03'))
     AND ws_sold_date_sk = d_date_sk
   GROUP BY i_item_id)
SELECT ss_items.item_id,
       ss_item_rev,
       ss_item_rev/((ss_item_rev+cs_item_rev+ws_item_rev)/3) * 100 ss_dev,
       cs_item_rev,
       cs_item_rev/((ss_item_rev+cs_item_rev+ws_item_rev)/3) * 100 cs_dev,
       ws_item_rev,
       ws_item_rev/((ss_item_rev+cs_item_rev+ws_item_rev)/3) * 100 ws_dev,
       (ss_item_rev+cs_item_rev+ws_item_rev)/3 average
FROM ss_items,
     cs_items,
     ws_items
WHERE ss_items.item_id=cs_items.item_id
  AND ss_items.item_id=ws_items.item_id
  AND CAST(ss_item_rev AS DECIMAL(30,15)) BETWEEN CAST(0.9D * CAST(cs_item_rev AS DOUBLE) AS DECIMAL(30,15))
      AND CAST(1.1D * CAST(cs_item_rev AS DOUBLE) AS DECIMAL(30,15))
  AND CAST(ss_item_rev AS DECIMAL(30,15)) BETWEEN CAST(0.9D * CAST(ws_item_rev AS DOUBLE) AS DECIMAL(30,15))
      AND CAST(1.1D * CAST(ws_item_rev AS DOUBLE) AS DECIMAL(30,15))
  AND CAST(cs_item_rev AS DECIMAL(30,15)) BETWEEN CAST(0.9D * CAST(ss_item_rev AS DOUBLE) AS DECIMAL(30,15))
      AND CAST(1.1D * CAST(ss_item_rev AS DOUBLE) AS DECIMAL(30,15))
  AND CAST(cs_item_rev AS DECIMAL(30,15)) BETWEEN CAST(0.9D * CAST(ws_item_rev AS DOUBLE) AS DECIMAL(30,15))
      AND CAST(1.1D * CAST(ws_item_rev AS DOUBLE) AS DECIMAL(30,15))
  AND CAST(ws_item_rev AS DECIMAL(30,15)) BETWEEN CAST(0.9D * CAST(ss_item_rev AS DOUBLE) AS DECIMAL(30,15))
      AND CAST(1.1D * CAST(ss_item_rev AS DOUBLE) AS DECIMAL(30,15))
  AND CAST(ws_item_rev AS DECIMAL(30,15)) BETWEEN CAST(0.9D * CAST(cs_item_rev AS DOUBLE) AS DECIMAL(30,15))
      AND CAST(1.1D * CAST(cs_item_rev AS DOUBLE) AS DECIMAL(30,15))
ORDER BY ss_items.item_id NULLS FIRST
LIMIT 100;

