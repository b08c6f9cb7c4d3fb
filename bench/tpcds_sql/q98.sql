-- The plan's query: DataFusion reads the literal 100.0000 as fp64, so the ratio is
-- CAST(itemrevenue AS double) * 100.0 / CAST(window sum AS double) (the cast written into the plan), and its window
-- sums the aggregate's column (Spark SQL's plan of the text aggregates the window's argument again as a column of
-- its own); the aggregate as a derived table, the window and the fp64 ratio over it.
SELECT i_item_id ,
       i_item_desc,
       i_category,
       i_class,
       i_current_price ,
       itemrevenue,
       CAST(itemrevenue AS DOUBLE) * 100.0D / CAST(sum(itemrevenue) OVER (PARTITION BY i_class) AS DOUBLE) AS revenueratio
FROM
  (SELECT i_item_id ,
       i_item_desc,
       i_category,
       i_class,
       i_current_price ,
       sum(ss_ext_sales_price) AS itemrevenue
FROM store_sales ,
     item,
     date_dim
WHERE ss_item_sk = i_item_sk
  AND i_category IN ('Sports',
                     'Books',
                     'Home')
  AND ss_sold_date_sk = d_date_sk
  AND d_date BETWEEN cast('1999-02-22' AS date) AND cast('1999-03-24' AS date)
GROUP BY i_item_id ,
         i_item_desc,
         i_category ,
         i_class ,
         i_current_price) t
ORDER BY i_category  NULLS FIRST,
         i_class  NULLS FIRST,
         i_item_id  NULLS FIRST,
         i_item_desc  NULLS FIRST,
         revenueratio NULLS FIRST;
