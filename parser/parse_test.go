package parser

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// parseTests are inputs and their canonical printing. They also seed FuzzParse.
var parseTests = []struct{ in, want string }{
	// SET
	{`SET 'k' = 'v'`, `SET 'k' = 'v'`},
	{`set execution.checkpointing.interval = '10s'`, `SET 'execution.checkpointing.interval' = '10s'`},
	{`SET table.exec.mini-batch.enabled = true`, `SET 'table.exec.mini-batch.enabled' = 'true'`},
	{`SET parallelism.default = 4`, `SET 'parallelism.default' = '4'`},
	{`SET 'a' = 'it''s'`, `SET 'a' = 'it''s'`},

	// CREATE TABLE
	{`CREATE TABLE t (a INT)`, "CREATE TABLE t (\n  a INT\n)"},
	{`create temporary table if not exists t (a int not null) with ('k' = 'v', 'x' = 'y')`,
		"CREATE TEMPORARY TABLE IF NOT EXISTS t (\n  a INT NOT NULL\n) WITH (\n  'k' = 'v',\n  'x' = 'y'\n)"},
	{`CREATE TABLE t (PRIMARY KEY (a, b) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, a INT, ts TIMESTAMP(3))`,
		"CREATE TABLE t (\n  a INT,\n  ts TIMESTAMP(3),\n  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND,\n  PRIMARY KEY (a, b) NOT ENFORCED\n)"},
	{`CREATE TABLE t (a INT COMMENT 'the a', b AS a + 1 COMMENT 'x') COMMENT 'table' WITH ('k' = 'v')`,
		"CREATE TABLE t (\n  a INT,\n  b AS a + 1\n) WITH (\n  'k' = 'v'\n)"},
	{`CREATE TABLE t (a INT, dt STRING, hm STRING) COMMENT 'c' partitioned by (dt, ` + "`hm`" + `) WITH ('k' = 'v')`,
		"CREATE TABLE t (\n  a INT,\n  dt STRING,\n  hm STRING\n) PARTITIONED BY (dt, hm) WITH (\n  'k' = 'v'\n)"},
	{"CREATE TABLE t (ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', `partition` BIGINT metadata virtual, headers MAP<STRING, BYTES> METADATA, metadata INT, o BIGINT METADATA FROM 'offset' VIRTUAL COMMENT 'x')",
		"CREATE TABLE t (\n  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',\n  partition BIGINT METADATA VIRTUAL,\n  headers MAP<STRING, BYTES> METADATA,\n  metadata INT,\n  o BIGINT METADATA FROM 'offset' VIRTUAL\n)"},
	{`CREATE TABLE t (partitioned INT, a INT) PARTITIONED BY (partitioned)`,
		"CREATE TABLE t (\n  partitioned INT,\n  a INT\n) PARTITIONED BY (partitioned)"},
	{`CREATE TABLE t (id BIGINT PRIMARY KEY NOT ENFORCED)`,
		"CREATE TABLE t (\n  id BIGINT,\n  PRIMARY KEY (id) NOT ENFORCED\n)"},
	{`CREATE TABLE t (watermark INT, primary INT, key INT, value INT, if INT)`,
		"CREATE TABLE t (\n  watermark INT,\n  primary INT,\n  key INT,\n  value INT,\n  if INT\n)"},
	{`CREATE TABLE if (a INT)`, "CREATE TABLE if (\n  a INT\n)"},
	{"CREATE TABLE `my t` (`a b` INT, `select` INT)", "CREATE TABLE `my t` (\n  `a b` INT,\n  `select` INT\n)"},

	// types
	{`CREATE TABLE t (a BOOLEAN, b INTEGER, c BIGINT, d FLOAT, e DOUBLE PRECISION, f DEC(5, 2), g NUMERIC)`,
		"CREATE TABLE t (\n  a BOOLEAN,\n  b INT,\n  c BIGINT,\n  d FLOAT,\n  e DOUBLE,\n  f DECIMAL(5, 2),\n  g DECIMAL\n)"},
	{`CREATE TABLE t (a STRING, b VARCHAR(10), c CHAR(3), d DATE, e TIMESTAMP, f TIMESTAMP_LTZ(3))`,
		"CREATE TABLE t (\n  a STRING,\n  b VARCHAR(10),\n  c CHAR(3),\n  d DATE,\n  e TIMESTAMP,\n  f TIMESTAMP_LTZ(3)\n)"},
	{`CREATE TABLE t (a TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL, b TIMESTAMP WITHOUT TIME ZONE, c INT NULL)`,
		"CREATE TABLE t (\n  a TIMESTAMP_LTZ(3) NOT NULL,\n  b TIMESTAMP,\n  c INT\n)"},

	// CREATE VIEW, DROP
	{`CREATE VIEW v AS SELECT a FROM t`, `CREATE VIEW v AS SELECT a FROM t`},
	{`CREATE TEMPORARY VIEW IF NOT EXISTS v (x, y) AS (SELECT a, b FROM t)`,
		`CREATE TEMPORARY VIEW IF NOT EXISTS v (x, y) AS SELECT a, b FROM t`},
	{`DROP TABLE t`, `DROP TABLE t`},
	{`drop temporary view if exists v`, `DROP TEMPORARY VIEW IF EXISTS v`},
	{`DROP TABLE if`, `DROP TABLE if`},

	// queries
	{`SELECT 1+1`, `SELECT 1 + 1`},
	{`select * from t`, `SELECT * FROM t`},
	{`SELECT ALL t.*, a, b c, d AS e FROM t x`, `SELECT t.*, a, b AS c, d AS e FROM t AS x`},
	{`SELECT DISTINCT a FROM t WHERE a > 1 GROUP BY a, b HAVING COUNT(*) > 2`,
		`SELECT DISTINCT a FROM t WHERE a > 1 GROUP BY a, b HAVING COUNT(*) > 2`},
	{`SELECT x FROM (SELECT a AS x FROM t) s`, `SELECT x FROM (SELECT a AS x FROM t) AS s`},
	{`SELECT x FROM (SELECT 1 AS x)`, `SELECT x FROM (SELECT 1 AS x)`},
	{`((SELECT a FROM t))`, `SELECT a FROM t`},
	{`SELECT value, timestamp, window_start, date, count, year, key, data, type, name, position FROM t`,
		`SELECT value, timestamp, window_start, date, count, year, key, data, type, name, position FROM t`},
	{"SELECT `weird name`, `a``b`, `SELECT`, `Mixed` FROM `t`", "SELECT `weird name`, `a``b`, `SELECT`, Mixed FROM t"},
	{`SELECT t.a, s.t.b FROM t`, `SELECT t.a, s.t.b FROM t`},
	{`SELECT a /* block */ FROM t -- line`, `SELECT a FROM t`},

	// joins
	{`SELECT * FROM a JOIN b ON a.id = b.id`, `SELECT * FROM a INNER JOIN b ON a.id = b.id`},
	{`select * from a inner join b on a.id = b.id`, `SELECT * FROM a INNER JOIN b ON a.id = b.id`},
	{`SELECT * FROM orders o LEFT JOIN customers c ON o.cid = c.id`,
		`SELECT * FROM orders AS o LEFT JOIN customers AS c ON o.cid = c.id`},
	{`SELECT * FROM orders AS o LEFT OUTER JOIN customers AS c ON o.cid = c.id`,
		`SELECT * FROM orders AS o LEFT JOIN customers AS c ON o.cid = c.id`},
	{`SELECT * FROM a RIGHT JOIN b ON a.x = b.x`, `SELECT * FROM a RIGHT JOIN b ON a.x = b.x`},
	{`SELECT * FROM a right outer join b ON a.x = b.x`, `SELECT * FROM a RIGHT JOIN b ON a.x = b.x`},
	{`SELECT * FROM a FULL JOIN b ON a.x = b.x`, `SELECT * FROM a FULL JOIN b ON a.x = b.x`},
	{`SELECT * FROM a FULL OUTER JOIN b ON a.x = b.x`, `SELECT * FROM a FULL JOIN b ON a.x = b.x`},
	{`SELECT * FROM a JOIN b ON a.x = b.x LEFT JOIN c ON b.y = c.y FULL JOIN d ON TRUE WHERE a.z > 0`,
		`SELECT * FROM a INNER JOIN b ON a.x = b.x LEFT JOIN c ON b.y = c.y FULL JOIN d ON TRUE WHERE a.z > 0`},
	{`SELECT o.id FROM orders o JOIN shipments s ON o.id = s.order_id AND o.ts BETWEEN s.ts - INTERVAL '4' HOUR AND s.ts`,
		`SELECT o.id FROM orders AS o INNER JOIN shipments AS s ON o.id = s.order_id AND o.ts BETWEEN s.ts - INTERVAL '4' HOUR AND s.ts`},
	{`SELECT * FROM (SELECT a FROM t) x JOIN (SELECT a FROM u) AS y ON x.a = y.a`,
		`SELECT * FROM (SELECT a FROM t) AS x INNER JOIN (SELECT a FROM u) AS y ON x.a = y.a`},
	{`SELECT * FROM (SELECT * FROM a JOIN b ON a.x = b.x) s JOIN c ON s.x = c.x`,
		`SELECT * FROM (SELECT * FROM a INNER JOIN b ON a.x = b.x) AS s INNER JOIN c ON s.x = c.x`},
	{`SELECT L.k FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) L ` +
		`JOIN TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) AS R ` +
		`ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end`,
		`SELECT L.k FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) AS L ` +
			`INNER JOIN TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) AS R ` +
			`ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end`},
	{"SELECT * FROM `left` JOIN `on` ON `left`.a = `on`.a",
		"SELECT * FROM `left` INNER JOIN `on` ON `left`.a = `on`.a"},

	// OVER windows
	{`SELECT ROW_NUMBER() OVER (PARTITION BY category ORDER BY price DESC) AS rownum FROM t`,
		`SELECT ROW_NUMBER() OVER (PARTITION BY category ORDER BY price DESC) AS rownum FROM t`},
	{`select row_number() over (order by proctime asc) from t`,
		`SELECT ROW_NUMBER() OVER (ORDER BY proctime) FROM t`},
	{`SELECT rank() OVER (PARTITION BY a, b + 1 ORDER BY c DESC, d ASC, e), dense_rank() over () FROM t`,
		`SELECT RANK() OVER (PARTITION BY a, b + 1 ORDER BY c DESC, d, e), DENSE_RANK() OVER () FROM t`},
	{`SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) rn FROM t) WHERE rn = 1`,
		`SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) AS rn FROM t) WHERE rn = 1`},
	{"SELECT rank, `rank`(), row_number FROM t", "SELECT rank, `RANK`(), row_number FROM t"},

	// literals
	{`SELECT 1, 1.5, .5, 1e3, 'x''y', TRUE, false, null`, `SELECT 1, 1.5, .5, 1e3, 'x''y', TRUE, FALSE, NULL`},
	{`SELECT interval '5' second, INTERVAL '1:30' MINUTE TO SECOND, INTERVAL '-1' day`,
		`SELECT INTERVAL '5' SECOND, INTERVAL '1:30' MINUTE TO SECOND, INTERVAL '-1' DAY`},
	{`SELECT timestamp '2020-01-01 00:00:00', date '2020-01-01'`,
		`SELECT TIMESTAMP '2020-01-01 00:00:00', DATE '2020-01-01'`},

	// special expressions
	{`SELECT CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END, case x when 1 then 'a' end`,
		`SELECT CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END, CASE x WHEN 1 THEN 'a' END`},
	{`SELECT cast(a as char(3)), try_cast(b AS timestamp(3) with local time zone)`,
		`SELECT CAST(a AS CHAR(3)), TRY_CAST(b AS TIMESTAMP_LTZ(3))`},
	{`CREATE TABLE t (a tinyint, b SmallInt, c real, d bytes, e binary(4), f varbinary(8), g char)`,
		"CREATE TABLE t (\n  a TINYINT,\n  b SMALLINT,\n  c FLOAT,\n  d BYTES,\n  e BINARY(4),\n  f VARBINARY(8),\n  g CHAR\n)"},
	// Structured types: ROW<...> and ROW(...), ARRAY<T> and T ARRAY, MAP<K, V>, nested.
	{"CREATE TABLE t (r ROW<a INT NOT NULL, `b c` STRING 'a description'>, s ROW(x DOUBLE), e ROW<>)",
		"CREATE TABLE t (\n  r ROW<a INT NOT NULL, `b c` STRING>,\n  s ROW<x DOUBLE>,\n  e ROW<>\n)"},
	{`CREATE TABLE t (a ARRAY<ARRAY<INT>>, b INT ARRAY NOT NULL, m MAP<STRING, ROW<v BIGINT>> NOT NULL)`,
		"CREATE TABLE t (\n  a ARRAY<ARRAY<INT>>,\n  b ARRAY<INT> NOT NULL,\n  m MAP<STRING, ROW<v BIGINT>> NOT NULL\n)"},
	{`CREATE TABLE t (a MULTISET<STRING>, b INT MULTISET NOT NULL)`,
		"CREATE TABLE t (\n  a MULTISET<STRING>,\n  b MULTISET<INT> NOT NULL\n)"},
	{`SELECT CAST(x AS ROW<a INT, b ARRAY<STRING>>), CAST(m AS MAP<INT, INT>) FROM t`,
		`SELECT CAST(x AS ROW<a INT, b ARRAY<STRING>>), CAST(m AS MAP<INT, INT>) FROM t`},
	// Constructors, subscripts and field access.
	{`SELECT array[1, 2], ARRAY[], map['a', 1, 'b', 2], row(1, 'a'), (1, 'a'), ROW()`,
		`SELECT ARRAY[1, 2], ARRAY[], MAP['a', 1, 'b', 2], ROW(1, 'a'), ROW(1, 'a'), ROW()`},
	{`SELECT a[1], m['k'], t.r.f, r.f.g, a[1].f, (r).f, (a || b)[2], ARRAY[1][1], -a[1] FROM t`,
		`SELECT a[1], m['k'], t.r.f, r.f.g, a[1].f, (r).f, (a || b)[2], ARRAY[1][1], -a[1] FROM t`},
	{"SELECT `array`, `map`, array, map FROM t", "SELECT array, map, array, map FROM t"},
	{`SELECT k, sum(v) filter (where v > 0) AS pos, count(*) filter FROM t GROUP BY k`,
		`SELECT k, SUM(v) FILTER (WHERE v > 0) AS pos, COUNT(*) AS filter FROM t GROUP BY k`},
	// Comma joins.
	{`SELECT * FROM a, b AS x, (SELECT 1) AS s WHERE a.k = x.k`, `SELECT * FROM a, b AS x, (SELECT 1) AS s WHERE a.k = x.k`},
	{`SELECT * FROM a JOIN b ON a.x = b.x, c`, `SELECT * FROM a INNER JOIN b ON a.x = b.x, c`},
	// WITH: common table expressions, in queries, subqueries, INSERT and views.
	{`with a as (select 1 as x), b (y) as (select x from a) select * from b`,
		`WITH a AS (SELECT 1 AS x), b (y) AS (SELECT x FROM a) SELECT * FROM b`},
	{`INSERT INTO t WITH a AS (SELECT 1) SELECT * FROM a`, `INSERT INTO t WITH a AS (SELECT 1) SELECT * FROM a`},
	{`SELECT * FROM (WITH a AS (SELECT 1) SELECT * FROM a) AS s`, `SELECT * FROM (WITH a AS (SELECT 1) SELECT * FROM a) AS s`},
	{`CREATE VIEW v AS WITH a AS (SELECT 1) (SELECT * FROM a)`, `CREATE VIEW v AS WITH a AS (SELECT 1) SELECT * FROM a`},
	{`SELECT extract(year from ts), EXTRACT(DOW FROM ts)`, `SELECT EXTRACT(YEAR FROM ts), EXTRACT(DOW FROM ts)`},
	{`SELECT substring(s from 2 for 3), SUBSTRING(s FROM 2), substring(s, 1, 2)`,
		`SELECT SUBSTRING(s, 2, 3), SUBSTRING(s, 2), SUBSTRING(s, 1, 2)`},
	{`SELECT position('a' in s), POSITION(x IN y || z)`, `SELECT POSITION('a' IN s), POSITION(x IN y || z)`},
	{`SELECT trim(s), TRIM(BOTH FROM s), TRIM('x' FROM s), TRIM(LEADING 'x' FROM s), TRIM(TRAILING FROM s)`,
		`SELECT TRIM(s), TRIM(s), TRIM(BOTH 'x' FROM s), TRIM(LEADING 'x' FROM s), RTRIM(s)`},
	{`SELECT CURRENT_TIMESTAMP, current_timestamp(), CURRENT_DATE`,
		`SELECT CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_DATE`},
	{`SELECT count(*), Count(DISTINCT a), mod(a, 2), left(s, 1), right(s, 1), if(a, 1, 2), now()`,
		`SELECT COUNT(*), COUNT(DISTINCT a), MOD(a, 2), LEFT(s, 1), RIGHT(s, 1), IF(a, 1, 2), NOW()`},
	{"SELECT `my func`(1), `cast`(x)", "SELECT `MY FUNC`(1), `CAST`(x)"},

	// other statements
	{`INSERT INTO s SELECT * FROM t`, `INSERT INTO s SELECT * FROM t`},
	{`insert into s (a, b) select 1, 2`, `INSERT INTO s (a, b) SELECT 1, 2`},
	{`INSERT INTO s (SELECT 1)`, `INSERT INTO s SELECT 1`},
	{`EXPLAIN SELECT 1`, `EXPLAIN SELECT 1`},
	{`explain plan for insert into s select 1`, `EXPLAIN INSERT INTO s SELECT 1`},
	{`SHOW TABLES`, `SHOW TABLES`},
	{`describe t`, `DESCRIBE t`},
	{`DESC t`, `DESCRIBE t`},
	{`describe job 'insert-out'`, `DESCRIBE JOB 'insert-out'`},
	{`DESC JOB 'it''s'`, `DESCRIBE JOB 'it''s'`},
	{`DESCRIBE job`, `DESCRIBE job`}, // a table named job

	// scripts
	{"SELECT 1; SELECT 2;", "SELECT 1;\nSELECT 2"},
	{"SHOW TABLES;\n-- done\n", "SHOW TABLES"},
	{"", ""},
	{"  -- nothing\n/* at all */ ", ""},
}

