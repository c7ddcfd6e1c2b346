-- Round-trip corpus: every statement must parse, print, and parse back to the same tree.
-- It also seeds FuzzParse. One statement per paragraph.

-- SET
SET 'execution.checkpointing.interval' = '10s';
SET execution.checkpointing.interval = '10s';
set table.exec.mini-batch.enabled = true;
SET 'pipeline.name' = 'it''s a job';

-- CREATE TABLE
CREATE TABLE orders (
  order_id BIGINT NOT NULL,
  customer STRING COMMENT 'who',
  amount DECIMAL(10, 2),
  price DOUBLE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (order_id) NOT ENFORCED
) COMMENT 'all orders' WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'format' = 'json'
);

CREATE TEMPORARY TABLE IF NOT EXISTS `my events` (
  `key` STRING,
  value INT,
  `timestamp` TIMESTAMP(3) WITH LOCAL TIME ZONE,
  date DATE,
  type VARCHAR(20),
  name CHAR(5),
  data STRING
);

CREATE TABLE kafka_meta (
  id BIGINT,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  `partition` BIGINT METADATA VIRTUAL,
  headers MAP<STRING, BYTES> METADATA,
  `offset` BIGINT METADATA VIRTUAL
) WITH (
  'connector' = 'kafka'
);

CREATE TABLE fs_sink (
  auction BIGINT,
  dt STRING,
  hm STRING
) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/bid',
  'format' = 'csv',
  'sink.partition-commit.policy.kind' = 'success-file'
);

create table t (a integer, b float, c double precision, d dec(5), e numeric(12, 4), f boolean,
  g timestamp_ltz(6), h timestamp without time zone, i varchar, j int null);

CREATE TABLE computed (
  a INT,
  b AS a * 2 + 1,
  proc AS PROCTIME(),
  WATERMARK FOR a AS a
) WITH ('connector' = 'datagen');

CREATE TABLE pk_inline (id INT PRIMARY KEY NOT ENFORCED, v STRING);

CREATE TABLE keys (PRIMARY KEY (a, b) NOT ENFORCED, a INT, b INT);

CREATE TABLE if (watermark INT, primary STRING, window_start TIMESTAMP(3), count BIGINT);

-- CREATE VIEW
CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 100;
CREATE TEMPORARY VIEW IF NOT EXISTS v (a, b) AS SELECT x, y FROM t;
CREATE VIEW v2 AS (SELECT DISTINCT customer FROM orders);

-- DROP
DROP TABLE orders;
DROP TEMPORARY TABLE IF EXISTS orders;
DROP VIEW big_orders;
DROP TEMPORARY VIEW IF EXISTS v;
DROP TABLE if;

-- Queries
SELECT 1 + 1;
SELECT * FROM orders;
SELECT o.*, c.name FROM orders AS o;
SELECT ALL a, b c, d AS e FROM t x;
SELECT DISTINCT customer FROM orders WHERE amount >= 10 AND amount < 1000;
SELECT customer, COUNT(*) AS cnt, SUM(amount) total FROM orders GROUP BY customer HAVING COUNT(*) > 1;
SELECT window_start, COUNT(DISTINCT customer) FROM t GROUP BY window_start, customer;
(SELECT a FROM t);
((SELECT a FROM t));
SELECT s.a FROM (SELECT a FROM t) AS s;
SELECT * FROM (SELECT 1 AS one) s WHERE s.one = 1;
SELECT x FROM (SELECT 1 AS x);
SELECT `weird name`, `a``b` AS `select`, `from`.`to` FROM `my table`;
SELECT value, `timestamp`, date, year, key, data, type, name, position, count FROM t;

-- Operators and precedence
SELECT a OR b AND c, (a OR b) AND c, NOT a AND b, NOT (a AND b), NOT NOT a FROM t;
SELECT a + b * c, (a + b) * c, a - b - c, a - (b - c), a / b % c, -a * b, -(a * b) FROM t;
SELECT a || b || c, a || (b || c), 'x' || CAST(a AS STRING) FROM t;
SELECT a = b, a <> b, a != b, a < b, a <= b, a > b, a >= b, (a = b) = c, a = (b = c) FROM t;
SELECT - -1, -(-a), +a, a - -1, -(1 + 2), - 5 FROM t;
SELECT a IS NULL, a IS NOT NULL, b IS TRUE, b IS NOT FALSE, (a = 1) IS TRUE FROM t;
SELECT * FROM t WHERE a BETWEEN 1 AND 10 AND b NOT BETWEEN c + 1 AND d * 2;
SELECT * FROM t WHERE a IN (1, 2, 3) OR b NOT IN ('x', 'y');
SELECT * FROM t WHERE name LIKE 'a%' AND name NOT LIKE '%\_%' ESCAPE '\' OR n LIKE a || '%';
SELECT a = 1 IS NULL, a BETWEEN 1 AND 2 IS TRUE, (a AND b) IS NULL FROM t;

