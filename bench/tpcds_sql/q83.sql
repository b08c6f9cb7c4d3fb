-- The plan's query: DataFusion keeps only the ORDER BY keys the earlier keys do not determine (it drops the
-- others: functional dependencies on the GROUP BY keys); the rows come in the same order. And it compares d_date with
-- the text's strings as dates (the literals cast to date; Spark SQL would cast the column to string). It reads the
-- decimal literals as fp64: `* 1.0000` dropped, the operands cast to fp64, the divisions stated so.
WITH sr_items AS
  (SELECT i_item_id item_id,
          sum(sr_return_quantity) sr_item_qty
   FROM store_returns,
        item,
        date_dim
   WHERE sr_item_sk = i_item_sk
     AND d_date IN
       (SELECT d_date
        FROM date_dim
        WHERE d_week_seq IN
            (SELECT d_week_seq
             FROM date_dim
             WHERE d_date IN (cast('2000-06-30' AS date),
                              cast('2000-09-27' AS date),
                              cast('2000-11-17' AS date))))
     AND sr_returned_date_sk = d_date_sk
   GROUP BY i_item_id),
     cr_items AS
  (SELECT i_item_id item_id,
          sum(cr_return_quantity) cr_item_qty
   FROM catalog_returns,
        item,
        date_dim
   WHERE cr_item_sk = i_item_sk
     AND d_date IN
       (SELECT d_date
        FROM date_dim
        WHERE d_week_seq IN
            (SELECT d_week_seq
             FROM date_dim
             WHERE d_date IN (cast('2000-06-30' AS date),
                              cast('2000-09-27' AS date),
                              cast('2000-11-17' AS date))))
     AND cr_returned_date_sk = d_date_sk
   GROUP BY i_item_id),
     wr_items AS
  (SELECT i_item_id item_id,
          sum(wr_return_quantity) wr_item_qty
   FROM web_returns,
        item,
        date_dim
   WHERE wr_item_sk = i_item_sk
     AND d_date IN
       (SELECT d_date
        FROM date_dim
        WHERE d_week_seq IN
            (SELECT d_week_seq
             FROM date_dim
             WHERE d_date IN (cast('2000-06-30' AS date),
                              cast('2000-09-27' AS date),
                              cast('2000-11-17' AS date))))
     AND wr_returned_date_sk = d_date_sk
   GROUP BY i_item_id)
SELECT sr_items.item_id ,
       sr_item_qty ,
       cast(sr_item_qty AS double)/cast(sr_item_qty+cr_item_qty+wr_item_qty AS double)/3.0D * 100.0D sr_dev ,
       cr_item_qty ,
       cast(cr_item_qty AS double)/cast(sr_item_qty+cr_item_qty+wr_item_qty AS double)/3.0D * 100.0D cr_dev ,
       wr_item_qty ,
       cast(wr_item_qty AS double)/cast(sr_item_qty+cr_item_qty+wr_item_qty AS double)/3.0D * 100.0D wr_dev ,
       cast(sr_item_qty+cr_item_qty+wr_item_qty AS double)/3.0D average
FROM sr_items ,
     cr_items ,
     wr_items
WHERE sr_items.item_id=cr_items.item_id
  AND sr_items.item_id=wr_items.item_id
ORDER BY sr_items.item_id NULLS FIRST
LIMIT 100;

