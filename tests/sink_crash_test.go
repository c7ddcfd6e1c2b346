package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// sinkJob is a script that writes a paced, replayable datagen source into the sink of
// createSink with insert, under exactly-once checkpoints every 100 ms.
func sinkJob(createSink, insert string) string {
	return fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE gen (id BIGINT, k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '30000', 'rows-per-second' = '5000', 'seed' = '7',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30000',
  'fields.k.min' = '1', 'fields.k.max' = '300', 'fields.v.min' = '0', 'fields.v.max' = '100');
%s;
%s;
`, createSink, insert)
}

// TestEmbeddedSinkCrash: a keyed aggregate upserted into an embedded table survives
// SIGKILLs with the same final content as a failure-free run, read back by another
// streamsql process.
func TestEmbeddedSinkCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	content := func(kills int, r *rand.Rand) string {
		path := filepath.Join(t.TempDir(), "counts.db")
		create := fmt.Sprintf(`CREATE TABLE counts (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'embedded', 'path' = '%s')`, path)
		runUntilDone(t, writeScript(t, sinkJob(create, "INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k")), t.TempDir(), kills, r)
		out, errOut, code := runCLI(t, "", "-e", create+"; SELECT * FROM counts;", "--format", "csv", "--state-dir", t.TempDir())
		if code != 0 {
			t.Fatalf("reading the table back: %s", errOut)
		}
		return out
	}
	want := content(0, nil)
	if n := strings.Count(want, "\n"); n != 301 {
		t.Fatalf("failure-free run wrote %d lines:\n%.300s", n, want)
	}
	if got := content(10, rand.New(rand.NewPCG(11, 1))); got != want {
		t.Errorf("after crashes the table differs:\n%s", diffLines(want, got))
	}
}

// TestFileSinkCrash: rows written through the two-phase-commit filesystem sink survive
// SIGKILLs exactly once, and a reader sampling the directory during the run never sees
// a row that is later rolled back or a row twice.
func TestFileSinkCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	run := func(kills int, r *rand.Rand) []string {
		dir := filepath.Join(t.TempDir(), "out")
		create := fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv')`, dir)
		var samples [][]string
		stop := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Add(1)
		go func() {
			defer sampler.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
					samples = append(samples, committedRows(dir))
				}
			}
		}()
		runUntilDone(t, writeScript(t, sinkJob(create, "INSERT INTO out SELECT id, k, v FROM gen")), t.TempDir(), kills, r)
		close(stop)
		sampler.Wait()
		final := committedRows(dir)
		in := map[string]bool{}
		for _, row := range final {
			in[row] = true
		}
		for i, s := range samples {
			seen := map[string]bool{}
			for _, row := range s {
				if seen[row] || !in[row] {
					t.Fatalf("sample %d shows %q, twice or not in the final output", i, row)
				}
				seen[row] = true
			}
		}
		return final
	}
	want := run(0, nil)
	if len(want) != 30000 {
		t.Fatalf("failure-free run wrote %d rows", len(want))
	}
	got := run(10, rand.New(rand.NewPCG(12, 2)))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after crashes: %d rows, want %d\n%s", len(got), len(want), diffLines(strings.Join(want, "\n"), strings.Join(got, "\n")))
	}
}

// committedRows reads the rows of the visible files of dir, sorted.
func committedRows(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var rows []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // renamed meanwhile
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line != "" {
				rows = append(rows, line)
			}
		}
	}
	sort.Strings(rows)
	return rows
}

// diffLines shows the first lines on which two outputs differ.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i, shown := 0, 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d: want %q, got %q\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}

// TestWindowCrash: hopping-window and session-window aggregates over a paced,
// replayable source, its event time computed from a sequence, killed 10 times; the
// windows printed at the end equal a failure-free run's, each once (no window fires
// twice or is lost).
func TestWindowCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	for name, window := range map[string]string{
		"hop":     "HOP(TABLE gen, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)",
		"session": "SESSION(TABLE gen PARTITION BY k, DESCRIPTOR(ts), INTERVAL '2' SECOND)",
	} {
		t.Run(name, func(t *testing.T) { windowCrash(t, "", window) })
	}
	// Early firing updates windows before they close: what each window emitted is
	// restored, so none is emitted twice or lost.
	t.Run("tumble with early firing", func(t *testing.T) {
		windowCrash(t, `SET 'table.exec.emit.early-fire.enabled' = 'true';
SET 'table.exec.emit.early-fire.delay' = '50 ms';`, "TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '20' SECOND)")
	})
}

func windowCrash(t *testing.T, settings, window string) {
	script := writeScript(t, settings+`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE gen (id BIGINT, k BIGINT, v BIGINT,
  ts AS TO_TIMESTAMP_LTZ(id * 100, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'datagen', 'number-of-rows' = '30000', 'rows-per-second' = '5000', 'seed' = '9',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30000',
  'fields.k.min' = '1', 'fields.k.max' = '5', 'fields.v.min' = '0', 'fields.v.max' = '100');
SELECT window_start, window_end, k, COUNT(*) AS c, SUM(v) AS s
FROM TABLE(`+window+`)
GROUP BY window_start, window_end, k;
`)
	sorted := func(csv string) string {
		lines := strings.Split(strings.TrimSpace(csv), "\n")
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	want := sorted(runUntilDone(t, script, t.TempDir(), 0, nil))
	if n := strings.Count(want, "\n"); n < 300 {
		t.Fatalf("failure-free run printed %d windows:\n%.300s", n, want)
	}
	got := sorted(runUntilDone(t, script, t.TempDir(), 10, rand.New(rand.NewPCG(14, 4))))
	if got != want {
		t.Errorf("after crashes the windows differ:\n%s", diffLines(want, got))
	}
}

// TestIntervalJoinCrash: a LEFT interval join of two paced, replayable sources at
// parallelism 2, killed 10 times, prints the same pairs as a failure-free run, and each
// order that met no shipment once: the expiry that pads it fires once.
func TestIntervalJoinCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	script := writeScript(t, `
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE orders (id BIGINT, k BIGINT,
  ts AS TO_TIMESTAMP_LTZ(id * 100, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'datagen', 'number-of-rows' = '15000', 'rows-per-second' = '4000', 'seed' = '21',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '15000',
  'fields.k.min' = '1', 'fields.k.max' = '40');
CREATE TABLE shipments (sid BIGINT, k BIGINT,
  ts AS TO_TIMESTAMP_LTZ(sid * 100, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'datagen', 'number-of-rows' = '15000', 'rows-per-second' = '4000', 'seed' = '22',
  'fields.sid.kind' = 'sequence', 'fields.sid.start' = '1', 'fields.sid.end' = '15000',
  'fields.k.min' = '1', 'fields.k.max' = '40');
SELECT o.id, s.sid FROM orders o LEFT JOIN shipments s
ON o.k = s.k AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '2' SECOND;
`)
	sorted := func(csv string) string {
		lines := strings.Split(strings.TrimSpace(csv), "\n")
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	want := sorted(runUntilDone(t, script, t.TempDir(), 0, nil))
	padded := strings.Count(want, ",\n")
	if n := strings.Count(want, "\n"); n < 15000 || padded < 1000 || n-padded < 3000 {
		t.Fatalf("failure-free run printed %d rows, %d of them padded:\n%.300s", n, padded, want)
	}
	got := sorted(runUntilDone(t, script, t.TempDir(), 10, rand.New(rand.NewPCG(17, 3))))
	if got != want {
		t.Errorf("after crashes the joined rows differ:\n%s", diffLines(want, got))
	}
}
