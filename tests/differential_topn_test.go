package tests

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// topnQueries run as Top-N, deduplication and window Top-N on streamsql and with
// ROW_NUMBER() OVER on SQLite, over events(k, v, ts) (ts in milliseconds on SQLite).
// Every event time is distinct, and every ORDER BY ends in a column unique within its
// partition, so no tie makes either result depend on arrival order.
var topnQueries = []struct{ name, sql, sqlite string }{
	{"top 3 per key with row number",
		"SELECT k AS k, v AS v, ts AS ts, rownum AS rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, ts) AS rownum FROM e) WHERE rownum <= 3",
		"SELECT k, v, " + tsText("ts") + " AS ts, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, ts) AS rn FROM events) WHERE rn <= 3"},
	{"top 5 per key without row number",
		"SELECT k AS k, v AS v, ts AS ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v, ts DESC) AS rownum FROM e) WHERE rownum < 6",
		"SELECT k, v, " + tsText("ts") + " AS ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v, ts DESC) AS rn FROM events) WHERE rn < 6"},
	{"global top 4 over an aggregate",
		"SELECT k AS k, n AS n, rownum AS rn FROM (SELECT k, n, ROW_NUMBER() OVER (ORDER BY n DESC, k) AS rownum FROM (SELECT k, COUNT(*) AS n FROM e GROUP BY k)) WHERE rownum <= 4",
		"SELECT k, n, rn FROM (SELECT k, n, ROW_NUMBER() OVER (ORDER BY n DESC, k) AS rn FROM (SELECT k, COUNT(*) AS n FROM events GROUP BY k)) WHERE rn <= 4"},
	// MIN falls as rows arrive: rows leave the top 2 and the next group takes their place.
	{"top 2 per key over a falling minimum",
		"SELECT k AS k, m AS m, lo AS lo, rownum AS rn FROM (SELECT k, m, lo, ROW_NUMBER() OVER (PARTITION BY k ORDER BY lo DESC, m) AS rownum FROM (SELECT k, v % 7 AS m, MIN(v) AS lo FROM e GROUP BY k, v % 7)) WHERE rownum <= 2",
		"SELECT k, m, lo, rn FROM (SELECT k, m, lo, ROW_NUMBER() OVER (PARTITION BY k ORDER BY lo DESC, m) AS rn FROM (SELECT k, v % 7 AS m, MIN(v) AS lo FROM events GROUP BY k, v % 7)) WHERE rn <= 2"},
	// The inner Top-N's changes reach the outer one batch by batch: each key's best row
	// is retracted (-D) whenever a better one arrives, and the outer Top-N, which ranks
	// the lowest first, must forget it.
	{"top 3 over each key's top 1",
		"SELECT k AS k, v AS v, ts AS ts, rownum AS rn FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY v, ts) AS rownum FROM " +
			"(SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, ts) AS best FROM e) WHERE best = 1)) WHERE rownum <= 3",
		"SELECT k, v, " + tsText("ts") + " AS ts, rn FROM (SELECT k, v, ts, ROW_NUMBER() OVER (ORDER BY v, ts) AS rn FROM " +
			"(SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, ts) AS best FROM events) WHERE best = 1)) WHERE rn <= 3"},
	{"deduplicate keep first row",
		"SELECT k AS k, v AS v, ts AS ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rownum FROM e) WHERE rownum = 1",
		"SELECT k, v, " + tsText("ts") + " AS ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM events) WHERE rn = 1"},
	{"deduplicate keep last row",
		"SELECT k AS k, v AS v, ts AS ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rownum FROM e) WHERE rownum = 1",
		"SELECT k, v, " + tsText("ts") + " AS ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM events) WHERE rn = 1"},
	{"window top 3 over a window aggregate",
		"SELECT window_start AS ws, k AS k, s AS s, rownum AS rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY s DESC, k) AS rownum FROM " +
			"(SELECT window_start, window_end, k, SUM(v) AS s FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k)) WHERE rownum <= 3",
		"SELECT ws, k, s, rn FROM (SELECT ws, k, s, ROW_NUMBER() OVER (PARTITION BY ws, we ORDER BY s DESC, k) AS rn FROM " +
			"(SELECT ws, we, k, SUM(v) AS s FROM " + tumble(10000) + " GROUP BY ws, we, k)) WHERE rn <= 3"},
	{"window top 2 per key over hopping windows without row number",
		"SELECT window_end AS we, k AS k, n AS n FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY n DESC, m) AS rownum FROM " +
			"(SELECT window_start, window_end, k, v % 5 AS m, COUNT(*) AS n FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k, v % 5)) WHERE rownum <= 2",
		"SELECT we, k, n FROM (SELECT we, k, n, ROW_NUMBER() OVER (PARTITION BY ws, we, k ORDER BY n DESC, m) AS rn FROM " +
			"(SELECT ws, we, k, v % 5 AS m, COUNT(*) AS n FROM " + hop(5000, 10000, 0) + " GROUP BY ws, we, k, v % 5)) WHERE rn <= 2"},
}

// TestDifferentialTopN compares Top-N, deduplication and window Top-N with SQLite over
// 30k events at distinct times, arriving out of order by up to 1 s: less than the
// watermark's 2 s delay, so none is late, yet a key's rows do not arrive in time order.
func TestDifferentialTopN(t *testing.T) {
	t.Parallel() // in-process and independent: it shares the two cores with the other differential tests
	r := rand.New(rand.NewPCG(5, 11))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	type arrival struct {
		event
		at int64 // when it arrives
	}
	arrivals := make([]arrival, sized(30_000))
	for i := range arrivals {
		ts := base + int64(i)*20
		arrivals[i] = arrival{event{fmt.Sprint("k", r.IntN(20)), r.Int64N(100), ts}, ts + r.Int64N(1000)}
	}
	slices.SortStableFunc(arrivals, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
	events := make([]event, len(arrivals))
	for i, a := range arrivals {
		events[i] = a.event
	}
	path, db := loadEvents(t, events)
	for _, q := range topnQueries {
		// Parallelism 2 puts a hash exchange on the PARTITION BY columns before the Top-N
		// (a gather for a global one): a partition's rows must meet in one task.
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, parallelism %d", q.name, parallelism), func(t *testing.T) {
				differentialWindow(t, db, path, q.sql, q.sqlite, parallelism)
			})
		}
	}
}
