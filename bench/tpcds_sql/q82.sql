-- The plan's query: DataFusion writes the joins with date_dim and store_sales, whose columns the GROUP BY does not
-- use (only whether a row matches), as LEFT SEMI joins after the join of item with inventory; stated as IN
-- subqueries, in its order.
SELECT i_item_id ,
       i_item_desc ,
       i_current_price
FROM item,
     inventory
WHERE i_current_price BETWEEN 62 AND 62+30
  AND inv_item_sk = i_item_sk
  AND i_manufact_id IN (129,
                        270,
                        821,
                        423)
  AND inv_quantity_on_hand BETWEEN 100 AND 500
  AND inv_date_sk IN
    (SELECT d_date_sk
     FROM date_dim
     WHERE d_date BETWEEN cast('2000-05-25' AS date) AND cast('2000-07-24' AS date))
  AND i_item_sk IN
    (SELECT ss_item_sk
     FROM store_sales)
GROUP BY i_item_id,
         i_item_desc,
         i_current_price
ORDER BY i_item_id
LIMIT 100;
