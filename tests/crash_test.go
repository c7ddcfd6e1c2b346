package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// crashJob is a keyed aggregate over a replayable, paced source whose result the script
// prints as CSV when the input ends; extra settings come first.
func crashJob(parallelism int, mode string, settings ...string) string {
	return strings.Join(settings, "\n") + fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.mode' = '%s';
SET 'parallelism.default' = '%d';
CREATE TABLE gen (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '40000', 'rows-per-second' = '5000', 'seed' = '3',
  'fields.k.min' = '1', 'fields.k.max' = '500', 'fields.v.min' = '0', 'fields.v.max' = '100');
SELECT k, COUNT(*) AS c, SUM(v) AS s FROM gen GROUP BY k;
`, mode, parallelism)
}

// runUntilDone starts the job, SIGKILLs it kills times at random moments, then lets the
// last start finish, and returns its output. It fails the test if the job finished
// before it was killed that many times.
func runUntilDone(t *testing.T, script, stateDir string, kills int, r *rand.Rand) string {
	t.Helper()
	for i := 0; ; i++ {
		cmd := streamsqlCmd("-f", script, "--state-dir", stateDir, "--format", "csv")
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i < kills {
			time.Sleep(time.Duration(100+r.IntN(300)) * time.Millisecond)
			cmd.Process.Kill()
			if err := cmd.Wait(); err == nil {
				t.Fatalf("the job finished after only %d of %d kills", i, kills)
			}
			continue
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("final run: %v\n%s", err, errOut.String())
		}
		return out.String()
	}
}

// parseCounts reads k,c,s rows.
func parseCounts(t *testing.T, csv string) map[string][2]int64 {
	t.Helper()
	rows := map[string][2]int64{}
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) < 2 || lines[0] != "k,c,s" {
		t.Fatalf("unexpected output:\n%.500s", csv)
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		c, _ := strconv.ParseInt(f[1], 10, 64)
		s, _ := strconv.ParseInt(f[2], 10, 64)
		if _, dup := rows[f[0]]; dup {
			t.Fatalf("key %s printed twice", f[0])
		}
		rows[f[0]] = [2]int64{c, s}
	}
	return rows
}

func writeScript(t *testing.T, sql string) string {
	path := filepath.Join(t.TempDir(), "job.sql")
	if err := os.WriteFile(path, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCrashRecoveryExactlyOnce kills a real streamsql process 20 times mid-job; after
// each restart it resumes from its latest checkpoint, and the final result equals a
// failure-free run's, key for key. With parallelism 4 each aggregate task keeps only 40
// of its about 125 keys in memory, so groups move to disk and back across the crashes.
func TestCrashRecoveryExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	for _, p := range []int{2, 4} {
		t.Run(fmt.Sprintf("parallelism %d", p), func(t *testing.T) {
			want := parseCounts(t, runUntilDone(t, writeScript(t, crashJob(p, "EXACTLY_ONCE")), t.TempDir(), 0, nil))
			var settings []string
			if p == 4 {
				settings = append(settings, "SET 'state.cache.max-keys' = '40';")
			}
			script := writeScript(t, crashJob(p, "EXACTLY_ONCE", settings...))
			if len(want) != 500 {
				t.Fatalf("failure-free run has %d keys", len(want))
			}
			r := rand.New(rand.NewPCG(uint64(p), 9))
			got := parseCounts(t, runUntilDone(t, script, t.TempDir(), 20, r))
			if len(got) != len(want) {
				t.Fatalf("%d keys after crashes, want %d", len(got), len(want))
			}
			for _, k := range sortedKeys(want) {
				if got[k] != want[k] {
					t.Errorf("key %s: got count,sum %v, want %v", k, got[k], want[k])
				}
			}
		})
	}
}

// TestCrashRecoveryAtLeastOnce: without alignment no key may be missing and no count
// may fall below the true one (replayed records may count twice).
func TestCrashRecoveryAtLeastOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	script := writeScript(t, crashJob(2, "AT_LEAST_ONCE"))
	want := parseCounts(t, runUntilDone(t, script, t.TempDir(), 0, nil))
	got := parseCounts(t, runUntilDone(t, script, t.TempDir(), 20, rand.New(rand.NewPCG(5, 5))))
	for k, w := range want {
		if g, ok := got[k]; !ok || g[0] < w[0] {
			t.Errorf("key %s: got %v, want at least %v", k, g, w)
		}
	}
}

func sortedKeys(m map[string][2]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
