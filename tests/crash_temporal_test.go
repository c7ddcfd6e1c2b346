package tests

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// temporalCrashJob runs two event-time temporal joins at parallelism 2 into
// two-phase-commit file sinks: 30k orders against 3k versions of 200 keys' rates, both
// from datagen. Times grow with the sequence ids but run back (orders up to 120 ms,
// versions up to 600 ms), within the 1 s watermark delay, so nothing is late in any run
// and the result is the same however the sources interleave. The waiting orders and
// each key's versions are the state.
const temporalCrashJob = `
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE orders (id BIGINT, k BIGINT, v BIGINT,
  ts AS TO_TIMESTAMP_LTZ(1700000000000 + id * 10 - (id %% 7) * 20, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'datagen', 'rows-per-second' = '5000', 'seed' = '7',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30000',
  'fields.k.min' = '1', 'fields.k.max' = '220', 'fields.v.min' = '0', 'fields.v.max' = '100');
CREATE TABLE rates (rid BIGINT, k BIGINT, rate BIGINT,
  rts AS TO_TIMESTAMP_LTZ(1700000000000 + rid * 100 - (rid %% 5) * 150, 3),
  WATERMARK FOR rts AS rts - INTERVAL '1' SECOND, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'datagen', 'rows-per-second' = '500', 'seed' = '9',
  'fields.rid.kind' = 'sequence', 'fields.rid.start' = '1', 'fields.rid.end' = '3000',
  'fields.k.min' = '1', 'fields.k.max' = '200', 'fields.rate.min' = '0', 'fields.rate.max' = '100');
CREATE TABLE out_left (id BIGINT, k BIGINT, rid BIGINT, rate BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out_inner (id BIGINT, rid BIGINT, x BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO out_left SELECT o.id, o.k, r.rid, r.rate
  FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k;
INSERT INTO out_inner SELECT o.id, r.rid, o.v * r.rate
  FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON r.k = o.k AND o.v >= r.rate;
`

// TestCrashRecoveryTemporal kills the temporal join jobs with SIGKILL 10 times at
// random moments, restarts them from their latest checkpoint each time, and compares
// what their sinks committed with a failure-free run's, row for row.
func TestCrashRecoveryTemporal(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	run := func(kills int, r *rand.Rand) (left, inner []string) {
		dir := t.TempDir()
		leftDir, innerDir := filepath.Join(dir, "left"), filepath.Join(dir, "inner")
		runUntilDone(t, writeScript(t, fmt.Sprintf(temporalCrashJob, leftDir, innerDir)), t.TempDir(), kills, r)
		return committedRows(leftDir), committedRows(innerDir)
	}
	wantLeft, wantInner := run(0, nil)
	if len(wantLeft) != 30000 || len(wantInner) < 1000 {
		t.Fatalf("failure-free run wrote %d and %d rows, want 30000 and some", len(wantLeft), len(wantInner))
	}
	gotLeft, gotInner := run(10, rand.New(rand.NewPCG(21, 3)))
	for _, c := range []struct {
		name      string
		got, want []string
	}{{"LEFT", gotLeft, wantLeft}, {"INNER", gotInner, wantInner}} {
		if strings.Join(c.got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s after crashes: %d rows, want %d\n%s", c.name, len(c.got), len(c.want), diffLines(strings.Join(c.want, "\n"), strings.Join(c.got, "\n")))
		}
	}
}