-- Literals
SELECT 1, 1.5, .5, 1e3, 2.5E-3, 'it''s', '', TRUE, FALSE, NULL;
SELECT INTERVAL '5' SECOND, INTERVAL '1' DAY, INTERVAL '10' MINUTE, INTERVAL '1:30' MINUTE TO SECOND;
SELECT INTERVAL '1-2' YEAR TO MONTH, INTERVAL '2' HOUR, INTERVAL '3' MONTH, INTERVAL '-1' YEAR;
SELECT TIMESTAMP '2020-01-01 00:00:00', DATE '2020-01-01' FROM t;
SELECT ts + INTERVAL '1' HOUR FROM t WHERE ts > TIMESTAMP '2020-01-01 00:00:00';

-- CASE, CAST, special functions
SELECT CASE WHEN a > 1 THEN 'big' WHEN a > 0 THEN 'small' ELSE 'none' END FROM t;
SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END AS word FROM t;
SELECT CAST(a AS INT), CAST(b AS DECIMAL(10, 2)), TRY_CAST(c AS TIMESTAMP(3)), CAST(d AS VARCHAR(3) NOT NULL) FROM t;
SELECT CAST(ts AS TIMESTAMP(3) WITH LOCAL TIME ZONE), CAST(x AS TIMESTAMP_LTZ), CAST(y AS DATE) FROM t;
SELECT EXTRACT(YEAR FROM ts), EXTRACT(month FROM ts), EXTRACT(EPOCH FROM ts) FROM t;
SELECT SUBSTRING(s FROM 2 FOR 3), SUBSTRING(s FROM 2), SUBSTRING(s, 1, 2), SUBSTRING(s, 1) FROM t;
SELECT POSITION('a' IN s), POSITION(a || b IN s), POSITION((a IN (1)) IN s), POSITION(x, y) FROM t;
SELECT TRIM(s), TRIM(BOTH FROM s), TRIM(BOTH 'x' FROM s), TRIM(LEADING 'x' FROM s), TRIM(TRAILING FROM s), TRIM('x' FROM s) FROM t;
SELECT TRIM(leading), TRIM(both || 'x'), LTRIM(s), RTRIM(s, 'y') FROM t;
SELECT CURRENT_TIMESTAMP, current_timestamp(), CURRENT_DATE, LOCALTIMESTAMP FROM t;
SELECT MOD(a, 2), LEFT(s, 2), RIGHT(s, 1), IF(a > 0, 'p', 'n'), COALESCE(a, b, 0), UPPER(s) FROM t;
SELECT COUNT(*), count(DISTINCT a), MAX(b), AVG(c), NOW(), `my func`(1), `cast`(x) FROM t;
SELECT TIMESTAMP(x), INTERVAL(y), DATE(z) FROM t;

-- Joins
SELECT * FROM a JOIN b ON a.id = b.id;
SELECT o.id, c.name FROM orders o INNER JOIN customers c ON o.cid = c.id;
SELECT * FROM orders AS o LEFT JOIN customers AS c ON o.cid = c.id;
SELECT * FROM orders AS o LEFT OUTER JOIN customers AS c ON o.cid = c.id AND c.active;
SELECT * FROM a RIGHT JOIN b ON a.x = b.x;
SELECT * FROM a RIGHT OUTER JOIN b ON a.x = b.x;
SELECT * FROM a FULL JOIN b ON a.x = b.x;
SELECT * FROM a FULL OUTER JOIN b ON a.x = b.x OR a.y = b.y;
SELECT * FROM a JOIN b ON a.x = b.x LEFT JOIN c ON b.y = c.y RIGHT JOIN d ON c.z = d.z WHERE a.v > 0;
SELECT o.id, s.ts FROM orders o JOIN shipments s ON o.id = s.order_id AND o.ts BETWEEN s.ts - INTERVAL '4' HOUR AND s.ts;
SELECT * FROM (SELECT id, amount FROM orders WHERE amount > 10) o JOIN (SELECT * FROM a JOIN b ON a.k = b.k) AS ab ON o.id = ab.k;
SELECT L.k, L.window_start, L.n, R.m FROM
  (SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) GROUP BY k, window_start, window_end) L
  FULL OUTER JOIN
  (SELECT k, window_start, window_end, COUNT(*) AS m FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) GROUP BY k, window_start, window_end) R
  ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end;
