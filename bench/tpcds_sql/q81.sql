-- The plan's query: DataFusion decorrelates the scalar subquery into an aggregate per state joined last (after
-- customer, then customer_address: its join order), and computes avg(...) * 1.2 in fp64 (the literal as a double),
-- cast to decimal(30,15) to compare with the total (also cast to decimal(30,15)); both stated.
WITH customer_total_return AS
  (SELECT cr_returning_customer_sk AS ctr_customer_sk ,
          ca_state AS ctr_state,
          sum(cr_return_amt_inc_tax) AS ctr_total_return
   FROM catalog_returns ,
        date_dim ,
        customer_address
   WHERE cr_returned_date_sk = d_date_sk
     AND d_year = 2000
     AND cr_returning_addr_sk = ca_address_sk
   GROUP BY cr_returning_customer_sk ,
            ca_state)
SELECT c_customer_id,
       c_salutation,
       c_first_name,
       c_last_name,
       ca_street_number,
       ca_street_name ,
       ca_street_type,
       ca_suite_number,
       ca_city,
       ca_county,
       ca_state,
       ca_zip,
       ca_country,
       ca_gmt_offset ,
       ca_location_type,
       ctr_total_return
FROM customer_total_return ctr1,
     customer,
     customer_address,
     (SELECT ctr_state,
             cast(cast(avg(ctr_total_return) AS double) * 1.2 AS decimal(30,15)) AS avg_return
      FROM customer_total_return
      GROUP BY ctr_state) ctr2
WHERE cast(ctr1.ctr_total_return AS decimal(30,15)) > ctr2.avg_return
  AND ctr1.ctr_state = ctr2.ctr_state
  AND ca_address_sk = c_current_addr_sk
  AND ca_state = 'GA'
  AND ctr1.ctr_customer_sk = c_customer_sk
ORDER BY c_customer_id,
         c_salutation,
         c_first_name,
         c_last_name,
         ca_street_number,
         ca_street_name ,
         ca_street_type,
         ca_suite_number,
         ca_city,
         ca_county,
         ca_state,
         ca_zip,
         ca_country,
         ca_gmt_offset ,
         ca_location_type,
         ctr_total_return
LIMIT 100;
