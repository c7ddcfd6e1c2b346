package tests

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// overQueries run as OVER aggregates on streamsql and as window functions on SQLite,
// where events(k, v, ts) has ts in milliseconds, so that RANGE frames are numbers.
var overQueries = []struct{ name, sql, sqlite string }{
	{"rows 5 preceding by key",
		"SELECT k AS k, ts AS ts, v AS v, SUM(v) OVER w AS s, COUNT(*) OVER w AS n, MIN(v) OVER w AS mn, MAX(v) OVER w AS mx, FIRST_VALUE(v) OVER w AS f " +
			"FROM e WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW)",
		"SELECT k, " + tsText("ts") + " AS ts, v, SUM(v) OVER w AS s, COUNT(*) OVER w AS n, MIN(v) OVER w AS mn, MAX(v) OVER w AS mx, FIRST_VALUE(v) OVER w AS f " +
			"FROM events WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW)"},
	{"rows unbounded preceding by key",
		"SELECT k AS k, ts AS ts, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s, " +
			"AVG(CAST(v AS DOUBLE)) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS av FROM e",
		"SELECT k, " + tsText("ts") + " AS ts, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s, " +
			"AVG(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS av FROM events"},
	{"rows lag by key",
		"SELECT k AS k, ts AS ts, LAG(v) OVER (PARTITION BY k ORDER BY ts) AS p1, LAG(v, 3, -1) OVER (PARTITION BY k ORDER BY ts) AS p3 FROM e",
		"SELECT k, " + tsText("ts") + " AS ts, LAG(v) OVER (PARTITION BY k ORDER BY ts) AS p1, LAG(v, 3, -1) OVER (PARTITION BY k ORDER BY ts) AS p3 FROM events"},
	{"rows 3 preceding, no partition, filtered",
		"SELECT ts AS ts, MAX(v) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS mx, COUNT(v) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS n FROM e WHERE v > 30",
		"SELECT " + tsText("ts") + " AS ts, MAX(v) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS mx, COUNT(v) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS n FROM events WHERE v > 30"},
	{"range 1 second preceding by key, with peers",
		"SELECT k AS k, ts AS ts, v AS v, SUM(v) OVER w AS s, COUNT(*) OVER w AS n, MIN(v) OVER w AS mn " +
			"FROM e WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW)",
		"SELECT k, " + tsText("ts") + " AS ts, v, SUM(v) OVER w AS s, COUNT(*) OVER w AS n, MIN(v) OVER w AS mn " +
			"FROM events WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN 1000 PRECEDING AND CURRENT ROW)"},
	{"range unbounded (the default frame) by key, with peers",
		"SELECT k AS k, ts AS ts, v AS v, SUM(v) OVER (PARTITION BY k ORDER BY ts) AS s, MAX(v) OVER (PARTITION BY k ORDER BY ts) AS mx FROM e",
		"SELECT k, " + tsText("ts") + " AS ts, v, SUM(v) OVER (PARTITION BY k ORDER BY ts) AS s, MAX(v) OVER (PARTITION BY k ORDER BY ts) AS mx FROM events"},
	{"range 500 ms preceding, no partition",
		"SELECT ts AS ts, v AS v, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '0.5' SECOND PRECEDING AND CURRENT ROW) AS n FROM e",
		"SELECT " + tsText("ts") + " AS ts, v, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN 500 PRECEDING AND CURRENT ROW) AS n FROM events"},
}

// TestDifferentialOver compares OVER aggregates with SQLite's window functions over 20k
// events shuffled within the watermark's 2 s delay, so none is late, at parallelism 1
// and 2, and checks that each key's rows come out in time order. ROWS frames run over
// times unique per event, so that the rows before one are the same in both engines
// (rows of one time are taken by arrival in streamsql, in no set order in SQLite);
// RANGE frames over times on a 100 ms grid, so that many rows have peers.
func TestDifferentialOver(t *testing.T) {
	t.Parallel() // in-process and independent
	r := rand.New(rand.NewPCG(5, 11))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	unique := make([]event, sized(20_000))
	grid := make([]event, sized(20_000))
	used := map[int64]bool{}
	for i := range unique {
		ts := base + int64(i)*20 - r.Int64N(1500)
		for used[ts] {
			ts++
		}
		used[ts] = true
		k := fmt.Sprint("k", r.IntN(50))
		unique[i] = event{k, r.Int64N(100), ts}
		grid[i] = event{k, r.Int64N(100), (base + int64(i)*20 - r.Int64N(1500)) / 100 * 100}
	}
	uniquePath, uniqueDB := loadEvents(t, unique)
	gridPath, gridDB := loadEvents(t, grid)
	for _, q := range overQueries {
		path, db := uniquePath, uniqueDB
		if q.name[:5] == "range" {
			path, db = gridPath, gridDB
		}
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, parallelism %d", q.name, parallelism), func(t *testing.T) {
				want := sqliteRows(t, db, q.sqlite)
				if len(want) < len(unique)/2 {
					t.Fatalf("the oracle returned %d rows, want one per event (that the WHERE keeps)", len(want))
				}
				ddl := fmt.Sprintf(`SET 'parallelism.default' = '%d';
					CREATE TABLE e (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
					WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');`, parallelism, path)
				got := runOnTime(t, ddl, q.sql)
				last := map[any]string{}
				for i, row := range got {
					ts := row["ts"].(string)
					if prev, ok := last[row["k"]]; ok && ts < prev {
						t.Fatalf("row %d of key %v at %s comes after one at %s", i, row["k"], ts, prev)
					}
					last[row["k"]] = ts
				}
				compareRows(t, got, want)
			})
		}
	}
}