SELECT * FROM TABLE(HOP(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)) AS w JOIN b ON w.k = b.k;
SELECT * FROM `left` JOIN `on` ON `left`.a = `on`.a;

-- OVER windows: Top-N and deduplication
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS row_num FROM shop_sales
) WHERE row_num <= 3;
SELECT order_id, user FROM (
  SELECT *, row_number() over (partition by order_id order by proctime asc) rn FROM orders
) WHERE rn = 1;
SELECT RANK() OVER (ORDER BY a DESC, b, c ASC), DENSE_RANK() OVER (PARTITION BY a, b || c ORDER BY d), ROW_NUMBER() OVER () FROM t;
SELECT ROW_NUMBER() OVER (PARTITION BY `partition` ORDER BY `offset` DESC) + 1 AS n, partition FROM t;
-- OVER aggregates, frames and the WINDOW clause
SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS s FROM t;
SELECT COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW), MAX(v) FILTER (WHERE v > 0) OVER (ORDER BY ts) FROM t;
SELECT AVG(v) OVER (PARTITION BY a, b ORDER BY ts RANGE UNBOUNDED PRECEDING), MIN(v) OVER (ORDER BY ts ROWS UNBOUNDED PRECEDING) FROM t;
SELECT SUM(v) OVER (ORDER BY ts ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING), SUM(v) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM t;
SELECT SUM(v) OVER w AS s, AVG(v) OVER w FROM t window WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), w2 AS (ORDER BY ts);
SELECT LAG(v, 2, 0) OVER (PARTITION BY k ORDER BY ts), ROW_NUMBER() OVER w FROM t WHERE v > 1 GROUP BY k HAVING COUNT(*) > 1 WINDOW w AS (ORDER BY ts DESC);

-- INSERT
INSERT INTO sink SELECT * FROM orders;
INSERT INTO sink (a, b) SELECT a, b FROM src;
INSERT INTO sink (SELECT a FROM src);
INSERT INTO `select` (`from`) SELECT 1;

-- EXPLAIN, SHOW, DESCRIBE
EXPLAIN SELECT a FROM t WHERE a > 0;
EXPLAIN PLAN FOR INSERT INTO sink SELECT * FROM orders;
SHOW TABLES;
DESCRIBE orders;
DESC `my events`;

-- Comments everywhere
SELECT /* inline */ a -- trailing
FROM t /* multi
line */ WHERE a > 1;

-- A typical streaming query
SELECT
  customer,
  COUNT(*) AS orders,
  SUM(CASE WHEN amount > 100 THEN 1 ELSE 0 END) AS big_orders,
  MAX(ts) AS last_seen
FROM orders
WHERE customer IS NOT NULL AND customer <> '' AND ts >= CURRENT_TIMESTAMP - INTERVAL '1' DAY
GROUP BY customer
HAVING SUM(amount) > 1000;

-- predicates added with the function table
SELECT a IS DISTINCT FROM b + 1, a IS NOT DISTINCT FROM NULL, a NOT BETWEEN SYMMETRIC 3 AND 1,
  f IS NOT UNKNOWN, CASE a WHEN 1, 2 THEN 'low' WHEN 3 THEN 'mid' ELSE 'high' END FROM t;

SELECT FLOOR(ts TO HOUR) AS h, CEIL(ts TO DAY), CEILING(price), FLOOR(DATE '2024-05-06' TO MONTH) FROM t;

SELECT OVERLAY(name PLACING 'xx' FROM 2 FOR 3), OVERLAY(name PLACING 'y' FROM 1), name SIMILAR TO '(a|b)%' FROM t;

SELECT doc IS JSON, doc IS NOT JSON OBJECT, JSON_VALUE(doc, '$.a[0]'), JSON_EXISTS(doc, 'strict $.b') FROM t;

