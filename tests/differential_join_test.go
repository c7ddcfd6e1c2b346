package tests

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// joinQueries run on streamsql and SQLite over the same two tables l(id, k, v, ts) and
// r(id, k, w, ts). In SQLite ts is in milliseconds, and ws is the start of its 5-second
// window; both tables are indexed by k and by (k, ws), so that SQLite's outer joins do
// not compare every pair of rows.
var joinQueries = []struct{ name, sql, sqlite string }{
	{"cross",
		"SELECT a.id AS lid, b.id AS rid FROM (SELECT id FROM l WHERE id < 200) a CROSS JOIN (SELECT id FROM r WHERE id < 150) b", ""},
	{"comma without condition",
		"SELECT a.id AS lid, b.id AS rid FROM (SELECT id FROM l WHERE id < 100) a, (SELECT id, k FROM r WHERE id < 100) b WHERE b.k IS NULL", ""},
	{"left, no equal keys",
		"SELECT a.id AS lid, b.id AS rid FROM (SELECT id, v FROM l WHERE id < 300) a LEFT JOIN (SELECT id, w FROM r WHERE id < 300) b ON a.v > b.w + 95", ""},
	{"full, no equal keys",
		"SELECT a.id AS lid, b.id AS rid FROM (SELECT id, v FROM l WHERE id < 300) a FULL JOIN (SELECT id, w FROM r WHERE id < 300) b ON a.v + b.w = 3", ""},
	{"inner",
		"SELECT l.id AS lid, r.id AS rid FROM l JOIN r ON l.k = r.k", ""},
	{"left",
		"SELECT l.id AS lid, r.id AS rid FROM l LEFT JOIN r ON l.k = r.k", ""},
	{"right",
		"SELECT l.id AS lid, r.id AS rid FROM l RIGHT JOIN r ON l.k = r.k", ""},
	{"full with a condition on the pairs",
		"SELECT l.id AS lid, r.id AS rid FROM l FULL JOIN r ON l.k = r.k AND l.v > r.w", ""},
	// Conditions on one side, which move below the join where that keeps the result.
	{"left, one side's conditions in ON and WHERE",
		"SELECT l.id AS lid, r.id AS rid FROM l LEFT JOIN r ON l.k = r.k AND r.w > 50 AND l.v > 30 WHERE l.id % 2 = 0", ""},
	{"right, WHERE on the padded side",
		"SELECT l.id AS lid, r.id AS rid FROM l RIGHT JOIN r ON l.k = r.k AND r.w < 40 AND l.v < 70 WHERE l.v IS NULL OR l.v > 20", ""},
	{"full, one side's conditions",
		"SELECT l.id AS lid, r.id AS rid FROM l FULL JOIN r ON l.k = r.k AND l.v > 50 AND r.w > 50 WHERE l.id % 3 <> 0 OR r.id IS NULL", ""},
	{"inner over an aggregate, one side's conditions",
		"SELECT a.k AS k, a.n AS n, r.id AS rid FROM (SELECT k, COUNT(*) AS n FROM l GROUP BY k) a JOIN r ON a.k = r.k AND a.n > 8 WHERE r.w < 70", ""},
	{"two keys",
		"SELECT l.id AS lid, r.id AS rid FROM l JOIN r ON l.k = r.k AND l.v % 3 = r.w % 3",
		"SELECT l.id AS lid, r.id AS rid FROM l JOIN r ON l.k = r.k AND l.v % 3 = r.w % 3"},
	{"join an aggregate",
		"SELECT a.k AS k, a.n AS n, r.id AS rid FROM (SELECT k, COUNT(*) AS n FROM l GROUP BY k) a JOIN r ON a.k = r.k", ""},
	{"left join an aggregate whose rows retract",
		"SELECT r.id AS rid, a.n AS n FROM r LEFT JOIN (SELECT k, COUNT(*) AS n FROM l GROUP BY k HAVING COUNT(*) < 10) a ON r.k = a.k", ""},
	{"aggregate a left join",
		"SELECT l.k AS k, COUNT(*) AS n, COUNT(r.id) AS matched, SUM(r.w) AS s FROM l LEFT JOIN r ON l.k = r.k GROUP BY l.k", ""},
	// An operator keyed as the join is runs in the join's task, without an exchange:
	// by either key of an inner join, by the kept side's of an outer one, and not by
	// the padded side's, whose NULLs are in every task.
	{"aggregate an inner join by the right key",
		"SELECT r.k AS k, COUNT(*) AS n, SUM(l.v) AS s FROM l JOIN r ON l.k = r.k GROUP BY r.k", ""},
	{"aggregate a left join by the padded side's key",
		"SELECT b.k AS k, COUNT(*) AS n FROM l LEFT JOIN (SELECT k FROM r WHERE w < 10) b ON l.k = b.k GROUP BY b.k", ""},
	{"top 1 per key of a join",
		"SELECT k, lid, rid FROM (SELECT l.k AS k, l.id AS lid, r.id AS rid, ROW_NUMBER() OVER (PARTITION BY l.k ORDER BY l.v + r.w DESC, l.id, r.id) AS rn FROM l JOIN r ON l.k = r.k) WHERE rn = 1", ""},
	{"top 1 per key over a join, ranked by columns it does not select (q9's shape)",
		"SELECT k, lid, rid FROM (SELECT l.k AS k, l.id AS lid, l.v AS v, r.id AS rid, r.w AS w, ROW_NUMBER() OVER (PARTITION BY l.k ORDER BY r.w DESC, r.id, l.id) AS rn FROM l JOIN r ON l.k = r.k AND r.w >= l.v) WHERE rn = 1", ""},
	{"top 2 per key over a join, filtered by a column it does not select",
		"SELECT k, rid FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY w DESC, rid, lid) AS rn FROM " +
			"(SELECT l.k AS k, l.v AS v, l.id AS lid, r.id AS rid, r.w AS w, l.v + r.w AS vw FROM l JOIN r ON l.k = r.k)) WHERE rn <= 2 AND v > 50", ""},
	{"interval",
		"SELECT l.id AS lid, r.id AS rid FROM l JOIN r ON l.k = r.k AND r.ts BETWEEN l.ts - INTERVAL '1' SECOND AND l.ts + INTERVAL '2' SECOND",
		"SELECT l.id AS lid, r.id AS rid FROM l JOIN r ON l.k = r.k AND r.ts BETWEEN l.ts - 1000 AND l.ts + 2000"},
	{"interval, one side's conditions",
		"SELECT l.id AS lid, r.id AS rid FROM l JOIN r ON l.k = r.k AND r.ts BETWEEN l.ts - INTERVAL '1' SECOND AND l.ts + INTERVAL '2' SECOND AND l.v > 50 WHERE r.w < 70",
		"SELECT l.id AS lid, r.id AS rid FROM l JOIN r ON l.k = r.k AND r.ts BETWEEN l.ts - 1000 AND l.ts + 2000 AND l.v > 50 WHERE r.w < 70"},
	{"interval left, strict bounds",
		"SELECT l.id AS lid, r.id AS rid FROM l LEFT JOIN r ON l.k = r.k AND r.ts > l.ts AND r.ts < l.ts + INTERVAL '3' SECOND",
		"SELECT l.id AS lid, r.id AS rid FROM l LEFT JOIN r ON l.k = r.k AND r.ts > l.ts AND r.ts < l.ts + 3000"},
	{"interval full",
		"SELECT l.id AS lid, r.id AS rid FROM l FULL JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - INTERVAL '0.5' SECOND AND r.ts + INTERVAL '0.5' SECOND",
		"SELECT l.id AS lid, r.id AS rid FROM l FULL JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - 500 AND r.ts + 500"},
	// q7's shape: a regular join whose WHERE bounds the left time by a window's end;
	// the left rows expire by the watermark, and the result is the regular join's.
	{"regular, bounded by a window's end",
		"SELECT l.id AS lid, m.we AS we FROM l JOIN (SELECT MAX(v) AS mv, window_end AS we FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end) m " +
			"ON l.v = m.mv WHERE l.ts BETWEEN m.we - INTERVAL '5' SECOND AND m.we",
		"SELECT l.id AS lid, " + tsText("m.we") + " AS we FROM l JOIN (SELECT MAX(v) AS mv, ws + 5000 AS we FROM l GROUP BY ws) m " +
			"ON l.v = m.mv WHERE l.ts BETWEEN m.we - 5000 AND m.we"},
	{"window inner",
		"SELECT a.window_start AS ws, a.id AS lid, b.id AS rid FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND))) a " +
			"JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND))) b " +
			"ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.k = b.k",
		"SELECT " + tsText("l.ws") + " AS ws, l.id AS lid, r.id AS rid FROM l JOIN r ON l.ws = r.ws AND l.k = r.k"},
	{"window full",
		"SELECT a.window_end AS lwe, b.window_end AS rwe, a.id AS lid, b.id AS rid FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND))) a " +
			"FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND))) b " +
			"ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.k = b.k",
		"SELECT " + tsText("l.ws + 5000") + " AS lwe, " + tsText("r.ws + 5000") + " AS rwe, l.id AS lid, r.id AS rid " +
			"FROM l FULL JOIN r ON l.ws = r.ws AND l.k = r.k"},
}

