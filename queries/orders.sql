-- Generated orders: a deterministic datagen source (same seed, same rows), a view with
-- computed columns, and an aggregate with HAVING, printed as a table at the end.
-- Run: streamsql -f queries/orders.sql --format table
CREATE TABLE orders (
  order_id BIGINT,
  customer INT,
  amount DOUBLE,
  item STRING
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10000',
  'rows-per-second' = '1000000',
  'seed' = '7',
  'fields.order_id.kind' = 'sequence',
  'fields.order_id.start' = '1',
  'fields.order_id.end' = '10000',
  'fields.customer.min' = '1',
  'fields.customer.max' = '5',
  'fields.amount.min' = '1',
  'fields.amount.max' = '100',
  'fields.item.length' = '1'
);

CREATE VIEW big_orders AS
SELECT customer, amount, amount * 1.2 AS gross
FROM orders
WHERE amount > 50;

SELECT customer, COUNT(*) AS orders, ROUND(SUM(gross), 2) AS gross, MAX(amount) AS largest
FROM big_orders
GROUP BY customer
HAVING COUNT(*) > 10;
