SELECT count(*) AS n, sum(unit_price) AS total FROM order_items
WHERE (discount BETWEEN 0.05 AND 0.10 AND quantity > 2) OR (discount BETWEEN 0.15 AND 0.50 AND quantity < 2)
