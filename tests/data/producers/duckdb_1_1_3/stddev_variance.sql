SELECT product_id, stddev_samp(quantity) AS s_samp, stddev_pop(unit_price) AS s_pop,
       var_samp(quantity) AS v_samp, var_pop(discount) AS v_pop
FROM order_items GROUP BY product_id ORDER BY product_id
