-- The plan's query: DataFusion decorrelates the scalar subquery into an aggregate per item joined last, and
-- computes 1.3 * avg(...) in fp64 (the literal as a double), cast to decimal(30,15) to compare with
-- cs_ext_discount_amt (also cast to decimal(30,15)); both stated.
SELECT sum(cs_ext_discount_amt) AS "excess discount amount"
FROM catalog_sales ,
     item ,
     date_dim,
     (SELECT cs_item_sk AS avg_item_sk,
             cast(1.3 * cast(avg(cs_ext_discount_amt) AS double) AS decimal(30,15)) AS avg_discount
      FROM catalog_sales,
           date_dim
      WHERE d_date BETWEEN '2000-01-27' AND cast('2000-04-26' AS date)
        AND d_date_sk = cs_sold_date_sk
      GROUP BY cs_item_sk) avg_discounts
WHERE i_manufact_id = 977
  AND i_item_sk = cs_item_sk
  AND d_date BETWEEN '2000-01-27' AND cast('2000-04-26' AS date)
  AND d_date_sk = cs_sold_date_sk
  AND i_item_sk = avg_item_sk
  AND cast(cs_ext_discount_amt AS decimal(30,15)) > avg_discount
LIMIT 100;
