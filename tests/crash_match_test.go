package tests

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// matchCrashJob runs two MATCH_RECOGNIZE queries at parallelism 2 into two-phase-commit
// file sinks: a greedy A B+ C that skips past each match (partial matches of many rows
// in state), and a reluctant A B*? C within 10 s that skips to the next row (many
// partial matches at once, some timed out). Times grow with the sequence id but run up
// to 120 ms back, behind the 1 s watermark delay, so no row is late in any run and each
// key's rows have distinct times: the result is the same however the two source tasks
// interleave.
const matchCrashJob = `
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE gen (id BIGINT, k BIGINT, v BIGINT,
  ts AS TO_TIMESTAMP_LTZ(1700000000000 + id * 10 - (id %% 7) * 20, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'datagen', 'rows-per-second' = '5000', 'seed' = '7',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30000',
  'fields.k.min' = '1', 'fields.k.max' = '200', 'fields.v.min' = '0', 'fields.v.max' = '100');
CREATE TABLE out_greedy (k BIGINT, fid BIGINT, lid BIGINT, n BIGINT, sv BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out_reluctant (k BIGINT, fid BIGINT, lid BIGINT, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO out_greedy SELECT * FROM gen MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.id) AS fid, LAST(C.id) AS lid, COUNT(*) AS n, SUM(v) AS sv
  AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C)
  DEFINE A AS A.v < 30, B AS B.v >= 30, C AS C.v < 30);
INSERT INTO out_reluctant SELECT * FROM gen MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.id) AS fid, LAST(C.id) AS lid, COUNT(*) AS n
  AFTER MATCH SKIP TO NEXT ROW PATTERN (A B*? C) WITHIN INTERVAL '10' SECOND
  DEFINE A AS A.v > 50, C AS C.v > A.v + 20);
`

// TestCrashRecoveryMatch kills the MATCH_RECOGNIZE jobs with SIGKILL 10 times at random
// moments, restarts them from their latest checkpoint each time, and compares what
// their sinks committed with a failure-free run's, row for row.
func TestCrashRecoveryMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	run := func(kills int, r *rand.Rand) (greedy, reluctant []string) {
		dir := t.TempDir()
		gDir, rDir := filepath.Join(dir, "greedy"), filepath.Join(dir, "reluctant")
		runUntilDone(t, writeScript(t, fmt.Sprintf(matchCrashJob, gDir, rDir)), t.TempDir(), kills, r)
		return committedRows(gDir), committedRows(rDir)
	}
	wantG, wantR := run(0, nil)
	if len(wantG) < 1000 || len(wantR) < 1000 {
		t.Fatalf("failure-free run wrote %d and %d matches, want over 1000 each", len(wantG), len(wantR))
	}
	gotG, gotR := run(10, rand.New(rand.NewPCG(17, 3)))
	for _, c := range []struct {
		name      string
		got, want []string
	}{{"greedy", gotG, wantG}, {"reluctant", gotR, wantR}} {
		if strings.Join(c.got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s after crashes: %d rows, want %d\n%s", c.name, len(c.got), len(c.want), diffLines(strings.Join(c.want, "\n"), strings.Join(c.got, "\n")))
		}
	}
}
