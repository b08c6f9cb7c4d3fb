-- The plan's query: DataFusion writes the joins with date_dim and catalog_sales, whose columns the GROUP BY does not
-- use (only whether a row matches), as LEFT SEMI joins after the join of item with inventory; stated as IN
-- subqueries, in its order.
SELECT i_item_id,
       i_item_desc,
       i_current_price
FROM item,
     inventory
WHERE i_current_price BETWEEN 68 AND 68 + 30
  AND inv_item_sk = i_item_sk
  AND i_manufact_id IN (677,
                        940,
                        694,
                        808)
  AND inv_quantity_on_hand BETWEEN 100 AND 500
  AND inv_date_sk IN
    (SELECT d_date_sk
     FROM date_dim
     WHERE d_date BETWEEN cast('2000-02-01' AS date) AND cast('2000-04-01' AS date))
  AND i_item_sk IN
    (SELECT cs_item_sk
     FROM catalog_sales)
GROUP BY i_item_id,
         i_item_desc,
         i_current_price
ORDER BY i_item_id
LIMIT 100;
