package tests

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// subqueryCrashJob is a job whose state is a semi or an anti join's (both sides' rows
// by key, and each left row's count of matches), under an aggregate that sums what
// passes, so the final table is small and does not depend on how changes were batched.
// The right side of the anti join is an aggregate, whose updates retract and add
// matches.
func subqueryCrashJob(where string) string {
	return fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE l (id BIGINT, k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '20000', 'rows-per-second' = '5000', 'seed' = '3',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000',
  'fields.k.min' = '1', 'fields.k.max' = '3000', 'fields.k.null-rate' = '0.02',
  'fields.v.min' = '0', 'fields.v.max' = '100');
CREATE TABLE r (k BIGINT, w BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '15000', 'rows-per-second' = '4000', 'seed' = '5',
  'fields.k.min' = '1', 'fields.k.max' = '6000', 'fields.w.min' = '0', 'fields.w.max' = '100');
SELECT v %% 20 AS g, COUNT(*) AS n, SUM(id) AS s FROM l WHERE %s GROUP BY v %% 20;
`, where)
}

// TestCrashRecoverySubqueries kills a semi-join job and an anti-join job 10 times each
// with SIGKILL, restarting from the latest checkpoint, and compares the final result
// with a failure-free run's.
func TestCrashRecoverySubqueries(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	for i, c := range []struct{ name, where string }{
		{"semi", "k IN (SELECT k FROM r WHERE w > 30)"},
		{"anti", "NOT EXISTS (SELECT 1 FROM (SELECT k, COUNT(*) AS c FROM r GROUP BY k) a WHERE a.k = l.k AND a.c BETWEEN 2 AND 3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := writeScript(t, subqueryCrashJob(c.where))
			want := sortedLines(t, runUntilDone(t, script, t.TempDir(), 0, nil))
			if len(want) != 21 {
				t.Fatalf("failure-free run printed %d lines, want a header and 20 groups:\n%v", len(want), want)
			}
			got := sortedLines(t, runUntilDone(t, script, t.TempDir(), 10, rand.New(rand.NewPCG(uint64(i), 7))))
			if len(got) != len(want) {
				t.Fatalf("%d lines after crashes, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("after crashes: %s\nfailure-free:  %s", got[i], want[i])
				}
			}
		})
	}
}
