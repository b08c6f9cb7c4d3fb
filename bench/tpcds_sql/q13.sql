-- The plan's query: DataFusion takes the join keys each OR branch repeats out of the ORs (so the joins come in the
-- FROM order); and it derives from the ORs of conjunctions a filter per table (store_sales: the ORs of the
-- ss_net_profit and of the ss_sales_price ranges; customer_demographics: the OR of the status pairs;
-- household_demographics: hd_dep_count IN (3, 1); customer_address: ca_country and the states of all branches as
-- one IN list) and pushes them to the scans; all stated, in its order; and the BETWEENs in the ORs as
-- the conjunctions it writes, nested as it nests them (Spark's parser would balance an AND chain).
SELECT avg(ss_quantity) avg1,
       avg(ss_ext_sales_price) avg2,
       avg(ss_ext_wholesale_cost) avg3,
       sum(ss_ext_wholesale_cost)
FROM store_sales ,
     store ,
     customer_demographics ,
     household_demographics ,
     customer_address ,
     date_dim
WHERE s_store_sk = ss_store_sk
  AND ss_sold_date_sk = d_date_sk
  AND d_year = 2001
  AND ss_hdemo_sk=hd_demo_sk
  AND cd_demo_sk = ss_cdemo_sk
  AND ss_addr_sk = ca_address_sk
  AND (ss_net_profit BETWEEN 100 AND 200
       OR ss_net_profit BETWEEN 150 AND 300
       OR ss_net_profit BETWEEN 50 AND 250)
  AND (ss_sales_price BETWEEN 100.00 AND 150.00
       OR ss_sales_price BETWEEN 50.00 AND 100.00
       OR ss_sales_price BETWEEN 150.00 AND 200.00)
  AND ((cd_marital_status = 'M'
        AND cd_education_status = 'Advanced Degree')
       OR (cd_marital_status = 'S'
           AND cd_education_status = 'College')
       OR (cd_marital_status = 'W'
           AND cd_education_status = '2 yr Degree'))
  AND hd_dep_count IN (3, 1)
  AND ca_country = 'United States'
  AND ca_state IN ('TX', 'OH', 'OR', 'NM', 'KY', 'VA', 'MS')
  AND (((((cd_marital_status = 'M'
            AND cd_education_status = 'Advanced Degree')
           AND ss_sales_price >= 100.00)
          AND ss_sales_price <= 150.00)
         AND hd_dep_count = 3)
       OR ((((cd_marital_status = 'S'
              AND cd_education_status = 'College')
             AND ss_sales_price >= 50.00)
            AND ss_sales_price <= 100.00)
           AND hd_dep_count = 1)
       OR ((((cd_marital_status = 'W'
              AND cd_education_status = '2 yr Degree')
             AND ss_sales_price >= 150.00)
            AND ss_sales_price <= 200.00)
           AND hd_dep_count = 1))
  AND (((ca_state IN ('TX', 'OH', 'TX')
         AND ss_net_profit >= 100)
        AND ss_net_profit <= 200)
       OR ((ca_state IN ('OR', 'NM', 'KY')
            AND ss_net_profit >= 150)
           AND ss_net_profit <= 300)
       OR ((ca_state IN ('VA', 'TX', 'MS')
            AND ss_net_profit >= 50)
           AND ss_net_profit <= 250));
