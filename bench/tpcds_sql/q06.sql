-- The plan's query: DataFusion decorrelates the scalar subquery into an aggregate per category (its avg cast to
-- fp64) joined last, after all the other joins, whose condition compares cast(i_current_price AS decimal(30,15))
-- with 1.2 * avg in fp64 cast to decimal(30,15); stated, in its join order. Sorted by the output column state
-- (DataFusion's sort reads it; the text's a.ca_state is the same value, a column the aggregate would carry). The
-- comparison before the category's equality, as Spark SQL decorrelates the text's subquery; the aggregate's
-- columns in the plan's order (the average, then the category).
SELECT a.ca_state state,
       count(*) cnt
FROM customer_address a ,
     customer c ,
     store_sales s ,
     date_dim d ,
     item i,
  (SELECT cast(avg(i_current_price) AS double) AS avg_price,
          i_category
   FROM item
   GROUP BY i_category) j
WHERE a.ca_address_sk = c.c_current_addr_sk
  AND c.c_customer_sk = s.ss_customer_sk
  AND s.ss_sold_date_sk = d.d_date_sk
  AND s.ss_item_sk = i.i_item_sk
  AND d.d_month_seq =
    (SELECT DISTINCT (d_month_seq)
     FROM date_dim
     WHERE d_year = 2001
       AND d_moy = 1 )
  AND cast(i.i_current_price AS decimal(30,15)) > cast(1.2 * j.avg_price AS decimal(30,15))
  AND j.i_category = i.i_category
GROUP BY a.ca_state
HAVING count(*) >= 10
ORDER BY cnt NULLS FIRST,
         state NULLS FIRST
LIMIT 100;
