-- The plan's query: DataFusion rewrites the subquery's filter: each OR of equalities on one column as an IN list,
-- (x = 'petite' OR x = 'petite') as x = 'petite', and the two 'Women' branches of each group with their common
-- conjunct taken out, nested as it writes them (the parentheses state its nesting: Spark's parser would balance
-- an OR or AND chain).
SELECT distinct(i_product_name)
FROM item i1
WHERE i_manufact_id BETWEEN 738 AND 738+40
  AND
    (SELECT count(*) AS item_cnt
     FROM item
     WHERE (i_manufact = i1.i_manufact
            AND (((i_category = 'Women'
                   AND ((i_color IN ('powder', 'khaki')
                         AND i_units IN ('Ounce', 'Oz')
                         AND i_size IN ('medium', 'extra large'))
                        OR (i_color IN ('brown', 'honeydew')
                            AND i_units IN ('Bunch', 'Ton')
                            AND i_size IN ('N/A', 'small'))))
                  OR ((((i_category = 'Men'
                      AND i_color IN ('floral', 'deep'))
                      AND i_units IN ('N/A', 'Dozen'))
                      AND i_size = 'petite')))
                 OR ((((i_category = 'Men'
                     AND i_color IN ('light', 'cornflower'))
                     AND i_units IN ('Box', 'Pound'))
                     AND i_size IN ('medium', 'extra large')))))
       OR (i_manufact = i1.i_manufact
           AND (((i_category = 'Women'
                  AND ((i_color IN ('midnight', 'snow')
                        AND i_units IN ('Pallet', 'Gross')
                        AND i_size IN ('medium', 'extra large'))
                       OR (i_color IN ('cyan', 'papaya')
                           AND i_units IN ('Cup', 'Dram')
                           AND i_size IN ('N/A', 'small'))))
                 OR ((((i_category = 'Men'
                     AND i_color IN ('orange', 'frosted'))
                     AND i_units IN ('Each', 'Tbl'))
                     AND i_size = 'petite')))
                OR ((((i_category = 'Men'
                    AND i_color IN ('forest', 'ghost'))
                    AND i_units IN ('Lb', 'Bundle'))
                    AND i_size IN ('medium', 'extra large')))))) > 0
ORDER BY i_product_name
LIMIT 100;
