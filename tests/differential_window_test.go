package tests

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

// windowQueries run as window aggregates on streamsql and as plain GROUP BYs over
// computed window bounds on SQLite. In SQLite, events(k, v, ts) has ts in milliseconds;
// win(ws, we) expressions are spelled per window kind by the union in sqliteWindows.
var windowQueries = []struct{ name, sql, sqlite string }{
	{"tumble count sum min max by key",
		"SELECT window_start AS ws, window_end AS we, k AS k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k",
		"SELECT ws, we, k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx FROM " + tumble(10000) + " GROUP BY ws, we, k"},
	{"tumble global avg",
		"SELECT window_start AS ws, COUNT(*) AS n, AVG(v) AS av FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end",
		"SELECT ws, COUNT(*) AS n, AVG(v) AS av FROM " + tumble(10000) + " GROUP BY ws, we"},
	{"tumble one minute count distinct",
		"SELECT window_end AS we, k AS k, COUNT(DISTINCT v) AS d FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k",
		"SELECT we, k, COUNT(DISTINCT v) AS d FROM " + tumble(60000) + " GROUP BY ws, we, k"},
	{"tumble with filter",
		"SELECT window_start AS ws, k AS k, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE v > 50 GROUP BY window_start, window_end, k",
		"SELECT ws, k, COUNT(*) AS n FROM " + tumble(5000) + " WHERE v > 50 GROUP BY ws, we, k"},
	{"tumble having",
		"SELECT window_start AS ws, k AS k, SUM(v) AS s FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k HAVING COUNT(*) > 5",
		"SELECT ws, k, SUM(v) AS s FROM " + tumble(10000) + " GROUP BY ws, we, k HAVING COUNT(*) > 5"},
	{"tumble with offset",
		"SELECT window_start AS ws, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '3' SECOND)) GROUP BY window_start, window_end",
		"SELECT ws, COUNT(*) AS n FROM " + hop(10000, 10000, 3000) + " GROUP BY ws, we"},
	{"hop 10 s every 5 s by key",
		"SELECT window_start AS ws, window_end AS we, k AS k, COUNT(*) AS n, SUM(v) AS s FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k",
		"SELECT ws, we, k, COUNT(*) AS n, SUM(v) AS s FROM " + hop(5000, 10000, 0) + " GROUP BY ws, we, k"},
	{"hop 10 s every 2 s",
		"SELECT window_start AS ws, COUNT(*) AS n, MAX(v) AS mx FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end",
		"SELECT ws, COUNT(*) AS n, MAX(v) AS mx FROM " + hop(2000, 10000, 0) + " GROUP BY ws, we"},
	{"cumulate 10 s by 5 s steps",
		"SELECT window_start AS ws, window_end AS we, k AS k, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k",
		"SELECT ws, we, k, COUNT(*) AS n FROM " + cumulate(5000, 10000) + " GROUP BY ws, we, k"},
	{"session by key",
		"SELECT window_start AS ws, window_end AS we, k AS k, COUNT(*) AS n, SUM(v) AS s FROM TABLE(SESSION(TABLE e PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end, k",
		"SELECT " + tsText("MIN(ts)") + " AS ws, " + tsText("MAX(ts) + 1000") + " AS we, k, COUNT(*) AS n, SUM(v) AS s FROM " + sessions(1000) + " GROUP BY k, sid"},
	{"cascading: tumble max and sum of per-key counts",
		"SELECT ws, MAX(n) AS mx, SUM(n) AS total FROM (SELECT window_start AS ws, window_end AS we, k, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k) GROUP BY ws, we",
		"SELECT ws, MAX(n) AS mx, SUM(n) AS total FROM (SELECT ws, we, k, COUNT(*) AS n FROM " + tumble(10000) + " GROUP BY ws, we, k) GROUP BY ws, we"},
	{"window join of hop aggregates: the hottest keys (Nexmark q5's shape)",
		"SELECT a.ws AS ws, a.k AS k, a.n AS n FROM (SELECT window_start AS ws, window_end AS we, k, COUNT(*) AS n FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k) a " +
			"JOIN (SELECT ws, we, MAX(n) AS mx FROM (SELECT window_start AS ws, window_end AS we, COUNT(*) AS n FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k) GROUP BY ws, we) m " +
			"ON a.ws = m.ws AND a.we = m.we AND a.n >= m.mx",
		"SELECT a.ws, a.k, a.n FROM (SELECT ws, we, k, COUNT(*) AS n FROM " + hop(2000, 10000, 0) + " GROUP BY ws, we, k) a " +
			"JOIN (SELECT ws, we, MAX(n) AS mx FROM (SELECT ws, we, COUNT(*) AS n FROM " + hop(2000, 10000, 0) + " GROUP BY ws, we, k) GROUP BY ws, we) m " +
			"ON a.ws = m.ws AND a.we = m.we AND a.n >= m.mx"},
	{"window left join of tumble aggregates with renamed bounds (Nexmark q8's shape)",
		"SELECT a.s AS s, a.k AS k, a.n AS n, b.big AS big FROM (SELECT k, COUNT(*) AS n, window_start AS s, window_end AS e FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end) a " +
			"LEFT JOIN (SELECT k, COUNT(*) AS big, window_start AS s, window_end AS e FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE v > 90 GROUP BY k, window_start, window_end) b " +
			"ON a.k = b.k AND a.s = b.s AND a.e = b.e",
		"SELECT a.s, a.k, a.n, b.big FROM (SELECT k, COUNT(*) AS n, ws AS s, we AS e FROM " + tumble(5000) + " GROUP BY k, ws, we) a " +
			"LEFT JOIN (SELECT k, COUNT(*) AS big, ws AS s, we AS e FROM " + tumble(5000) + " WHERE v > 90 GROUP BY k, ws, we) b " +
			"ON a.k = b.k AND a.s = b.s AND a.e = b.e"},
	{"cumulate 1 min by 20 s steps avg",
		"SELECT window_end AS we, AVG(v) AS av FROM TABLE(CUMULATE(TABLE e, DESCRIPTOR(ts), INTERVAL '20' SECOND, INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
		"SELECT we, AVG(v) AS av FROM " + cumulate(20000, 60000) + " GROUP BY ws, we"},
}

