package streamsql

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/job"
)

// metricsJob is a checkpointed, unbounded job with event time and late rows, whose
// sink fails once at its 50th record, so that it restarts.
const metricsJob = `
SET 'execution.checkpointing.interval' = '200 ms';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '3';
SET 'restart-strategy.fixed-delay.delay' = '100 ms';
SET 'pipeline.name' = 'counts';
CREATE TABLE gen (k BIGINT, t BIGINT, ts AS TO_TIMESTAMP_LTZ(t, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'seed' = '7',
  'fields.k.min' = '1', 'fields.k.max' = '10', 'fields.t.min' = '1000000', 'fields.t.max' = '100000000');
CREATE TABLE sink (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole', 'test.fail-at-record' = '50', 'test.fail-mode' = 'once');
INSERT INTO sink SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND))
  GROUP BY k, window_start, window_end;
`

// waitForMetrics polls the session's job until ok accepts its figures.
func waitForMetrics(t *testing.T, s *Session, name string, ok func(job.Metrics) bool) job.Metrics {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, m := range s.JobMetrics() {
			if m.Name == name && ok(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never reached the figures wanted: %+v", name, s.JobMetrics())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDescribeJob: DESCRIBE JOB lists every operator EXPLAIN shows, with its
// parallelism, live row counts, rates, back-pressure and watermark, then the job's
// last checkpoints; SHOW JOBS gives each job's live totals.
func TestDescribeJob(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	w := &syncWriter{w: &out}
	s, err := NewSession(Config{Out: w, Err: &syncWriter{w: &bytes.Buffer{}}, StateDir: filepath.Join(dir, "state")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Exec(ctx, metricsJob); err != nil {
		t.Fatal(err)
	}
	defer s.StopJobs()
	waitForMetrics(t, s, "counts", func(m job.Metrics) bool {
		return m.Restarts == 1 && m.CompletedCheckpoints >= 2 && m.State == job.Running
	})
	time.Sleep(1100 * time.Millisecond) // a second of rates after the restart
	w.mu.Lock()
	out.Reset()
	w.mu.Unlock()
	if err := s.Exec(ctx, "EXPLAIN INSERT INTO sink SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end;"); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	explain := out.String()
	out.Reset()
	w.mu.Unlock()
	if err := s.Exec(ctx, "DESCRIBE JOB 'counts'; SHOW JOBS;"); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	got := out.String()
	w.mu.Unlock()
	t.Logf("%s", got)

	// Every operator line of EXPLAIN's plan is a row, with its parallelism.
	nodes := regexp.MustCompile(`(?m)^[ +\-]*([A-Z]\w*\(.*\))$`).FindAllStringSubmatch(strings.Split(explain, "== Guarantee ==")[0], -1)
	if len(nodes) < 4 {
		t.Fatalf("EXPLAIN shows %d operators:\n%s", len(nodes), explain)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(got, "\n") {
		f := tableRow(line)
		if len(f) == 11 {
			rows[f[1]] = f
		}
	}
	for _, n := range nodes {
		f, ok := rows[n[1]]
		if !ok {
			t.Errorf("DESCRIBE JOB lacks operator %s", n[1])
			continue
		}
		if f[3] != "1" {
			t.Errorf("%s: parallelism %s, want 1", n[1], f[3])
		}
		if strings.HasPrefix(n[1], "TableSourceScan") {
			if out, _ := strconv.ParseInt(f[5], 10, 64); out < 100 {
				t.Errorf("the source read %s rows", f[5])
			}
			if rate, _ := strconv.ParseFloat(f[7], 64); rate < 500 || rate > 4000 {
				t.Errorf("the source reads %s rows/s, want about 2000", f[7])
			}
		}
		if strings.HasPrefix(n[1], "Sink") {
			if in, _ := strconv.ParseInt(f[4], 10, 64); in < 50 {
				t.Errorf("the sink received %s rows", f[4])
			}
			if !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$`).MatchString(f[9]) {
				t.Errorf("the sink's watermark is %q", f[9])
			}
		}
		if !strings.HasSuffix(f[8], "%") {
			t.Errorf("%s: back-pressure %q", n[1], f[8])
		}
	}
	if !regexp.MustCompile(`Job counts: RUNNING, 1 restarts, \d+ checkpoints completed, 0 failed, \d+ late rows dropped`).MatchString(got) {
		t.Errorf("DESCRIBE JOB's summary is wrong:\n%s", got)
	}
	if !strings.Contains(got, "Last exception: table sink: failing at record 50") {
		t.Errorf("DESCRIBE JOB does not show the failure the job restarted from:\n%s", got)
	}
	if !regexp.MustCompile(`(?m)^\| +\d+ \| COMPLETED \| +\d+(\.\d+)?m?s \| +\d+ \|`).MatchString(got) {
		t.Errorf("DESCRIBE JOB lists no completed checkpoint:\n%s", got)
	}
	if !regexp.MustCompile(`(?m)^\| counts \| RUNNING \| [^|]+ \| +\d+ \| +\d+ \| +\d+\.\d \| +\d+% \| +\d+ \| +1 \|$`).MatchString(got) {
		t.Errorf("SHOW JOBS lacks the job's live figures:\n%s", got)
	}
	if err := s.Exec(ctx, "DESCRIBE JOB 'nope';"); err == nil || !strings.Contains(err.Error(), "no job named 'nope'") {
		t.Errorf("DESCRIBE JOB of no job: %v", err)
	}
}

// tableRow returns the cells of a line of a boxed table, or nil.
func tableRow(line string) []string {
	if !strings.HasPrefix(line, "|") {
		return nil
	}
	cells := strings.Split(strings.Trim(line, "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// TestStatementSetReadsSharedSourceOnce: the INSERTs of a statement set that read one
// table share one source, which reads each row once and feeds every INSERT; a table
// read with other options (a hint) is a source of its own.
func TestStatementSetReadsSharedSourceOnce(t *testing.T) {
	s, err := NewSession(Config{Out: &syncWriter{w: &bytes.Buffer{}}, Err: &syncWriter{w: &bytes.Buffer{}}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer s.StopJobs()
	script := `SET 'pipeline.name' = 'set';
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3000', 'seed' = '1',
  'fields.k.min' = '1', 'fields.k.max' = '10');
CREATE TABLE a (k BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE b (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE c (k BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE d (k BIGINT) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
  INSERT INTO a SELECT k, v FROM gen WHERE k > 5;
  INSERT INTO b SELECT k, COUNT(*) FROM gen GROUP BY k;
  INSERT INTO c SELECT x.k FROM gen AS x JOIN gen AS y ON x.v = y.v;
  INSERT INTO d SELECT k FROM gen /*+ OPTIONS('number-of-rows' = '100') */;
END;`
	if err := s.Exec(context.Background(), script); err != nil {
		t.Fatal(err)
	}
	m := waitForMetrics(t, s, "set", func(m job.Metrics) bool { return m.State == job.Finished })
	// Read once for a, b and both sides of the self-join, and 100 rows for d.
	for _, st := range s.Jobs() {
		if st.Name == "set" && st.RowsIn != 3100 {
			t.Errorf("the job read %d rows, want 3,000 of gen shared by three INSERTs and 100 of its hinted scan", st.RowsIn)
		}
	}
	var scans []string
	feeds := map[string]int{}
	for _, op := range m.Operators {
		if op.Name == "TableSourceScan" {
			scans = append(scans, op.ID)
		}
		for _, in := range op.Inputs {
			feeds[in]++
		}
	}
	if len(scans) != 2 || feeds[scans[0]] != 4 || feeds[scans[1]] != 1 {
		t.Errorf("source operators %v feed %v: want gen's one source feeding four operators, the hinted scan one", scans, feeds)
	}
}

// TestKeyedOperatorChainedAfterJoin: an operator keyed by a join's key runs in the
// join's tasks, with no exchange between them; one keyed otherwise does not.
func TestKeyedOperatorChainedAfterJoin(t *testing.T) {
	s, err := NewSession(Config{Out: &syncWriter{w: &bytes.Buffer{}}, Err: &syncWriter{w: &bytes.Buffer{}}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer s.StopJobs()
	script := `SET 'pipeline.name' = 'chained'; SET 'parallelism.default' = '2';
CREATE TABLE a (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000', 'seed' = '1', 'fields.k.min' = '1', 'fields.k.max' = '50');
CREATE TABLE b (k BIGINT, w BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000', 'seed' = '2', 'fields.k.min' = '1', 'fields.k.max' = '50');
CREATE TABLE best (k BIGINT, v BIGINT, w BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE counts (w BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
  INSERT INTO best SELECT k, v, w FROM (SELECT a.k, a.v, b.w, ROW_NUMBER() OVER (PARTITION BY b.k ORDER BY a.v DESC) AS rn FROM a JOIN b ON a.k = b.k) WHERE rn = 1;
  INSERT INTO counts SELECT b.w, COUNT(*) FROM a JOIN b ON a.k = b.k GROUP BY b.w;
END;`
	if err := s.Exec(context.Background(), script); err != nil {
		t.Fatal(err)
	}
	m := waitForMetrics(t, s, "chained", func(m job.Metrics) bool { return m.State == job.Finished })
	stage := map[string][]string{} // operator kind: the stages running it
	for _, op := range m.Operators {
		stage[op.Name] = append(stage[op.Name], strings.Split(op.ID, ".")[0])
	}
	joins, ranks, aggs := stage["Join"], stage["Rank"], stage["GroupAggregate"]
	if len(ranks) != 1 || len(aggs) != 1 || !slices.Contains(joins, ranks[0]) || slices.Contains(joins, aggs[0]) {
		t.Errorf("joins run in stages %v, the Top-N by the join's key in %v and the aggregate by another column in %v: "+
			"want the Top-N in a join's stage and the aggregate in its own", joins, ranks, aggs)
	}
}

// TestReusedSubplanBuiltOnce: a plan part a job holds twice (one aggregate view read
// by both sides of a join, and by a second INSERT) is built once and feeds every
// reader, and every sink still gets its rows.
func TestReusedSubplanBuiltOnce(t *testing.T) {
	var out bytes.Buffer
	s, err := NewSession(Config{Out: &syncWriter{w: &bytes.Buffer{}}, Err: &syncWriter{w: &bytes.Buffer{}}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer s.StopJobs()
	dir := t.TempDir()
	script := `SET 'pipeline.name' = 'reuse';
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3000', 'seed' = '1',
  'fields.k.min' = '1', 'fields.k.max' = '10');
CREATE VIEW counts AS SELECT k, COUNT(*) AS n FROM gen GROUP BY k;
CREATE TABLE joined (k BIGINT, n BIGINT, m BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '` + dir + `/joined');
CREATE TABLE plain (k BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '` + dir + `/plain');
EXECUTE STATEMENT SET BEGIN
  INSERT INTO joined SELECT x.k, x.n, y.n FROM counts AS x JOIN counts AS y ON x.k = y.k;
  INSERT INTO plain SELECT k, n FROM counts;
END;`
	if err := s.Exec(context.Background(), script); err != nil {
		t.Fatal(err)
	}
	m := waitForMetrics(t, s, "reuse", func(m job.Metrics) bool { return m.State == job.Finished })
	var names []string
	aggs := 0
	for _, op := range m.Operators {
		names = append(names, op.Name)
		if strings.Contains(op.Name, "Aggregate") {
			aggs++
		}
	}
	if aggs != 1 {
		t.Errorf("%d aggregate operators (%v): want the view's one, read three times", aggs, names)
	}
	s2, err := NewSession(Config{Out: &out, Err: &syncWriter{w: &bytes.Buffer{}}, StateDir: t.TempDir(), Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Exec(context.Background(), `CREATE TABLE joined (k BIGINT, n BIGINT, m BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '`+dir+`/joined');
CREATE TABLE plain (k BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '`+dir+`/plain');
SELECT COUNT(*) AS keys, SUM(n) AS rows, SUM(CASE WHEN n = m THEN 1 ELSE 0 END) AS same FROM joined;
SELECT COUNT(*) AS keys, SUM(n) AS rows FROM plain;`); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "keys,rows,same\n10,3000,10\nkeys,rows\n10,3000\n"; got != want {
		t.Errorf("sinks hold:\n%s\nwant:\n%s", got, want)
	}
}