// TestParse parses each construct and checks the canonical printing of the result.
func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		script, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := script.String(); got != tt.want {
			t.Errorf("Parse(%q)\n got: %s\nwant: %s", tt.in, got, tt.want)
		}
		for _, stmt := range script.Stmts {
			checkRoundTrip(t, stmt)
		}
	}
}

// TestParseExpr checks the shape of expression trees, written as S-expressions.
func TestParseExpr(t *testing.T) {
	tests := []struct{ in, want string }{
		// precedence, loosest first: OR, AND, NOT, comparison, ||, + -, * / %, unary
		{`a OR b AND c`, `(OR a (AND b c))`},
		{`a AND b OR c`, `(OR (AND a b) c)`},
		{`NOT a AND b`, `(AND (NOT a) b)`},
		{`NOT a = b`, `(NOT (= a b))`},
		{`a = b || c`, `(= a (|| b c))`},
		{`a || b + c`, `(|| a (+ b c))`},
		{`a + b * c`, `(+ a (* b c))`},
		{`-a * b`, `(* (- a) b)`},
		{`a - b - c`, `(- (- a b) c)`},
		{`a / b % c`, `(% (/ a b) c)`},
		{`(a + b) * c`, `(* (+ a b) c)`},
		{`a != b`, `(<> a b)`},
		{`a <= b AND c >= d AND e < f AND g > h`, `(AND (AND (AND (<= a b) (>= c d)) (< e f)) (> g h))`},
		{`- -1`, `(- (- 1))`},
		{`+a`, `(+ a)`},
		{`NOT NOT a`, `(NOT (NOT a))`},
		// predicates
		{`a IS NULL`, `(IS a NULL)`},
		{`a IS NOT TRUE OR b IS FALSE`, `(OR (IS-NOT a TRUE) (IS b FALSE))`},
		{`a + 1 BETWEEN b AND c + 1 AND d`, `(AND (BETWEEN (+ a 1) b (+ c 1)) d)`},
		{`a NOT BETWEEN 1 AND 2`, `(NOT-BETWEEN a 1 2)`},
		// subqueries
		{`a IN (SELECT b FROM t)`, `(IN a {SELECT b FROM t})`},
		{`a NOT IN (SELECT b FROM t WHERE c IN (1, 2)) AND d`, `(AND (NOT-IN a {SELECT b FROM t WHERE c IN (1, 2)}) d)`},
		{`(a, b) IN (SELECT c, d FROM t)`, `(IN (ROW a b) {SELECT c, d FROM t})`},
		{`NOT EXISTS (SELECT 1 FROM t WHERE t.k = s.k) OR x`, `(OR (NOT EXISTS (SELECT 1 FROM t WHERE t.k = s.k)) x)`},
		{`exists + 1`, `(+ exists 1)`},
		{`(SELECT MAX(v) FROM t) + 1`, `(+ (SELECT MAX(v) FROM t) 1)`},
		{`((SELECT 1))`, `(SELECT 1)`},
		{`a IN (WITH w AS (SELECT 1 AS x) SELECT x FROM w)`, `(IN a {WITH w AS (SELECT 1 AS x) SELECT x FROM w})`},
		{`a IN (1, b + 1)`, `(IN a 1 (+ b 1))`},
		{`a NOT IN ('x')`, `(NOT-IN a 'x')`},
		{`a LIKE 'x%' || b`, `(LIKE a (|| 'x%' b))`},
		{`a NOT LIKE 'x!%' ESCAPE '!'`, `(NOT-LIKE a 'x!%' ESCAPE '!')`},
		{`a SIMILAR TO '(x|y)%' || b AND c`, `(AND (SIMILAR a (|| '(x|y)%' b)) c)`},
		{`a NOT SIMILAR TO 'x' ESCAPE '!'`, `(NOT-SIMILAR a 'x' ESCAPE '!')`},
		{`similar + 1`, `(+ similar 1)`},
		{`a = 1 IS NULL`, `(IS (= a 1) NULL)`},
		{`a IS NOT UNKNOWN`, `(IS-NOT a UNKNOWN)`},
		{`a IS JSON VALUE OR a IS NOT JSON OBJECT`, `(OR (IS a JSON) (IS-NOT a JSON OBJECT))`},
		{`a IS DISTINCT FROM b + 1 AND c`, `(AND (IS a DISTINCT FROM (+ b 1)) c)`},
		{`a IS NOT DISTINCT FROM NULL`, `(IS-NOT a DISTINCT FROM NULL)`},
		{`a BETWEEN SYMMETRIC 3 AND 1`, `(BETWEEN-SYMMETRIC a 3 1)`},
		{`a NOT BETWEEN ASYMMETRIC 1 AND 3`, `(NOT-BETWEEN a 1 3)`},
		// primaries
		{`t.a`, `t.a`},
		{"`a b`.`c`", "`a b`.c"},
		{`1.5e3`, `1.5e3`},
		{`'it''s'`, `'it''s'`},
		{`CASE WHEN a THEN b END`, `(CASE (WHEN a b))`},
		{`CASE x WHEN 1 THEN 2 ELSE 3 END`, `(CASE x (WHEN 1 2) (ELSE 3))`},
		{`CASE x WHEN 1, 2 THEN 'a' WHEN 3 THEN 'b' END`, `(CASE x (WHEN 1 2 'a') (WHEN 3 'b'))`},
		{`CAST(a + 1 AS BIGINT NOT NULL)`, `(CAST (+ a 1) BIGINT NOT NULL)`},
		{`TRY_CAST(a AS STRING)`, `(TRY_CAST a STRING)`},
		{`FLOOR(ts TO HOUR) + INTERVAL '1' HOUR`, `(+ (FLOOR ts TO HOUR) INTERVAL '1' HOUR)`},
		{`CEIL(a + 1)`, `(CEIL (+ a 1))`},
		{`OVERLAY(s PLACING 'ab' FROM 2 FOR n + 1)`, `(OVERLAY s 'ab' 2 (+ n 1))`},
		{`OVERLAY(s PLACING 'ab' FROM 2)`, `(OVERLAY s 'ab' 2)`},
		{`EXTRACT(hour FROM ts)`, `(EXTRACT HOUR ts)`},
		{`SUBSTRING(s FROM 1 + 1 FOR 2)`, `(SUBSTRING s (+ 1 1) 2)`},
		{`POSITION('a' IN s)`, `(POSITION 'a' s)`},
		{`POSITION((a IN (1)) IN s)`, `(POSITION (IN a 1) s)`},
		{`TRIM(LEADING 'x' FROM s)`, `(LTRIM s 'x')`},
		{`TRIM(TRAILING FROM s)`, `(RTRIM s)`},
		{`TRIM('x' FROM s)`, `(TRIM s 'x')`},
		{`TRIM(leading)`, `(TRIM leading)`},
		{`CURRENT_TIMESTAMP`, `(CURRENT_TIMESTAMP)`},
		{`count(*)`, `(COUNT *)`},
		{`sum(DISTINCT a)`, `(SUM DISTINCT a)`},
		{`count(*) filter (where a > 1) + 1`, `(+ (COUNT *) FILTER (> a 1) 1)`},
		{`COUNT(DISTINCT a, b) FILTER (WHERE c IN (1, 2))`, `(COUNT DISTINCT a b) FILTER (IN c 1 2)`},
		{`filter(a) + filter`, `(+ (FILTER a) filter)`},
		{`array_agg(a ignore nulls)`, `(ARRAY_AGG a IGNORE NULLS)`},
		{`ARRAY_AGG(DISTINCT a + 1 RESPECT NULLS) FILTER (WHERE b)`, `(ARRAY_AGG DISTINCT (+ a 1) RESPECT NULLS) FILTER b`},
		{`array_agg(a)`, `(ARRAY_AGG a)`},
		{`JSON_ARRAYAGG(a || 'x' NULL ON NULL)`, `(JSON_ARRAYAGG (|| a 'x') NULL ON NULL)`},
		{`json_objectagg(key k value v absent on null)`, `(JSON_OBJECTAGG k v ABSENT ON NULL)`},
		{`JSON_OBJECTAGG(key VALUE value)`, `(JSON_OBJECTAGG key value)`},
		{`JSON_OBJECTAGG(KEY 'a' || k VALUE v * 2)`, `(JSON_OBJECTAGG (|| 'a' k) (* v 2))`},
		{`JSON_OBJECT()`, `(JSON_OBJECT)`},
		{`JSON_OBJECT('K1' VALUE 'V1', KEY 'K2' VALUE x NULL ON NULL)`, `(JSON_OBJECT 'K1' 'V1' 'K2' x NULL ON NULL)`},
		{`JSON_OBJECT(KEY 'k' VALUE JSON_OBJECT(KEY 'j' VALUE 1))`, `(JSON_OBJECT 'k' (JSON_OBJECT 'j' 1))`},
		{`JSON_ARRAY()`, `(JSON_ARRAY)`},
		{`JSON_ARRAY(1, '2', x ABSENT ON NULL)`, `(JSON_ARRAY 1 '2' x ABSENT ON NULL)`},
		{`JSON_ARRAY(NULL ON NULL)`, `(JSON_ARRAY NULL ON NULL)`},
		{`JSON_QUERY(j, '$.a')`, `(JSON_QUERY j '$.a')`},
		{`json_value(j, '$.a' returning int default -1 on empty error on error)`, "JSON_VALUE(j, '$.a' RETURNING INT DEFAULT -1 ON EMPTY ERROR ON ERROR)"},
		{`JSON_VALUE(j, '$.a' NULL ON ERROR)`, "JSON_VALUE(j, '$.a' NULL ON ERROR)"},
		{`JSON_VALUE(j, '$.a' DEFAULT 'x' || y ON ERROR)`, "JSON_VALUE(j, '$.a' DEFAULT 'x' || y ON ERROR)"},
		{`json_query(j, 'lax $' with conditional array wrapper empty object on empty error on error)`, `(JSON_QUERY j 'lax $' WITH CONDITIONAL ARRAY WRAPPER EMPTY OBJECT ON EMPTY ERROR ON ERROR)`},
		{`Left(s, 2)`, `(LEFT s 2)`},
		{`INTERVAL '1' DAY`, `INTERVAL '1' DAY`},
		{`TIMESTAMP '2020-01-01 00:00:00'`, `TIMESTAMP '2020-01-01 00:00:00'`},
		{`timestamp + date`, `(+ timestamp date)`},
		// OVER windows
		{`ROW_NUMBER() OVER ()`, `(OVER ROW_NUMBER)`},
		{`row_number() over (order by ts)`, `(OVER ROW_NUMBER (ORDER ts))`},
		{`RANK() OVER (PARTITION BY a ORDER BY b DESC)`, `(OVER RANK (PARTITION a) (ORDER (DESC b)))`},
		{`DENSE_RANK() OVER (PARTITION BY a, b.c ORDER BY d ASC, e * 2 DESC, f)`,
			`(OVER DENSE_RANK (PARTITION a b.c) (ORDER d (DESC (* e 2)) f))`},
		{`ROW_NUMBER() OVER (PARTITION BY desc ORDER BY desc DESC, asc)`,
			`(OVER ROW_NUMBER (PARTITION desc) (ORDER (DESC desc) asc))`},
		{`ROW_NUMBER() OVER (ORDER BY a) <= 3 AND b`, `(AND (<= (OVER ROW_NUMBER (ORDER a)) 3) b)`},
	}
	for _, tt := range tests {
		e, err := ParseExpr(tt.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tt.in, err)
			continue
		}
		if got := sexpr(e); got != tt.want {
			t.Errorf("ParseExpr(%q)\n got: %s\nwant: %s", tt.in, got, tt.want)
		}
		again, err := ParseExpr(e.String())
		if err != nil || !equalTrees(e, again) {
			t.Errorf("ParseExpr(%q): printed as %s, which parses to %v (err %v)", tt.in, e, again, err)
		}
	}
}