// ts formats a millisecond expression as streamsql prints TIMESTAMP(3).
func tsText(ms string) string {
	return fmt.Sprintf("strftime('%%Y-%%m-%%d %%H:%%M:%%f', (%s) / 1000.0, 'unixepoch')", ms)
}

func tumble(size int64) string { return hop(size, size, 0) }

// hop is a subquery of every event in each of its windows, with ws and we as text.
func hop(slide, size, offset int64) string {
	var parts []string
	for i := int64(0); i < size/slide; i++ {
		start := fmt.Sprintf("(ts - (((ts - %d) %% %d) + %d) %% %d - %d)", offset, slide, slide, slide, i*slide)
		parts = append(parts, fmt.Sprintf("SELECT k, v, %s AS ws, %s AS we FROM events", tsText(start), tsText(start+fmt.Sprintf(" + %d", size))))
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ")"
}

// sessions numbers each key's sessions: events no more than gap apart share one.
func sessions(gap int64) string {
	return fmt.Sprintf(`(SELECT k, v, ts, SUM(brk) OVER (PARTITION BY k ORDER BY ts ROWS UNBOUNDED PRECEDING) AS sid
		FROM (SELECT k, v, ts, CASE WHEN ts - LAG(ts) OVER (PARTITION BY k ORDER BY ts) <= %d THEN 0 ELSE 1 END AS brk FROM events))`, gap)
}

// cumulate is the events in each cumulating window that holds them.
func cumulate(step, size int64) string {
	var parts []string
	for i := int64(1); i <= size/step; i++ {
		start := fmt.Sprintf("(ts - ts %% %d)", size)
		end := fmt.Sprintf("%s + %d", start, i*step)
		parts = append(parts, fmt.Sprintf("SELECT k, v, %s AS ws, %s AS we FROM events WHERE ts < %s", tsText(start), tsText(end), end))
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ")"
}

// TestDifferentialWindows compares window aggregates with SQLite over 30k events in
// event-time order but shuffled within the watermark's 2 s delay, so none is late.
func TestDifferentialWindows(t *testing.T) {
	t.Parallel() // in-process and independent: it shares the two cores with the other differential tests
	r := rand.New(rand.NewPCG(21, 7))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	events := make([]event, sized(30_000))
	for i := range events {
		events[i] = event{fmt.Sprint("k", r.IntN(20)), r.Int64N(100), base + int64(i)*20 - r.Int64N(1500)}
	}
	path, db := loadEvents(t, events)
	for _, q := range windowQueries {
		// Parallelism 2 puts a hash exchange before the window aggregate: a window's rows
		// (a slice's, a session's) must meet in one task.
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, parallelism %d", q.name, parallelism), func(t *testing.T) {
				differentialWindow(t, db, path, q.sql, q.sqlite, parallelism)
			})
		}
	}
}

