-- The plan's query: DataFusion keeps only the ORDER BY keys the earlier keys do not determine (it drops the
-- others: functional dependencies on the GROUP BY keys); the rows come in the same order.
-- rank() as the i64 it returns in Substrait (Spark's rank is an int), cast where the plan computes it (before the
-- average's window), and the lag/lead join keys as the plan
-- compares them: `rn` cast to decimal(21,0) against the other's `rn` cast to decimal(20,0) plus or minus 1
-- (DataFusion's coercion of its u64 rank with the i64 literal); the window averages the aggregate's own sum column
-- (avg(sum_sales), as the plan's window reads it), not a second sum computed beside it. The same rows.
WITH v1 AS
  (SELECT i_category,
          i_brand,
          s_store_name,
          s_company_name,
          d_year,
          d_moy,
          sum_sales,
          avg(sum_sales) OVER (PARTITION BY i_category,
                                                      i_brand,
                                                      s_store_name,
                                                      s_company_name,
                                                      d_year) avg_monthly_sales,
          rn
   FROM
     (SELECT i_category, i_brand, s_store_name, s_company_name, d_year, d_moy, sum_sales,
                                        CAST(rank() OVER (PARTITION BY i_category,
                                                                  i_brand,
                                                                  s_store_name,
                                                                  s_company_name
                                                     ORDER BY d_year,
                                                              d_moy) AS bigint) rn
      FROM (SELECT i_category,
          i_brand,
          s_store_name,
          s_company_name,
          d_year,
          d_moy,
             sum(ss_sales_price) sum_sales
   FROM item,
        store_sales,
        date_dim,
        store
   WHERE ss_item_sk = i_item_sk
     AND ss_sold_date_sk = d_date_sk
     AND ss_store_sk = s_store_sk
     AND (d_year = 1999
          OR (d_year = 1999-1
              AND d_moy =12)
          OR (d_year = 1999+1
              AND d_moy =1))
   GROUP BY i_category,
            i_brand,
            s_store_name,
            s_company_name,
            d_year,
            d_moy) grouped) ranked),
     v2 AS
  (SELECT v1.i_category,
          v1.i_brand,
          v1.s_store_name,
          v1.s_company_name,
          v1.d_year,
          v1.d_moy,
          v1.avg_monthly_sales,
          v1.sum_sales,
          v1_lag.sum_sales psum,
          v1_lead.sum_sales nsum
   FROM v1,
        v1 v1_lag,
        v1 v1_lead
   WHERE v1.i_category = v1_lag.i_category
     AND v1.i_category = v1_lead.i_category
     AND v1.i_brand = v1_lag.i_brand
     AND v1.i_brand = v1_lead.i_brand
     AND v1.s_store_name = v1_lag.s_store_name
     AND v1.s_store_name = v1_lead.s_store_name
     AND v1.s_company_name = v1_lag.s_company_name
     AND v1.s_company_name = v1_lead.s_company_name
     AND CAST(v1.rn AS decimal(21,0)) = CAST(v1_lag.rn AS decimal(20,0)) + 1
     AND CAST(v1.rn AS decimal(21,0)) = CAST(v1_lead.rn AS decimal(20,0)) - 1)
SELECT *
FROM v2
WHERE d_year = 1999
  AND avg_monthly_sales > 0
  AND CASE
          WHEN avg_monthly_sales > 0 THEN abs(sum_sales - avg_monthly_sales) / avg_monthly_sales
          ELSE NULL
      END > 0.1
ORDER BY sum_sales - avg_monthly_sales, 1, 2, 3, 4, 5, 6, 9, 10
LIMIT 100;