// sexpr writes an expression tree fully parenthesised, operator first.
func sexpr(e Expr) string {
	list := func(head string, es ...Expr) string {
		parts := []string{head}
		for _, e := range es {
			parts = append(parts, sexpr(e))
		}
		return "(" + strings.Join(parts, " ") + ")"
	}
	neg := func(not bool, op string) string {
		if not {
			return "NOT-" + op
		}
		return op
	}
	switch e := e.(type) {
	case *BinaryExpr:
		return list(e.Op, e.Left, e.Right)
	case *UnaryExpr:
		return list(e.Op, e.X)
	case *IsExpr:
		what := e.What
		if e.From != nil {
			what += " " + sexpr(e.From)
		}
		if e.Not {
			return fmt.Sprintf("(IS-NOT %s %s)", sexpr(e.X), what)
		}
		return fmt.Sprintf("(IS %s %s)", sexpr(e.X), what)
	case *BetweenExpr:
		op := "BETWEEN"
		if e.Symmetric {
			op = "BETWEEN-SYMMETRIC"
		}
		return list(neg(e.Not, op), e.X, e.Low, e.High)
	case *InExpr:
		if e.Query != nil {
			return strings.TrimSuffix(list(neg(e.Not, "IN"), e.X), ")") + " {" + e.Query.String() + "})"
		}
		return list(neg(e.Not, "IN"), append([]Expr{e.X}, e.List...)...)
	case *LikeExpr:
		op := "LIKE"
		if e.Similar {
			op = "SIMILAR"
		}
		s := list(neg(e.Not, op), e.X, e.Pattern)
		if e.Escape != "" {
			s = strings.TrimSuffix(s, ")") + " ESCAPE " + quoteString(e.Escape) + ")"
		}
		return s
	case *CaseExpr:
		parts := []string{"CASE"}
		if e.Operand != nil {
			parts = append(parts, sexpr(e.Operand))
		}
		for _, w := range e.Whens {
			parts = append(parts, list("WHEN", append(append([]Expr{w.Cond}, w.Also...), w.Result)...))
		}
		if e.Else != nil {
			parts = append(parts, list("ELSE", e.Else))
		}
		return "(" + strings.Join(parts, " ") + ")"
	case *CastExpr:
		name := "CAST"
		if e.Try {
			name = "TRY_CAST"
		}
		return fmt.Sprintf("(%s %s %s)", name, sexpr(e.X), e.Type)
	case *ExtractExpr:
		return fmt.Sprintf("(EXTRACT %s %s)", e.Unit, sexpr(e.X))
	case *OverExpr:
		parts := []string{"OVER", e.Fn}
		if e.PartitionBy != nil {
			parts = append(parts, list("PARTITION", e.PartitionBy...))
		}
		if e.OrderBy != nil {
			order := []string{"ORDER"}
			for _, o := range e.OrderBy {
				if o.Desc {
					order = append(order, list("DESC", o.Expr))
				} else {
					order = append(order, sexpr(o.Expr))
				}
			}
			parts = append(parts, "("+strings.Join(order, " ")+")")
		}
		return "(" + strings.Join(parts, " ") + ")"
	case *FuncCall:
		head := e.Name
		switch {
		case e.Star:
			head += " *"
		case e.Distinct:
			head += " DISTINCT"
		}
		if e.TimeUnit != "" {
			return strings.TrimSuffix(list(head, e.Args...), ")") + " TO " + e.TimeUnit + ")"
		}
		if e.Clauses != "" {
			return strings.TrimSuffix(list(head, e.Args...), ")") + " " + e.Clauses + ")"
		}
		if e.Returning != nil || e.OnEmpty != nil || e.OnError != nil {
			return e.String() // JSON_VALUE's clauses, as SQL
		}
		if e.OnNull != "" {
			s := strings.TrimSuffix(list(head, e.Args...), ")") + " " + e.OnNull + ")"
			if e.Filter != nil {
				s += " FILTER " + sexpr(e.Filter)
			}
			return s
		}
		if e.Filter != nil {
			return list(head, e.Args...) + " FILTER " + sexpr(e.Filter)
		}
		return list(head, e.Args...)
	}
	return e.String()
}

