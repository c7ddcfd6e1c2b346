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

// subqueryQueries run on streamsql and SQLite over the same two tables l(id, k, v) and
// r(id, k, w, ts), both with NULL keys and r with NULL values, so that NOT IN meets
// SQL's NULL rules per key. Rows are slightly out of order in ts (within the watermark's
// delay); in SQLite ts is in milliseconds and ws the start of its 5-second window.
var subqueryQueries = []struct{ name, sql, sqlite string }{
	{"in", "SELECT id FROM l WHERE k IN (SELECT k FROM r WHERE w > 50)", ""},
	{"not in, no NULL on the right", "SELECT id, k FROM l WHERE k NOT IN (SELECT k FROM r WHERE w > 90 AND k IS NOT NULL)", ""},
	{"not in correlated, NULLs in some keys", "SELECT id FROM l WHERE v NOT IN (SELECT w FROM r WHERE r.k = l.k)", ""},
	{"in correlated", "SELECT id FROM l WHERE v IN (SELECT w FROM r WHERE r.k = l.k)", ""},
	{"exists correlated with a condition", "SELECT id FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.w > l.v)", ""},
	{"not exists correlated", "SELECT id, v FROM l WHERE NOT EXISTS (SELECT * FROM r WHERE r.k = l.k AND r.w < 20)", ""},
	{"exists uncorrelated", "SELECT id FROM l WHERE v < 3 AND EXISTS (SELECT 1 FROM r WHERE w = 99)", ""},
	{"row in", "SELECT id FROM l WHERE (k, v % 5) IN (SELECT k, w % 5 FROM r)", ""},
	{"in an aggregate whose rows retract", "SELECT id FROM l WHERE k IN (SELECT k FROM r GROUP BY k HAVING COUNT(*) BETWEEN 3 AND 5)", ""},
	{"not in an aggregate", "SELECT id, k FROM l WHERE k NOT IN (SELECT k FROM r WHERE k IS NOT NULL GROUP BY k HAVING COUNT(*) > 6)", ""},
	{"updating left", "SELECT k, n FROM (SELECT k, COUNT(*) AS n FROM l GROUP BY k) a WHERE k IN (SELECT k FROM r WHERE w < 10) AND NOT EXISTS (SELECT 1 FROM r WHERE r.k = a.k AND r.w > 95)", ""},
	{"scalar", "SELECT id, v - (SELECT MAX(w) FROM r) AS d FROM l WHERE v > (SELECT AVG(w) FROM r) + 20", ""},
	{"scalar correlated aggregates", "SELECT id, (SELECT COUNT(*) FROM r WHERE r.k = l.k AND r.w > 50) AS n, (SELECT SUM(w) FROM r WHERE r.k = l.k) AS s FROM l WHERE v < (SELECT AVG(w) FROM r WHERE r.k = l.k)", ""},
	{"scalar correlated row", "SELECT id, (SELECT w FROM r WHERE r.id = l.id + 7) AS w FROM l", ""},
	{"window semi",
		"SELECT a.id AS id FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND)) a WHERE a.k IN (SELECT b.k FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND)) b WHERE b.window_start = a.window_start AND b.window_end = a.window_end)",
		"SELECT id FROM l WHERE k IN (SELECT k FROM r WHERE r.ws = l.ws)"},
	{"window anti",
		"SELECT a.id AS id FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND)) a WHERE NOT EXISTS (SELECT 1 FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND)) b WHERE b.window_start = a.window_start AND b.window_end = a.window_end AND b.k = a.k AND b.w > a.v)",
		"SELECT id FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.ws = l.ws AND r.k = l.k AND r.w > l.v)"},
}

// TestDifferentialSubqueries runs every subquery at parallelism 1 and 2.
func TestDifferentialSubqueries(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(13, 17))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var ddl string
	for _, table := range []struct {
		name, value string
		nullValues  bool
	}{{"l", "v", false}, {"r", "w", true}} {
		if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (id INTEGER, k TEXT, %s INTEGER, ts INTEGER, ws INTEGER)", table.name, table.value)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(fmt.Sprintf("CREATE INDEX %[1]s_k ON %[1]s (k)", table.name)); err != nil {
			t.Fatal(err)
		}
		var lines bytes.Buffer
		tx, _ := db.Begin()
		for i := range sized(2000) {
			var k any = fmt.Sprint("k", r.IntN(250))
			if r.IntN(30) == 0 {
				k = nil
			}
			var v any = r.Int64N(100)
			if table.nullValues && r.IntN(40) == 0 {
				v = nil
			}
			ts := base + int64(i)*10 - r.Int64N(1500)
			fmt.Fprintf(&lines, `{"id":%d,"k":%s,"%s":%s,"ts":%q}`+"\n", i, jsonString(k), table.value, jsonNumber(v), time.UnixMilli(ts).UTC().Format("2006-01-02 15:04:05.000"))
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
	for _, q := range subqueryQueries {
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, parallelism %d", q.name, parallelism), func(t *testing.T) {
				sqliteQuery := q.sqlite
				if sqliteQuery == "" {
					sqliteQuery = q.sql
				}
				differentialRun(t, db, fmt.Sprintf("SET 'parallelism.default' = '%d';", parallelism)+ddl, q.sql, sqliteQuery)
			})
		}
	}
}

func jsonNumber(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(v)
}
