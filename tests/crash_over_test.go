package tests

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// overCrashJob runs three OVER aggregates at parallelism 2 into two-phase-commit file
// sinks: a ROWS frame of 10 rows before each (its frames and pending rows in state), a
// RANGE frame of 2 s (rows dropped as they leave it) and LAG over the default unbounded
// frame (its last rows' values in state). Times grow with the sequence id
// but run up to 120 ms back, behind the 1 s watermark delay, so no row is late in any
// run and each key's rows have distinct times: the result is the same however the two
// source tasks interleave.
const overCrashJob = `
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE gen (id BIGINT, k BIGINT, v BIGINT,
  ts AS TO_TIMESTAMP_LTZ(1700000000000 + id * 10 - (id %% 7) * 20, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'datagen', 'rows-per-second' = '5000', 'seed' = '7',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30000',
  'fields.k.min' = '1', 'fields.k.max' = '200', 'fields.v.min' = '0', 'fields.v.max' = '100');
CREATE TABLE out_rows (id BIGINT, k BIGINT, s BIGINT, n BIGINT, mx BIGINT, f BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out_range (id BIGINT, k BIGINT, s BIGINT, n BIGINT, mn BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out_lag (id BIGINT, k BIGINT, p BIGINT, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO out_rows SELECT id, k, SUM(v) OVER w, COUNT(*) OVER w, MAX(v) OVER w, FIRST_VALUE(id) OVER w
  FROM gen WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 10 PRECEDING AND CURRENT ROW);
INSERT INTO out_lag SELECT id, k, LAG(id, 3) OVER w, COUNT(*) OVER w FROM gen WINDOW w AS (PARTITION BY k ORDER BY ts);
INSERT INTO out_range SELECT id, k, SUM(v) OVER w, COUNT(*) OVER w, MIN(v) OVER w
  FROM gen WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW);
`

// TestCrashRecoveryOver kills the OVER jobs with SIGKILL 10 times at random moments,
// restarts them from their latest checkpoint each time, and compares what their sinks
// committed with a failure-free run's, row for row.
func TestCrashRecoveryOver(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	run := func(kills int, r *rand.Rand) (rows, ranges, lags []string) {
		dir := t.TempDir()
		rowsDir, rangeDir, lagDir := filepath.Join(dir, "rows"), filepath.Join(dir, "range"), filepath.Join(dir, "lag")
		runUntilDone(t, writeScript(t, fmt.Sprintf(overCrashJob, rowsDir, rangeDir, lagDir)), t.TempDir(), kills, r)
		return committedRows(rowsDir), committedRows(rangeDir), committedRows(lagDir)
	}
	wantRows, wantRange, wantLag := run(0, nil)
	if len(wantRows) != 30000 || len(wantRange) != 30000 || len(wantLag) != 30000 {
		t.Fatalf("failure-free run wrote %d, %d and %d rows, want 30000 each", len(wantRows), len(wantRange), len(wantLag))
	}
	gotRows, gotRange, gotLag := run(10, rand.New(rand.NewPCG(13, 5)))
	for _, c := range []struct {
		name      string
		got, want []string
	}{{"ROWS", gotRows, wantRows}, {"RANGE", gotRange, wantRange}, {"LAG", gotLag, wantLag}} {
		if strings.Join(c.got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s after crashes: %d rows, want %d\n%s", c.name, len(c.got), len(c.want), diffLines(strings.Join(c.want, "\n"), strings.Join(c.got, "\n")))
		}
	}
}