// TestParseJoins checks the shape of FROM clauses, written as S-expressions: a join is
// (KIND left right condition), a table is name[:alias], a window table is
// (FN table timecol args...)[:alias] and a subquery is (SELECT)[:alias].
func TestParseJoins(t *testing.T) {
	tests := []struct{ in, want string }{
		{`a JOIN b ON x`, `(INNER a b x)`},
		{`a INNER JOIN b ON x`, `(INNER a b x)`},
		{`a LEFT JOIN b ON x`, `(LEFT a b x)`},
		{`a LEFT OUTER JOIN b ON x`, `(LEFT a b x)`},
		{`a RIGHT JOIN b ON x`, `(RIGHT a b x)`},
		{`a RIGHT OUTER JOIN b ON x`, `(RIGHT a b x)`},
		{`a FULL JOIN b ON x`, `(FULL a b x)`},
		{`a full outer join b on x`, `(FULL a b x)`},
		{`a JOIN b ON x JOIN c ON y`, `(INNER (INNER a b x) c y)`},
		{`a x LEFT JOIN b AS y ON x.k = y.k RIGHT JOIN c ON TRUE FULL JOIN d z ON z.k IS NULL`,
			`(FULL (RIGHT (LEFT a:x b:y (= x.k y.k)) c TRUE) d:z (IS z.k NULL))`},
		{`TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) w JOIN (SELECT 1) s ON w.k = s.k`,
			`(INNER (TUMBLE a ts INTERVAL '1' MINUTE):w (SELECT):s (= w.k s.k))`},
		{`(SELECT 1) JOIN TABLE(HOP(TABLE b, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)) ON TRUE`,
			`(INNER (SELECT) (HOP b ts INTERVAL '1' MINUTE INTERVAL '2' MINUTE) TRUE)`},
		{`o JOIN s ON o.id = s.order_id AND o.ts BETWEEN s.ts - INTERVAL '4' HOUR AND s.ts`,
			`(INNER o s (AND (= o.id s.order_id) (BETWEEN o.ts (- s.ts INTERVAL '4' HOUR) s.ts)))`},
		{`a JOIN b ON a.x = b.x AND a.y = b.y AND a.z = b.z`,
			`(INNER a b (AND (AND (= a.x b.x) (= a.y b.y)) (= a.z b.z)))`},
	}
	for _, tt := range tests {
		in := "SELECT * FROM " + tt.in
		script, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		from := script.Stmts[0].(*QueryStmt).Query.From
		if got := fromSexpr(from); got != tt.want {
			t.Errorf("Parse(%q)\n got: %s\nwant: %s", in, got, tt.want)
		}
		checkRoundTrip(t, script.Stmts[0])
	}
}