// event is a row of table e: ts in milliseconds.
type event struct {
	k     string
	v, ts int64
}

// loadEvents writes events, in order, as the JSON lines file of table e, and into the
// table events(k, v, ts) of an in-memory SQLite database, which the test closes.
func loadEvents(t *testing.T, events []event) (path string, db *sql.DB) {
	var lines bytes.Buffer
	for _, e := range events {
		fmt.Fprintf(&lines, `{"k":%q,"v":%d,"ts":%q}`+"\n", e.k, e.v, time.UnixMilli(e.ts).UTC().Format("2006-01-02 15:04:05.000"))
	}
	path = filepath.Join(t.TempDir(), "events.json")
	if err := os.WriteFile(path, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE events (k TEXT, v INTEGER, ts INTEGER)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if _, err := tx.Exec("INSERT INTO events VALUES (?, ?, ?)", e.k, e.v, e.ts); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path, db
}

// differentialWindow runs one query on streamsql with the given parallelism and
// compares its rows with SQLite's.
func differentialWindow(t *testing.T, db *sql.DB, path, query, sqliteQuery string, parallelism int) {
	ddl := fmt.Sprintf(`SET 'parallelism.default' = '%d';
		CREATE TABLE e (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
		WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');`, parallelism, path)
	differentialRun(t, db, ddl, query, sqliteQuery)
}

// differentialRun runs ddl and query on streamsql, which must drop no late rows, and
// compares the query's rows with those of sqliteQuery.
func differentialRun(t *testing.T, db *sql.DB, ddl, query, sqliteQuery string) {
	want := sqliteRows(t, db, sqliteQuery)
	if len(want) == 0 {
		t.Fatal("the oracle returned no rows, so the case tests nothing")
	}
	compareRows(t, runOnTime(t, ddl, query), want)
}

// runOnTime runs ddl and query on streamsql, which must drop no late rows, and returns
// the query's rows in the order they were printed.
func runOnTime(t *testing.T, ddl, query string) result {
	t.Helper()
	var out, errs bytes.Buffer
	s, err := streamsql.NewSession(streamsql.Config{Out: &out, Err: &errs, Format: "json", Location: time.UTC, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(context.Background(), ddl+query+";"); err != nil {
		t.Fatalf("streamsql: %v\n%s", err, errs.String())
	}
	if strings.Contains(errs.String(), "late") {
		t.Fatalf("rows were late: %s", errs.String())
	}
	var got result
	dec := json.NewDecoder(&out)
	for dec.More() {
		m := map[string]any{}
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	return got
}