// TestDifferentialJoins runs every join query at parallelism 1 and 2 over two tables of
// events slightly out of order (within their watermark delay), some with NULL keys.
func TestDifferentialJoins(t *testing.T) {
	t.Parallel() // in-process and independent: it shares the two cores with the other differential tests
	r := rand.New(rand.NewPCG(5, 11))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var ddl string
	for _, table := range []struct{ name, value string }{{"l", "v"}, {"r", "w"}} {
		for _, stmt := range []string{
			"CREATE TABLE %[1]s (id INTEGER, k TEXT, %[2]s INTEGER, ts INTEGER, ws INTEGER)",
			"CREATE INDEX %[1]s_k ON %[1]s (k)",
			"CREATE INDEX %[1]s_k_ws ON %[1]s (k, ws)",
		} {
			if _, err := db.Exec(fmt.Sprintf(stmt, table.name, table.value)); err != nil {
				t.Fatal(err)
			}
		}
		var lines bytes.Buffer
		tx, _ := db.Begin()
		for i := range sized(3000) {
			var k any = fmt.Sprint("k", r.IntN(300))
			if r.IntN(30) == 0 {
				k = nil
			}
			v, ts := r.Int64N(100), base+int64(i)*10-r.Int64N(1500)
			fmt.Fprintf(&lines, `{"id":%d,"k":%s,"%s":%d,"ts":%q}`+"\n", i, jsonString(k), table.value, v, time.UnixMilli(ts).UTC().Format("2006-01-02 15:04:05.000"))
			if _, err := tx.Exec(fmt.Sprintf("INSERT INTO %s VALUES (?, ?, ?, ?, ?)", table.name), i, k, v, ts, ts-ts%5000); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, table.name+".json")
		if err := os.WriteFile(path, lines.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		ddl += fmt.Sprintf(`CREATE TABLE %s (id BIGINT, k STRING, %s BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
			WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');`, table.name, table.value, path)
	}
	for _, q := range joinQueries {
		sqliteQuery := q.sqlite
		if sqliteQuery == "" {
			sqliteQuery = q.sql
		}
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, parallelism %d", q.name, parallelism), func(t *testing.T) {
				differentialRun(t, db, fmt.Sprintf("SET 'parallelism.default' = '%d';", parallelism)+ddl, q.sql, sqliteQuery)
			})
		}
	}
}

func jsonString(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", v)
}
