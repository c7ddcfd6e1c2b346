package tests

import (
	"math/rand/v2"
	"testing"
)

// aggsCrashJob runs the newer aggregates at both levels of an aggregate over an
// aggregate: the inner level over an insert-only input (variance, FIRST_VALUE,
// LAST_VALUE, LISTAGG, COUNT(DISTINCT a, b), FILTER, ARRAY_AGG, COLLECT, JSON_ARRAYAGG),
// the outer over the inner's updates, so its accumulators (the retracting FIRST_VALUE,
// LAST_VALUE and LISTAGG, which keep their values, the variance, ARRAY_AGG, COLLECT and
// the JSON aggregates) see every -U/+U. The outer groups by the inner's key,
// so each of its groups ends with one live row and its result does not depend on how
// the inner's changes were batched. Parallelism 1 keeps each key's arrival order, on
// which FIRST_VALUE, LAST_VALUE and LISTAGG depend, the same in every run.
const aggsCrashJob = `
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '1';
CREATE TABLE gen (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '30000', 'rows-per-second' = '5000', 'seed' = '11',
  'fields.k.min' = '1', 'fields.k.max' = '300', 'fields.v.min' = '0', 'fields.v.max' = '100');
SELECT k, LAST_VALUE(n) AS n, FIRST_VALUE(vp) AS vp, LISTAGG(CAST(ss AS STRING)) AS ss,
  LAST_VALUE(f) AS f, FIRST_VALUE(l) AS l, LISTAGG(la, '/') AS la, MAX(d) AS d,
  STDDEV_POP(big) AS sd0, COUNT(*) FILTER (WHERE big > 0) AS one, ARRAY_AGG(n) AS an,
  COLLECT(big) AS cb, JSON_ARRAYAGG(jv) AS jvs, JSON_OBJECTAGG(KEY CAST(k AS STRING) VALUE n) AS o,
  MAX(CARDINALITY(av)) AS av, MAX(CARDINALITY(cv)) AS cv
FROM (
  SELECT k, COUNT(*) AS n, VAR_POP(v) AS vp, STDDEV_SAMP(v) AS ss, FIRST_VALUE(v) AS f,
    LAST_VALUE(v) AS l, LISTAGG(CAST(v AS STRING)) FILTER (WHERE v > 97) AS la,
    COUNT(DISTINCT v % 10, v % 7) AS d, COUNT(*) FILTER (WHERE v > 50) AS big,
    JSON_ARRAYAGG(v) FILTER (WHERE v < 3) AS jv, ARRAY_AGG(v) AS av, COLLECT(v % 5) AS cv
  FROM gen GROUP BY k) t
GROUP BY k;
`

// TestCrashRecoveryNewAggregates kills the job with SIGKILL at random moments, restarts
// it from its latest checkpoint each time, and compares its final result with a
// failure-free run's, row for row.
func TestCrashRecoveryNewAggregates(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	script := writeScript(t, aggsCrashJob)
	want := sortedLines(t, runUntilDone(t, script, t.TempDir(), 0, nil))
	if len(want) != 301 {
		t.Fatalf("failure-free run printed %d lines, want a header and 300 keys", len(want))
	}
	got := sortedLines(t, runUntilDone(t, script, t.TempDir(), 12, rand.New(rand.NewPCG(12, 1))))
	if len(got) != len(want) {
		t.Fatalf("%d lines after crashes, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("after crashes: %s\nfailure-free:  %s", got[i], want[i])
		}
	}
}
