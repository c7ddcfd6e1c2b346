package streamsql

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFinalCheckpointCommits: a bounded job whose only checkpoint is its final one
// commits the transactional sink's output through it, every time, before the job ends.
func TestFinalCheckpointCommits(t *testing.T) {
	for i := 0; i < 5; i++ {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		s, err := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: filepath.Join(dir, "state")})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Exec(context.Background(), `
SET 'execution.checkpointing.interval' = '1 h';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000');
CREATE TABLE files (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '`+out+`', 'format' = 'csv');
INSERT INTO files SELECT id FROM gen;`)
		if err == nil {
			err = s.Wait()
		}
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(out)
		var rows int
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("run %d left %s uncommitted", i, e.Name())
				continue
			}
			data, _ := os.ReadFile(filepath.Join(out, e.Name()))
			rows += strings.Count(string(data), "\n")
		}
		if rows != 1000 {
			t.Fatalf("run %d: %d rows committed, want 1000", i, rows)
		}
	}
}

// fileRows counts the committed rows in a filesystem sink's directory, and fails on a
// row seen twice.
func fileRows(t *testing.T, dir string) int {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	seen := map[string]bool{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		for _, row := range strings.Fields(string(data)) {
			if seen[row] {
				t.Fatalf("row %s committed twice", row)
			}
			seen[row] = true
		}
	}
	return len(seen)
}

// TestStopJobResumes: STOP JOB stops an INSERT gracefully with a final checkpoint; the
// same script run again resumes from it, and every row reaches the sink once.
func TestStopJobResumes(t *testing.T) {
	dir := t.TempDir()
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	script := `
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '4000', 'rows-per-second' = '4000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4000');
CREATE TABLE files (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '` + out + `', 'format' = 'csv');
INSERT INTO files SELECT id FROM gen;`
	var log strings.Builder
	s, err := NewSession(Config{Out: io.Discard, Err: &syncWriter{w: &log}, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Exec(ctx, script); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if err := s.Exec(ctx, "STOP JOB 'insert-files';"); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	st := s.Jobs()[0]
	if st.State != "CANCELED" || st.LastCheckpoint == 0 || st.RowsIn == 0 || st.RowsIn >= 4000 {
		t.Fatalf("after STOP JOB: %+v", st)
	}
	if n := fileRows(t, out); int64(n) != st.RowsOut {
		t.Errorf("stopped with %d rows committed, %d written", n, st.RowsOut)
	}
	if err := s.Exec(ctx, "STOP JOB 'insert-files';"); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("stopping a stopped job: %v", err)
	}
	again, _ := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: state})
	if err := again.Exec(ctx, script); err != nil {
		t.Fatal(err)
	}
	if err := again.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := fileRows(t, out); n != 4000 {
		t.Errorf("%d rows after the resumed run, want 4000", n)
	}
	if got := again.Jobs()[0].RowsIn; got+st.RowsIn != 4000 {
		t.Errorf("the resumed run read %d rows after the stopped one's %d: something was replayed or lost", got, st.RowsIn)
	}
}

// TestSetBetweenInserts: a SET after an INSERT does not reach the running job (run under
// -race), and each job keeps the name set before it.
func TestSetBetweenInserts(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString(`CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000', 'rows-per-second' = '20000');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');`)
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&script, `
SET 'pipeline.name' = 'job-%d';
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '%d ms';
INSERT INTO hole SELECT id FROM gen;`, i, i%2+1, 50+i)
	}
	if err := s.Exec(context.Background(), script.String()); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, st := range s.Jobs() {
		if st.Name != fmt.Sprintf("job-%d", i) || st.State != "FINISHED" || st.RowsOut != 2000 {
			t.Errorf("job %d: %+v", i, st)
		}
	}
}

// TestMisspeltSetKeyWarns: a SET key close to a known one is stored with a warning.
func TestMisspeltSetKeyWarns(t *testing.T) {
	var errOut strings.Builder
	s, _ := NewSession(Config{Out: io.Discard, Err: &errOut, StateDir: t.TempDir()})
	if err := s.Exec(context.Background(), "SET 'execution.checkpointing.intervall' = '1 s'; SET 'my.own.key' = 'x';"); err != nil {
		t.Fatal(err)
	}
	want := "[WARNING] unknown key 'execution.checkpointing.intervall', did you mean 'execution.checkpointing.interval'?"
	if !strings.Contains(errOut.String(), want) || strings.Count(errOut.String(), "WARNING") != 1 {
		t.Errorf("got %q", errOut.String())
	}
}