// fromSexpr writes a FROM clause as TestParseJoins describes.
func fromSexpr(te TableExpr) string {
	withAlias := func(s, alias string) string {
		if alias != "" {
			return s + ":" + alias
		}
		return s
	}
	switch te := te.(type) {
	case *JoinTable:
		return fmt.Sprintf("(%s %s %s %s)", te.Kind, fromSexpr(te.Left), fromSexpr(te.Right), sexpr(te.On))
	case *TableName:
		return withAlias(te.Name, te.Alias)
	case *WindowTable:
		parts := []string{te.Fn, te.Table, te.TimeCol}
		for _, a := range te.Args {
			parts = append(parts, sexpr(a))
		}
		return withAlias("("+strings.Join(parts, " ")+")", te.Alias)
	case *SubqueryTable:
		return withAlias("(SELECT)", te.Alias)
	}
	return te.String()
}

// TestPositions checks that nodes carry the line and column where their text starts.
func TestPositions(t *testing.T) {
	script, err := Parse("SET 'a' = 'b';\nSELECT a,\n\t b + 1 AS x\nFROM t;\n  (SELECT 1);\n" +
		"SELECT\n  RANK() OVER (ORDER BY a)\nFROM t\n  JOIN u ON x\n  LEFT JOIN v ON y")
	if err != nil {
		t.Fatal(err)
	}
	q := script.Stmts[1].(*QueryStmt).Query
	bin := q.Items[1].Expr.(*BinaryExpr)
	got := map[string]Pos{
		"set":    script.Stmts[0].Position(),
		"query":  q.Pos,
		"item0":  q.Items[0].Pos,
		"item1":  q.Items[1].Pos,
		"binary": bin.Pos,
		"one":    bin.Right.Position(),
		"from":   q.From.Position(),
		"paren":  script.Stmts[2].Position(),
		"select": script.Stmts[2].(*QueryStmt).Query.Pos,
	}
	q3 := script.Stmts[3].(*QueryStmt).Query
	outer := q3.From.(*JoinTable)
	got["over"] = q3.Items[0].Expr.Position()
	got["join"] = outer.Pos
	got["inner join"] = outer.Left.Position()
	got["right"] = outer.Right.Position()
	got["on"] = outer.On.Position()
	want := map[string][2]int{
		"set": {1, 1}, "query": {2, 1}, "item0": {2, 8}, "item1": {3, 3}, "binary": {3, 3},
		"one": {3, 7}, "from": {4, 6}, "paren": {5, 3}, "select": {5, 4},
		"over": {7, 3}, "join": {8, 6}, "inner join": {8, 6}, "right": {10, 13}, "on": {10, 18},
	}
	for name, w := range want {
		if p := got[name]; p.Line != w[0] || p.Column != w[1] {
			t.Errorf("%s at %d:%d, want %d:%d", name, p.Line, p.Column, w[0], w[1])
		}
	}
}