SELECT * FROM TABLE(TUMBLE(DATA => TABLE bid, TIMECOL => DESCRIPTOR(dateTime), SIZE => INTERVAL '10' MINUTES));

SELECT * FROM TABLE(HOP(SIZE => INTERVAL '10' MINUTES, DATA => TABLE t, SLIDE => INTERVAL '1' MINUTE, TIMECOL => DESCRIPTOR(ts), OFFSET => INTERVAL '1' SECOND)) AS w;

SELECT * FROM TABLE(SESSION(DATA => TABLE t PARTITION BY a, b, TIMECOL => DESCRIPTOR(ts), GAP => INTERVAL '1' MINUTE));

SELECT window_start, COUNT(*) FROM TABLE(TUMBLE((SELECT * FROM t WHERE a > 1), DESCRIPTOR(ts), INTERVAL '1' MINUTE)) AS w GROUP BY window_start, window_end;

SELECT a FROM t UNION ALL SELECT b FROM u UNION SELECT c FROM v;

SELECT a FROM t UNION (SELECT b FROM u INTERSECT SELECT c FROM v) EXCEPT ALL SELECT d FROM w;

(SELECT a FROM t UNION SELECT b FROM u) INTERSECT ALL SELECT c FROM v;

VALUES (1, 'a'), (2, 'b'), (3, NULL);

SELECT id, name FROM (VALUES (1, 'a'), (2, 'b')) AS t (id, name) WHERE id > 1;

CREATE VIEW v (id, name) AS VALUES (1, 'a'), (2, 'b');

INSERT INTO t VALUES (1, 'a');

SELECT a, b FROM t ORDER BY a DESC, b LIMIT 3;

SELECT a FROM t LIMIT 10;

(SELECT a FROM t ORDER BY a LIMIT 3) UNION ALL SELECT b FROM u ORDER BY a LIMIT 5;

WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION ALL VALUES (2) ORDER BY a;

SHOW CATALOGS;

SHOW DATABASES;

SHOW CURRENT CATALOG;

SHOW CURRENT DATABASE;

SHOW COLUMNS FROM t;

SHOW CREATE TABLE t;

SHOW CREATE VIEW v;

USE default_database;

USE default_catalog.default_database;

USE CATALOG default_catalog;

SET;

RESET;

RESET 'parallelism.default';

CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS my_fn AS 'com.example.MyFn' LANGUAGE JAVA;