// syncWriter serializes writes from several jobs.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// TestRescaledJobResumes: a job stopped at parallelism 2 and started again at 1
// restores its checkpoint into the new layout: the second run reads exactly the rows
// the first had not.
func TestRescaledJobResumes(t *testing.T) {
	state := t.TempDir()
	script := func(p int) string {
		return fmt.Sprintf(`SET 'execution.checkpointing.interval' = '50 ms';
SET 'parallelism.default' = '%d';
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000', 'rows-per-second' = '10000',
  'fields.k.min' = '1', 'fields.k.max' = '10');
CREATE TABLE hole (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT k, COUNT(*) FROM gen GROUP BY k;`, p)
	}
	s, _ := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: state})
	ctx := context.Background()
	if err := s.Exec(ctx, script(2)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := s.Exec(ctx, "STOP JOB 'insert-hole';"); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	var log strings.Builder
	again, _ := NewSession(Config{Out: io.Discard, Err: &syncWriter{w: &log}, StateDir: state})
	if err := again.Exec(ctx, script(1)); err != nil {
		t.Fatal(err)
	}
	if err := again.Wait(); err != nil {
		t.Fatal(err)
	}
	first, second := s.Jobs()[0].RowsIn, again.Jobs()[0].RowsIn
	if !strings.Contains(log.String(), "rescaling: checkpoint") || first == 0 || first+second != 20000 {
		t.Errorf("read %d rows, then %d at the new parallelism:\n%s", first, second, log.String())
	}
}

// TestTableNamesStayInsideTheStateDir: a quoted table name with '..' or '/' never makes
// a path outside the state directory: an embedded table or a socket's log so named is
// refused, and nothing is written outside.
func TestTableNamesStayInsideTheStateDir(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, "a", "b", "state")
	s, _ := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: state})
	err := s.Exec(context.Background(), "CREATE TABLE `../../escape` (id BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'embedded');"+
		"CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');"+
		"INSERT INTO `../../escape` SELECT id FROM gen;")
	if err == nil {
		err = s.Wait()
	}
	if err == nil || !strings.Contains(err.Error(), "cannot name a file in the state directory") {
		t.Errorf("got %v", err)
	}
	err = s.Exec(context.Background(), "SET 'execution.checkpointing.interval' = '1 s';"+
		"CREATE TABLE `../feed` (line STRING) WITH ('connector' = 'socket', 'hostname' = 'localhost', 'port' = '9', 'format' = 'csv', 'source.wal' = 'true');"+
		"SELECT * FROM `../feed`;")
	if err == nil || !strings.Contains(err.Error(), "cannot name a file in the state directory") {
		t.Errorf("socket: got %v", err)
	}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if rel, _ := filepath.Rel(state, path); strings.HasPrefix(rel, "..") && !d.IsDir() {
			t.Errorf("%s was written outside the state directory", path)
		}
		return nil
	})
}