// TestParseTree checks a few trees field by field, where printing could hide a difference.
func TestParseTree(t *testing.T) {
	script, err := Parse(`CREATE TABLE t (a INT, ts TIMESTAMP(3), c AS a * 2, ` +
		`WATERMARK FOR ts AS ts, PRIMARY KEY (a) NOT ENFORCED) WITH ('k' = 'it''s')`)
	if err != nil {
		t.Fatal(err)
	}
	ct := withoutPos(script.Stmts[0]).(*CreateTableStmt)
	want := &CreateTableStmt{
		Name: "t",
		Columns: []*ColumnDef{
			{Name: "a", Type: &TypeName{Name: "INT"}},
			{Name: "ts", Type: &TypeName{Name: "TIMESTAMP", Params: []int{3}}},
			{Name: "c", Computed: &BinaryExpr{Op: "*", Left: &Ident{Parts: []string{"a"}},
				Right: &NumberLit{Text: "2"}}},
		},
		Watermark:  &WatermarkDef{Column: "ts", Expr: &Ident{Parts: []string{"ts"}}},
		PrimaryKey: []string{"a"},
		Options:    []*Option{{Key: "k", Value: "it's"}},
	}
	if !reflect.DeepEqual(ct, want) {
		t.Errorf("got  %#v\nwant %#v", ct, want)
	}

	e, err := ParseExpr("`a``b`.c")
	if err != nil {
		t.Fatal(err)
	}
	if parts := e.(*Ident).Parts; !reflect.DeepEqual(parts, []string{"a`b", "c"}) {
		t.Errorf("quoted identifier parts = %q", parts)
	}
}