CREATE FUNCTION db.f AS 'com.example.F';
SELECT a.id, b.id FROM a CROSS JOIN b;
SELECT id, tag FROM t CROSS JOIN UNNEST(t.tags) AS u (tag);
SELECT id, tag, pos FROM t LEFT JOIN UNNEST(tags) WITH ORDINALITY AS u (tag, pos) ON TRUE;
SELECT id, k, v FROM t, UNNEST(ARRAY[1, 2]) u WHERE id > 0;
SELECT JSON_OBJECT(), JSON_OBJECT('a' VALUE 1, KEY 'b' VALUE JSON_ARRAY(x, 2 NULL ON NULL) ABSENT ON NULL), JSON_ARRAY() FROM t;
SELECT JSON_QUERY(j, 'lax $.a[*]' WITH UNCONDITIONAL ARRAY WRAPPER NULL ON EMPTY EMPTY ARRAY ON ERROR), JSON_QUERY(j, '$') FROM t;
SELECT JSON_VALUE(j, 'strict $.b' RETURNING DOUBLE DEFAULT 0 ON EMPTY DEFAULT -1 ON ERROR), JSON_VALUE(j, '$.c' ERROR ON EMPTY) FROM t;
SELECT a, b, COUNT(*) FROM t GROUP BY GROUPING SETS ((a, b), (a), ());
SELECT a, b, GROUPING(a), GROUPING_ID(a, b) FROM t GROUP BY ROLLUP (a, b);
SELECT a FROM t GROUP BY CUBE ((a, b), c) HAVING GROUPING(a) = 0;
SELECT window_start, a, SUM(x) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, GROUPING SETS ((a), ());
SELECT a FROM t GROUP BY GROUPING SETS (ROLLUP (a, b), (a + 1) * 2, c), ();
EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM t; INSERT INTO b SELECT CASE WHEN x THEN 1 END FROM t; END;
BEGIN STATEMENT SET;
INSERT INTO a SELECT 1;
END;
EXPLAIN STATEMENT SET BEGIN INSERT INTO a SELECT * FROM t; END;
EXPLAIN CHANGELOG_MODE, ESTIMATED_COST SELECT 1;
EXPLAIN JSON_EXECUTION_PLAN INSERT INTO a SELECT 1;
CREATE TABLE big WITH ('connector' = 'print') AS SELECT id, amount * 2 AS doubled FROM orders WHERE amount > 15;
CREATE OR REPLACE TEMPORARY TABLE t (n INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print') AS SELECT k, COUNT(*) AS n FROM s GROUP BY k;
CREATE TABLE IF NOT EXISTS c (x AS UPPER(y)) WITH ('path' = '/tmp/x') LIKE orders (EXCLUDING ALL INCLUDING GENERATED OVERWRITING OPTIONS);
CREATE TABLE d LIKE orders;
SELECT id FROM t /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */ AS x WHERE id > 1;
SELECT /*+ BROADCAST(t1), SHUFFLE_HASH(t2) */ t1.a FROM t1 JOIN t2 /*+ OPTIONS('x' = 'y') */ ON t1.a = t2.a;
INSERT INTO k /*+ OPTIONS('sink.parallelism' = '2') */ SELECT * FROM t;
SELECT id FROM a WHERE id IN (SELECT id FROM b WHERE v > 1) AND k NOT IN (SELECT k FROM c);
SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v > 10) AND NOT EXISTS (SELECT * FROM c WHERE c.k = a.k);
SELECT id, (SELECT MAX(v) FROM b) AS m FROM a WHERE v > (SELECT AVG(v) FROM b);
SELECT id FROM a WHERE (id, k) IN (SELECT id, k FROM b UNION ALL SELECT 1, 'x');
SELECT o.id, r.rate FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;
SELECT o.id, c.name FROM orders AS o LEFT JOIN customers /*+ OPTIONS('lookup.cache' = 'PARTIAL') */ FOR SYSTEM_TIME AS OF o.proc_time c ON o.cid = c.id;
CREATE TABLE times (t TIME, t3 TIME(3), t9 TIME(9) NOT NULL, tz TIME(0) WITHOUT TIME ZONE);
SELECT TIME '12:34:56', TIME '12:34:56.789', CAST(ts AS TIME(3)), CURRENT_TIME, LOCALTIME FROM t;
SELECT t + INTERVAL '1' HOUR, FLOOR(t TO MINUTE), EXTRACT(SECOND FROM t) FROM t WHERE t > TIME '08:00:00';
SELECT (a, b) OVERLAPS (c, INTERVAL '1' HOUR), ROW(a, b) OVERLAPS ROW(c, d) AND x, t AS overlaps FROM t;
SELECT JSON_EXISTS(j, 'strict $.a' TRUE ON ERROR), JSON_EXISTS(j, '$.b' ERROR ON ERROR), JSON_EXISTS(j, '$') FROM t;

-- MATCH_RECOGNIZE
SELECT * FROM Ticker MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY rowtime
  MEASURES START_ROW.rowtime AS start_tstamp, LAST(PRICE_DOWN.rowtime) AS bottom_tstamp, MATCH_ROWTIME() AS mt
  ONE ROW PER MATCH AFTER MATCH SKIP TO LAST PRICE_UP
  PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
  DEFINE PRICE_DOWN AS (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price) OR PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
    PRICE_UP AS PRICE_UP.price > LAST(PRICE_DOWN.price, 1)
) MR;

SELECT T.a FROM (SELECT * FROM t) MATCH_RECOGNIZE (ORDER BY ts ASC, price DESC MEASURES AVG(A.price) AS a
  AFTER MATCH SKIP PAST LAST ROW PATTERN ((A | B C)+? D{2} E{1,} F{,3} G{2,4}? H* I?) WITHIN INTERVAL '10' SECOND
  DEFINE A AS A.price > PREV(A.price, 2), D AS SUM(price) < 100) AS T;

SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY k, j MEASURES FIRST(A.x, 1) AS f ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW PATTERN (A B*? C) DEFINE A AS TRUE);

SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts AFTER MATCH SKIP TO FIRST B PATTERN (A B) DEFINE B AS B.x = 1) AS `m r`;

SELECT match_recognize, measures, pattern, define FROM t match_recognize;