// TestSavepointStatements: STOP JOB ... WITH SAVEPOINT prints the savepoint's path; SET
// 'execution.savepoint.path' starts the next job from it, EXPLAIN then says what it
// would restore, and 'state.savepoints.dir' decides where savepoints go. With
// DELETE_ON_CANCELLATION, a stop leaves no checkpoints behind.
func TestSavepointStatements(t *testing.T) {
	dir := t.TempDir()
	out, state, spDir := filepath.Join(dir, "out"), filepath.Join(dir, "state"), filepath.Join(dir, "mine")
	tables := `
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '4000', 'rows-per-second' = '4000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4000');
CREATE TABLE files (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '` + out + `', 'format' = 'csv');`
	var printed strings.Builder
	s, err := NewSession(Config{Out: &syncWriter{w: &printed}, Err: io.Discard, StateDir: state, Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Exec(ctx, `SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.externalized-checkpoint-retention' = 'DELETE_ON_CANCELLATION';
SET 'state.savepoints.dir' = '`+spDir+`';`+tables+`
INSERT INTO files SELECT id FROM gen;`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if err := s.Exec(ctx, "STOP JOB 'insert-files' WITH SAVEPOINT;"); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	m := regexp.MustCompile(`\| (\S+/savepoint-insert-files-\S+) \|`).FindStringSubmatch(printed.String())
	if m == nil || !strings.Contains(printed.String(), "savepoint path") || !strings.HasPrefix(m[1], spDir+"/") {
		t.Fatalf("STOP JOB WITH SAVEPOINT printed %q", printed.String())
	}
	path := m[1]
	if chks, _ := filepath.Glob(filepath.Join(state, "insert-files", "checkpoints", "chk-*")); len(chks) > 0 {
		t.Errorf("DELETE_ON_CANCELLATION left %v", chks)
	}
	stopped := s.Jobs()[0].RowsIn

	printed.Reset()
	again, _ := NewSession(Config{Out: &syncWriter{w: &printed}, Err: io.Discard, StateDir: state, Format: "csv"})
	if err := again.Exec(ctx, `SET 'execution.checkpointing.interval' = '100 ms';`+tables+`
SET 'execution.savepoint.path' = '`+path+`';
EXPLAIN INSERT INTO files SELECT id FROM gen;
INSERT INTO files SELECT id FROM gen;`); err != nil {
		t.Fatal(err)
	}
	if err := again.Wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(printed.String(), "== Savepoint ==") || !strings.Contains(printed.String(), "source-gen                   restored from source-gen") {
		t.Errorf("EXPLAIN with a savepoint:\n%s", printed.String())
	}
	if n := fileRows(t, out); n != 4000 {
		t.Errorf("%d rows after resuming from the savepoint, want 4000", n)
	}
	if got := again.Jobs()[0].RowsIn; got+stopped != 4000 {
		t.Errorf("the resumed job read %d rows after the stopped one's %d", got, stopped)
	}
}

// TestSkipCountsPerTable: malformed records skipped by the parallel tasks of one table
// are reported once, as the table's total.
func TestSkipCountsPerTable(t *testing.T) {
	dir := t.TempDir()
	for i := range 4 {
		data := fmt.Sprintf("%d\nnot a number\n%d\nnor this\n", i, i+10)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.csv", i)), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	s, _ := NewSession(Config{Out: io.Discard, Err: &syncWriter{w: &log}, StateDir: t.TempDir()})
	err := s.Exec(context.Background(), `SET 'parallelism.default' = '3';
CREATE TABLE nums (n BIGINT) WITH ('connector' = 'filesystem', 'path' = '`+dir+`', 'format' = 'csv', 'csv.ignore-parse-errors' = 'true');
SELECT n FROM nums;`)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.String(); strings.Count(got, "skipped") != 1 || !strings.Contains(got, "table nums: skipped 8 malformed records") {
		t.Errorf("skip counts:\n%s", got)
	}
}

// TestLongExpressionsPlanLinearly: a flat chain of terms (1+1+...+1, and a WHERE of
// ANDs) plans and prints in time linear in its length: four times the terms takes well
// under the sixteen times that quadratic planning took. (BenchmarkLongExpression plans
// 100,000 terms; the test keeps to 40,000, which -race makes slow enough.)
func TestLongExpressionsPlanLinearly(t *testing.T) {
	s, _ := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: t.TempDir()})
	took := func(sql string) time.Duration {
		best := time.Hour
		for range 3 {
			began := time.Now()
			if err := s.Exec(context.Background(), sql); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(began))
		}
		return best
	}
	for name, chain := range map[string]func(n int) string{
		"sum": func(n int) string { return "EXPLAIN SELECT " + strings.Repeat("1 + ", n-1) + "1;" },
		"and": func(n int) string { return "EXPLAIN SELECT 1 WHERE " + strings.Repeat("1 = 1 AND ", n-1) + "1 = 1;" },
	} {
		// Below 10,000 terms fixed costs and the collector still blur the ratio.
		short, long := took(chain(10_000)), took(chain(40_000))
		if long > 9*short {
			t.Errorf("%s: 10,000 terms in %v, 40,000 in %v: not linear", name, short, long)
		}
	}
}

// TestCheckpointRetention: a stopped job keeps its checkpoints by default
// (RETAIN_ON_CANCELLATION, so it resumes), and deletes them with
// NO_EXTERNALIZED_CHECKPOINTS.
func TestCheckpointRetention(t *testing.T) {
	for retention, kept := range map[string]bool{"": true, "RETAIN_ON_CANCELLATION": true, "NO_EXTERNALIZED_CHECKPOINTS": false} {
		state := t.TempDir()
		set := ""
		if retention != "" {
			set = "SET 'execution.checkpointing.externalized-checkpoint-retention' = '" + retention + "';"
		}
		s, _ := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: state})
		err := s.Exec(context.Background(), set+`SET 'execution.checkpointing.interval' = '50 ms';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT id FROM gen;`)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if err := s.Exec(context.Background(), "STOP JOB 'insert-hole';"); err != nil {
			t.Fatal(err)
		}
		s.Wait()
		chks, _ := filepath.Glob(filepath.Join(state, "insert-hole", "checkpoints", "chk-*"))
		if (len(chks) > 0) != kept {
			t.Errorf("retention %q: after a stop, checkpoints %v", retention, chks)
		}
	}
}

// TestShowFunctions: SHOW FUNCTIONS lists the function table's names, scalar and
// aggregate.
func TestShowFunctions(t *testing.T) {
	var out strings.Builder
	s, _ := NewSession(Config{Out: &out, Err: io.Discard, StateDir: t.TempDir()})
	if err := s.Exec(context.Background(), "SHOW FUNCTIONS;"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"function name", " ABS |", " COUNT |", " JSON_OBJECT |", " STR_TO_MAP |"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("SHOW FUNCTIONS lacks %q", name)
		}
	}
}
