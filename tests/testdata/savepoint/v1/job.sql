-- The job of the golden savepoint beside it: never edit it, or the savepoint stops
-- meaning what it meant. A group aggregate in two tasks over a seeded datagen source.
SET 'execution.checkpointing.interval' = '200 ms';
SET 'parallelism.default' = '2';
CREATE TABLE gen (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '3000', 'rows-per-second' = '1000', 'seed' = '11',
  'fields.k.min' = '1', 'fields.k.max' = '40', 'fields.v.min' = '0', 'fields.v.max' = '1000');
SELECT k, COUNT(*) AS c, SUM(v) AS s, MAX(v) AS m FROM gen GROUP BY k;
