package tests

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProctimeWindowCrash SIGKILLs a real streamsql 10 times while it counts rows in
// 200 ms windows of processing time into the two-phase-commit filesystem sink. Which
// window a row falls in follows the clock, so runs differ; what must not is that every
// row is counted once: each key's counts add up to its rows in a failure-free run, no
// window is written twice, and every window is 200 ms aligned to 200 ms.
func TestProctimeWindowCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	run := func(kills int, r *rand.Rand) []string {
		out := filepath.Join(t.TempDir(), "out")
		create := fmt.Sprintf(`CREATE TABLE out (k BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv')`, out)
		script := strings.Replace(sinkJob(create, `INSERT INTO out SELECT k % 5, window_start, window_end, COUNT(*)
  FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(proc), INTERVAL '0.2' SECOND)) GROUP BY k % 5, window_start, window_end`),
			"v BIGINT)", "v BIGINT, proc AS PROCTIME())", 1)
		runUntilDone(t, writeScript(t, script), t.TempDir(), kills, r)
		return committedRows(out)
	}
	totals := func(rows []string) map[string]int64 {
		t.Helper()
		sums := map[string]int64{}
		windows := map[string]bool{}
		for _, row := range rows {
			f := strings.Split(row, ",")
			if len(f) != 4 {
				t.Fatalf("row %q", row)
			}
			const layout = "2006-01-02 15:04:05.000"
			ws, err1 := time.Parse(layout, f[1])
			we, err2 := time.Parse(layout, f[2])
			n, err3 := strconv.ParseInt(f[3], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil {
				t.Fatalf("row %q", row)
			}
			if we.Sub(ws) != 200*time.Millisecond || ws.UnixMilli()%200 != 0 {
				t.Errorf("window %s to %s is not 200 ms aligned to 200 ms", f[1], f[2])
			}
			if key := f[0] + " " + f[1]; windows[key] {
				t.Errorf("window %s of key %s written twice", f[1], f[0])
			} else {
				windows[key] = true
			}
			sums[f[0]] += n
		}
		return sums
	}
	want := totals(run(0, nil))
	var all int64
	for _, n := range want {
		all += n
	}
	if len(want) != 5 || all != 30000 {
		t.Fatalf("failure-free run counted %d rows over keys %v", all, want)
	}
	got := totals(run(10, rand.New(rand.NewPCG(5, 12))))
	for k, n := range want {
		if got[k] != n {
			t.Errorf("key %s: counted %d rows after crashes, want %d", k, got[k], n)
		}
	}
}

// TestProctimeOverDedupCrash SIGKILLs a real streamsql 10 times while an OVER aggregate
// and a deduplication order by the processing-time attribute of a table that also has
// a WATERMARK, into two-phase-commit filesystem sinks. Arrival order follows the clock
// and the two source tasks, so which row comes first differs between runs; what must
// not: a key's running counts are 1 to its number of rows, each once (a lost or
// doubled OVER state repeats or skips one), and every key's first row is written once.
func TestProctimeOverDedupCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	counts, firsts := filepath.Join(t.TempDir(), "counts"), filepath.Join(t.TempDir(), "firsts")
	create := fmt.Sprintf(`CREATE TABLE counts (k BIGINT, id BIGINT, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE firsts (k BIGINT, id BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO counts SELECT k, id, COUNT(*) OVER (PARTITION BY k ORDER BY p ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM gen`,
		counts, firsts)
	script := strings.Replace(sinkJob(create, `INSERT INTO firsts SELECT k, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY p) AS rn FROM gen) WHERE rn = 1`),
		"v BIGINT)", "v BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), p AS PROCTIME(), WATERMARK FOR ts AS ts)", 1)
	runUntilDone(t, writeScript(t, script), t.TempDir(), 10, rand.New(rand.NewPCG(8, 13)))

	seen := map[string]map[int64]bool{} // key: the counts written
	ids := map[string]bool{}
	for _, row := range committedRows(counts) {
		f := strings.Split(row, ",")
		c, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if len(f) != 3 || err != nil {
			t.Fatalf("counts row %q", row)
		}
		if ids[f[1]] {
			t.Errorf("row %s counted twice", f[1])
		}
		ids[f[1]] = true
		if seen[f[0]] == nil {
			seen[f[0]] = map[int64]bool{}
		}
		if seen[f[0]][c] {
			t.Errorf("key %s: count %d written twice", f[0], c)
		}
		seen[f[0]][c] = true
	}
	if len(ids) != 30000 {
		t.Errorf("%d rows counted, want 30000", len(ids))
	}
	for k, cs := range seen {
		for c := int64(1); c <= int64(len(cs)); c++ {
			if !cs[c] {
				t.Errorf("key %s: %d rows but no count %d", k, len(cs), c)
				break
			}
		}
	}
	first := map[string]int{}
	for _, row := range committedRows(firsts) {
		first[strings.Split(row, ",")[0]]++
	}
	for k := range seen {
		if first[k] != 1 {
			t.Errorf("key %s: first row written %d times, want once", k, first[k])
		}
	}
	if len(first) != len(seen) {
		t.Errorf("%d keys deduplicated, %d counted", len(first), len(seen))
	}
}
