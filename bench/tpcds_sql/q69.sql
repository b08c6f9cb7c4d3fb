-- The plan's query: DataFusion writes each subquery's join with date_dim (whose columns nothing above uses) as a
-- LEFT SEMI join; stated as IN subqueries (and d_moy BETWEEN as the two comparisons it writes).
SELECT cd_gender,
       cd_marital_status,
       cd_education_status,
       count(*) cnt1,
       cd_purchase_estimate,
       count(*) cnt2,
       cd_credit_rating,
       count(*) cnt3
FROM customer c,
     customer_address ca,
     customer_demographics
WHERE c.c_current_addr_sk = ca.ca_address_sk
  AND ca_state IN ('KY',
                   'GA',
                   'NM')
  AND cd_demo_sk = c.c_current_cdemo_sk
  AND EXISTS
    (SELECT *
     FROM store_sales
     WHERE c.c_customer_sk = ss_customer_sk
       AND ss_sold_date_sk IN
         (SELECT d_date_sk
          FROM date_dim
          WHERE d_year = 2001
            AND d_moy >= 4
            AND d_moy <= 4+2))
  AND (NOT EXISTS
         (SELECT *
          FROM web_sales
          WHERE c.c_customer_sk = ws_bill_customer_sk
            AND ws_sold_date_sk IN
              (SELECT d_date_sk
               FROM date_dim
               WHERE d_year = 2001
                 AND d_moy >= 4
                 AND d_moy <= 4+2))
       AND NOT EXISTS
         (SELECT *
          FROM catalog_sales
          WHERE c.c_customer_sk = cs_ship_customer_sk
            AND cs_sold_date_sk IN
              (SELECT d_date_sk
               FROM date_dim
               WHERE d_year = 2001
                 AND d_moy >= 4
                 AND d_moy <= 4+2)))
GROUP BY cd_gender,
         cd_marital_status,
         cd_education_status,
         cd_purchase_estimate,
         cd_credit_rating
ORDER BY cd_gender,
         cd_marital_status,
         cd_education_status,
         cd_purchase_estimate,
         cd_credit_rating
LIMIT 100;
