-- The plan's query: DataFusion decorrelates the scalar subquery into an aggregate per store joined last (after
-- store and customer), and computes avg(...) * 1.2 in fp64 (the literal as a double), cast to decimal(30,15) to
-- compare with the total (also cast to decimal(30,15)); both stated.
WITH customer_total_return AS
  (SELECT sr_customer_sk AS ctr_customer_sk,
          sr_store_sk AS ctr_store_sk,
          sum(sr_return_amt) AS ctr_total_return
   FROM store_returns,
        date_dim
   WHERE sr_returned_date_sk = d_date_sk
     AND d_year = 2000
   GROUP BY sr_customer_sk,
            sr_store_sk)
SELECT c_customer_id
FROM customer_total_return ctr1,
     store,
     customer,
     (SELECT ctr_store_sk,
             cast(cast(avg(ctr_total_return) AS double) * 1.2 AS decimal(30,15)) AS avg_return
      FROM customer_total_return
      GROUP BY ctr_store_sk) ctr2
WHERE cast(ctr1.ctr_total_return AS decimal(30,15)) > ctr2.avg_return
  AND ctr1.ctr_store_sk = ctr2.ctr_store_sk
  AND s_store_sk = ctr1.ctr_store_sk
  AND s_state = 'TN'
  AND ctr1.ctr_customer_sk = c_customer_sk
ORDER BY c_customer_id
LIMIT 100;
