package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// savepointJob is sinkJob over 15000 rows (three seconds).
func savepointJob(createSink, insert string) string {
	return strings.NewReplacer("'30000'", "'15000'").Replace(sinkJob(createSink, insert))
}

// savepointPath returns the path a savepoint command printed.
func savepointPath(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`Savepoint completed\. Path: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no savepoint path in %q", out)
	}
	return m[1]
}

// stopWithSavepoint lets the job of p run for d, stops it with a savepoint into a new
// directory and returns the savepoint's path, moved elsewhere: a savepoint is
// relocatable.
func stopWithSavepoint(t *testing.T, p *started, state, job string, d time.Duration) string {
	t.Helper()
	time.Sleep(d)
	out, errOut, code := runCLI(t, "", "stop", "--state-dir", state, "--savepoint-path", t.TempDir(), job)
	if code != 0 {
		t.Fatalf("stop with savepoint: exit %d: %s\n%s", code, errOut, p.errOut)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("the stopped job: exit %d\n%s", code, p.errOut)
	}
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(savepointPath(t, out), moved); err != nil {
		t.Fatal(err)
	}
	return moved
}

// resumeFrom runs script from savepoint with a new state directory and extra args.
func resumeFrom(t *testing.T, script, savepoint string, args ...string) string {
	t.Helper()
	_, errOut, code := runCLI(t, "", append([]string{"-f", script, "--state-dir", t.TempDir(), "-s", savepoint}, args...)...)
	if code != 0 || !strings.Contains(errOut, "starting from savepoint") {
		t.Fatalf("resuming from the savepoint: exit %d\n%s", code, errOut)
	}
	return errOut
}

// TestSavepointRoundTrip: a job into each exactly-once sink, stopped with a savepoint
// mid-way, the savepoint moved elsewhere and the job resumed from it in another state
// directory, leaves the sink as an uninterrupted run does: no row twice, none missing.
// The embedded table's job also takes a savepoint while running, which restores to the
// same end.
func TestSavepointRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	type sink struct {
		create func(t *testing.T) string
		insert string
		read   func(t *testing.T, create string) []string
	}
	appendOnly := "INSERT INTO out SELECT id, k, v FROM gen"
	sinks := map[string]sink{
		"embedded": {
			create: func(t *testing.T) string {
				return fmt.Sprintf(`CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%s')`,
					filepath.Join(t.TempDir(), "out.db"))
			},
			insert: "INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k",
			read: func(t *testing.T, create string) []string {
				out, errOut, code := runCLI(t, "", "-e", create+"; SELECT * FROM out;", "--format", "csv", "--state-dir", t.TempDir())
				if code != 0 {
					t.Fatalf("reading the table back: %s", errOut)
				}
				return strings.Split(strings.TrimSpace(out), "\n")
			},
		},
		"filesystem": {
			create: func(t *testing.T) string {
				return fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv')`,
					filepath.Join(t.TempDir(), "out"))
			},
			insert: appendOnly,
			read: func(t *testing.T, create string) []string {
				return committedRows(strings.Split(strings.Split(create, "'path' = '")[1], "'")[0])
			},
		},
		"postgres": {
			create: func(t *testing.T) string {
				url, _ := pgDB(t, "CREATE TABLE out (id bigint, k bigint, v bigint)")
				return fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'postgres', 'url' = '%s',
  'table-name' = 'out', 'sink.delivery-guarantee' = 'exactly-once')`, url)
			},
			insert: appendOnly,
			read: func(t *testing.T, create string) []string {
				url := strings.Split(strings.Split(create, "'url' = '")[1], "'")[0]
				conn, err := pgx.Connect(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(context.Background())
				rows, err := queryRows(conn, "SELECT id, k, v FROM out")
				if err != nil {
					t.Fatal(err)
				}
				sort.Strings(rows)
				return rows
			},
		},
		"kafka": {
			create: func(t *testing.T) string {
				return fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '%s', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'sp')`, kafkaCluster(t, 1, "out"))
			},
			insert: appendOnly,
			read: func(t *testing.T, create string) []string {
				addr := strings.Split(strings.Split(create, "'properties.bootstrap.servers' = '")[1], "'")[0]
				rows, err := kafkaCommitted(t, addr, "out")
				if err != nil {
					t.Fatal(err)
				}
				return sortedCopy(rows)
			},
		},
	}
	for name, s := range sinks {
		t.Run(name, func(t *testing.T) {
			wantCreate := s.create(t)
			if _, errOut, code := runCLI(t, "", "-f", writeScript(t, savepointJob(wantCreate, s.insert)), "--state-dir", t.TempDir()); code != 0 {
				t.Fatalf("failure-free run: %s", errOut)
			}
			want := s.read(t, wantCreate)
			if len(want) < 300 {
				t.Fatalf("the failure-free run wrote %d rows", len(want))
			}

			create := s.create(t)
			script := writeScript(t, savepointJob(create, s.insert))
			state := t.TempDir()
			p := start(t, "-f", script, "--state-dir", state)
			var running string
			if name == "embedded" {
				time.Sleep(800 * time.Millisecond)
				out, errOut, code := runCLI(t, "", "savepoint", "--state-dir", state, "insert-out", t.TempDir())
				if code != 0 {
					t.Fatalf("savepoint of the running job: exit %d: %s", code, errOut)
				}
				running = savepointPath(t, out)
			}
			savepoint := stopWithSavepoint(t, p, state, "insert-out", 800*time.Millisecond)
			if got := s.read(t, create); len(got) == 0 || len(got) >= len(want) && name != "embedded" {
				t.Fatalf("stopped mid-way, the sink holds %d of %d rows", len(got), len(want))
			}
			resumeFrom(t, script, savepoint)
			if got := s.read(t, create); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("resumed from the savepoint: %d rows, want %d\n%s", len(got), len(want), diffLines(strings.Join(want, "\n"), strings.Join(got, "\n")))
			}
			if running != "" {
				again := s.create(t)
				resumeFrom(t, writeScript(t, savepointJob(again, s.insert)), running)
				if got := s.read(t, again); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("resumed from the running job's savepoint:\n%s", diffLines(strings.Join(want, "\n"), strings.Join(got, "\n")))
				}
			}
		})
	}
}

// countsJob is the aggregate the edit tests start from, into the embedded table at
// path, with insert as its INSERT (the table counts has columns k, c, s).
func countsJob(path, extraTables, insert string) string {
	create := fmt.Sprintf(`CREATE TABLE counts (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%s');
CREATE TABLE counts2 (k BIGINT, s BIGINT, c BIGINT, twice BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%s2')%s`,
		path, path, extraTables)
	return savepointJob(create, insert)
}

const baseInsert = "INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k"

// readTable reads table of the embedded tables created by script.
func readTable(t *testing.T, script, table string) string {
	t.Helper()
	var creates []string
	for _, stmt := range strings.Split(script, ";") {
		if strings.Contains(stmt, "'embedded'") {
			creates = append(creates, stmt)
		}
	}
	out, errOut, code := runCLI(t, "", "-e", strings.Join(creates, ";")+"; SELECT * FROM "+table+";", "--format", "csv", "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("reading %s back: %s", table, errOut)
	}
	return out
}

// baseSavepoint runs the base aggregate and stops it with a savepoint mid-way.
func baseSavepoint(t *testing.T) string {
	state := t.TempDir()
	p := start(t, "-f", writeScript(t, countsJob(filepath.Join(t.TempDir(), "base.db"), "", baseInsert)), "--state-dir", state)
	return stopWithSavepoint(t, p, state, "insert-counts", 1200*time.Millisecond)
}

// TestSavepointQueryEdits: a savepoint of an aggregate restores into the edits of the
// query that keep what its state means, each giving the edited query's result over
// the whole input; an edit that changes the meaning fails, naming the operator and
// what changed, and runs when the unclaimed state may go.
func TestSavepointQueryEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	savepoint := baseSavepoint(t)
	compatible := []struct{ name, insert, table string }{
		{"HAVING added", "INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k HAVING SUM(v) > 5000", "counts"},
		{"filter and renamed columns after the aggregate", "INSERT INTO counts SELECT k, n, total FROM (SELECT k, COUNT(*) AS n, SUM(v) AS total FROM gen GROUP BY k) WHERE k <= 200", "counts"},
		{"columns reordered and added, another sink", "INSERT INTO counts2 SELECT k, SUM(v), COUNT(*), 2 * COUNT(*) FROM gen GROUP BY k", "counts2"},
	}
	for _, e := range compatible {
		t.Run(e.name, func(t *testing.T) {
			want := countsJob(filepath.Join(t.TempDir(), "want.db"), "", e.insert)
			if _, errOut, code := runCLI(t, "", "-f", writeScript(t, want), "--state-dir", t.TempDir()); code != 0 {
				t.Fatalf("failure-free run: %s", errOut)
			}
			got := countsJob(filepath.Join(t.TempDir(), "got.db"), "", e.insert)
			errOut := resumeFrom(t, writeScript(t, got), savepoint)
			if strings.Contains(errOut, "not claimed") {
				t.Errorf("state was dropped:\n%s", errOut)
			}
			if w, g := readTable(t, want, e.table), readTable(t, got, e.table); g != w {
				t.Errorf("resumed from the original's savepoint:\n%s", diffLines(w, g))
			}
		})
	}
	incompatible := []struct{ name, insert, changed string }{
		{"grouping key changed", "INSERT INTO counts SELECT k % 100, COUNT(*), SUM(v) FROM gen GROUP BY k % 100", "groupBy=[MOD(k, 100)]"},
		{"aggregate function changed", "INSERT INTO counts SELECT k, COUNT(*), MAX(v) FROM gen GROUP BY k", "MAX(v)"},
	}
	for _, e := range incompatible {
		t.Run(e.name, func(t *testing.T) {
			script := writeScript(t, countsJob(filepath.Join(t.TempDir(), "got.db"), "", e.insert))
			_, errOut, code := runCLI(t, "", "-f", script, "--state-dir", t.TempDir(), "-s", savepoint)
			if code == 0 || !strings.Contains(errOut, "cannot start from savepoint") || !regexp.MustCompile(`aggregate-[0-9a-f]{12}`).MatchString(errOut) ||
				!strings.Contains(errOut, e.changed) || !strings.Contains(errOut, "--allow-non-restored-state") {
				t.Errorf("exit %d:\n%s", code, errOut)
			}
			resumeFrom(t, script, savepoint, "--allow-non-restored-state")
		})
	}
}

// TestSavepointDryRun: --dry-run reports, for a set of edits, what each stateful
// operator restores, and exits non-zero where the restore would fail; the reports are
// checked against testdata/savepoint/dry_run.golden (-update rewrites it).
func TestSavepointDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	savepoint := baseSavepoint(t)
	edits := []string{
		baseInsert,
		"INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k HAVING SUM(v) > 5000",
		"INSERT INTO counts2 SELECT k, SUM(v), COUNT(*), 2 * COUNT(*) FROM gen GROUP BY k",
		"INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM gen WHERE v > 10 GROUP BY k",
		"INSERT INTO counts SELECT k, COUNT(*), MAX(v) FROM gen GROUP BY k",
	}
	numbers := regexp.MustCompile(`\d+ keys, \d+ bytes|\d+ bytes|checkpoint \d+`)
	var b strings.Builder
	for _, insert := range edits {
		script := writeScript(t, countsJob(filepath.Join(t.TempDir(), "t.db"), "", insert))
		for _, args := range [][]string{{}, {"--allow-non-restored-state"}} {
			out, errOut, code := runCLI(t, "", append([]string{"-f", script, "--state-dir", t.TempDir(), "-s", savepoint, "--dry-run"}, args...)...)
			report := strings.ReplaceAll(out, savepoint, "SAVEPOINT")
			fmt.Fprintf(&b, "-- %s %s\n%sexit %d\n\n", insert, strings.Join(args, " "), numbers.ReplaceAllString(report, "N"), code)
			if (code == 0) != strings.Contains(out, "would succeed") || (code != 0 && errOut == "") {
				t.Errorf("%s %v: exit %d with\n%s%s", insert, args, code, out, errOut)
			}
		}
	}
	golden := filepath.Join("testdata", "savepoint", "dry_run.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("dry-run reports differ from %s:\n%s", golden, diffLines(string(want), b.String()))
	}
}

// TestKillWhileTakingSavepoint: a SIGKILL while a savepoint is being written leaves a
// directory without _metadata, which neither inspect nor -s takes for a savepoint; the
// job resumes from its checkpoints and ends as a failure-free run does.
func TestKillWhileTakingSavepoint(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	job := func(path string) string {
		create := fmt.Sprintf(`CREATE TABLE counts (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%s')`, path)
		return strings.NewReplacer("'30000'", "'400000'", "'5000'", "'100000'", "'fields.k.min' = '1', 'fields.k.max' = '300'",
			"'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '400000'").Replace(
			sinkJob(create, "INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k"))
	}
	totals := func(script string) string {
		return readTable(t, strings.Replace(script, "SELECT * FROM", "SELECT COUNT(*), SUM(c), SUM(s) FROM", 1), "counts")
	}
	wantScript := job(filepath.Join(t.TempDir(), "want.db"))
	if _, errOut, code := runCLI(t, "", "-f", writeScript(t, wantScript), "--state-dir", t.TempDir()); code != 0 {
		t.Fatalf("failure-free run: %s", errOut)
	}
	want := totals(wantScript)
	for attempt := 1; ; attempt++ {
		script := job(filepath.Join(t.TempDir(), "got.db"))
		path, state, target := writeScript(t, script), t.TempDir(), t.TempDir()
		p := start(t, "-f", path, "--state-dir", state)
		time.Sleep(time.Second)
		asked := make(chan struct{})
		go func() {
			defer close(asked)
			streamsqlCmd("savepoint", "--state-dir", state, "insert-counts", target).Run() // fails: the job dies
		}()
		half := ""
		for deadline := time.Now().Add(10 * time.Second); half == "" && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			dirs, _ := filepath.Glob(filepath.Join(target, "savepoint-*"))
			if len(dirs) == 1 {
				if _, err := os.Stat(filepath.Join(dirs[0], "_metadata")); err != nil {
					half = dirs[0]
				} else {
					break // written before the kill could land
				}
			}
		}
		if half == "" {
			p.cmd.Process.Kill()
			p.wait()
			<-asked
			if attempt == 3 {
				t.Fatal("three savepoints were written before the kill could land")
			}
			continue
		}
		p.cmd.Process.Kill()
		p.wait()
		<-asked
		if _, errOut, code := runCLI(t, "", "savepoint", "inspect", half); code == 0 || !strings.Contains(errOut, "not a complete savepoint") {
			t.Errorf("inspect of the half savepoint: exit %d: %s", code, errOut)
		}
		if _, errOut, code := runCLI(t, "", "-f", path, "--state-dir", t.TempDir(), "-s", half); code == 0 || !strings.Contains(errOut, "not a complete savepoint") {
			t.Errorf("-s with the half savepoint: exit %d: %s", code, errOut)
		}
		_, errOut, code := runCLI(t, "", "-f", path, "--state-dir", state)
		if code != 0 || !strings.Contains(errOut, "restoring checkpoint") {
			t.Fatalf("resuming from the checkpoints: exit %d\n%s", code, errOut)
		}
		if got := totals(script); got != want {
			t.Errorf("after the kill: %q, want %q", got, want)
		}
		return
	}
}

// goldenSavepoint is a savepoint written by the first version of the format, with the
// script of its job: every later build must restore it.
const goldenSavepoint = "testdata/savepoint/v1"

// TestGoldenSavepointRestores: the golden savepoint, copied elsewhere, restores into its
// script and gives the result of a run that was never stopped. With
// STREAMSQL_WRITE_GOLDEN_SAVEPOINT=1 it writes the savepoint anew instead (only when
// the format's version changes: the old one then stays too).
func TestGoldenSavepointRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	script, err := filepath.Abs(filepath.Join(goldenSavepoint, "job.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("STREAMSQL_WRITE_GOLDEN_SAVEPOINT") == "1" {
		state := t.TempDir()
		p := start(t, "-f", script, "--state-dir", state)
		time.Sleep(1500 * time.Millisecond)
		out, errOut, code := runCLI(t, "", "stop", "--state-dir", state, "--savepoint-path", t.TempDir(), "select-1")
		if code != 0 || p.wait() != 0 {
			t.Fatalf("stop: %s", errOut)
		}
		dst := filepath.Join(goldenSavepoint, "savepoint")
		os.RemoveAll(dst)
		if err := os.CopyFS(dst, os.DirFS(savepointPath(t, out))); err != nil {
			t.Fatal(err)
		}
		return
	}
	copied := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(copied, os.DirFS(filepath.Join(goldenSavepoint, "savepoint"))); err != nil {
		t.Fatal(err)
	}
	want, errOut, code := runCLI(t, "", "-f", script, "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("uninterrupted run: %s", errOut)
	}
	got, errOut, code := runCLI(t, "", "-f", script, "--state-dir", t.TempDir(), "-s", copied)
	if code != 0 || !strings.Contains(errOut, "starting from savepoint") {
		t.Fatalf("restoring the golden savepoint: exit %d\n%s", code, errOut)
	}
	if g, w := sortBody(got), sortBody(want); g != w {
		t.Errorf("restored from the golden savepoint:\n%s", diffLines(w, g))
	}
	// The same job over other values from the savepoint on: the counts add up to the
	// input's, the values before it come from the savepoint's state and those after it
	// from the source, resumed where it was.
	text, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	other := writeScript(t, strings.Replace(string(text), "'fields.v.min' = '0', 'fields.v.max' = '1000'", "'fields.v.min' = '5000', 'fields.v.max' = '6000'", 1))
	got, errOut, code = runCLI(t, "", "-f", other, "--state-dir", t.TempDir(), "-s", copied)
	if code != 0 {
		t.Fatalf("restoring into other values: exit %d\n%s", code, errOut)
	}
	var rows, small, large int64
	for _, line := range strings.Split(strings.TrimSpace(got), "\n")[1:] {
		var k, c, s, m int64
		fmt.Sscanf(line, "%d,%d,%d,%d", &k, &c, &s, &m)
		rows += c
		if m >= 5000 {
			large++
		}
		if s < 5000*c {
			small++
		}
	}
	if rows != 3000 || small == 0 || large == 0 {
		t.Errorf("restored into other values: %d rows, %d keys with values from the savepoint, %d with new ones:\n%s", rows, small, large, got)
	}
}

// rescaleScript is four jobs over a Kafka topic of four partitions, at parallelism p: a
// group aggregate, a window aggregate, a join and a Top-N, each upserted into an
// embedded table under dir. With savepoints, each job starts from its own.
func rescaleScript(addr, dir string, p int, savepoints map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '%d';
CREATE TABLE src (id BIGINT, k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' HOUR) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%[2]s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'csv');
CREATE TABLE dim (k BIGINT, name STRING) WITH (
  'connector' = 'kafka', 'topic' = 'dim', 'properties.bootstrap.servers' = '%[2]s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'csv');
CREATE TABLE agg (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%[3]s/agg.db');
CREATE TABLE win (ws TIMESTAMP(3), k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (ws, k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%[3]s/win.db');
CREATE TABLE joined (id BIGINT, name STRING, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%[3]s/joined.db');
CREATE TABLE top (k BIGINT, rn BIGINT, id BIGINT, v BIGINT, PRIMARY KEY (k, rn) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%[3]s/top.db');
CREATE TABLE over_t (id BIGINT, k BIGINT, s BIGINT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%[3]s/over.db');
CREATE TABLE ver (id BIGINT, k BIGINT, v BIGINT, ts TIMESTAMP(3), vts AS ts + INTERVAL '5' SECOND,
  WATERMARK FOR vts AS vts - INTERVAL '1' HOUR, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%[2]s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'csv');
CREATE TABLE temporal_t (id BIGINT, k BIGINT, rid BIGINT, rv BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '%[3]s/temporal.db');
`, p, addr, dir)
	inserts := map[string]string{
		"insert-agg":    "INSERT INTO agg SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k",
		"insert-win":    "INSERT INTO win SELECT window_start, k, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k",
		"insert-joined": "INSERT INTO joined SELECT s.id, d.name, s.v FROM src s JOIN dim d ON s.k = d.k",
		"insert-top":    "INSERT INTO top SELECT k, rn, id, v FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM src) WHERE rn <= 3",
		// Its rows wait for the watermark, an hour behind, so they are pending state
		// until the drain at the end.
		"insert-over_t": "INSERT INTO over_t SELECT id, k, SUM(v) OVER w, COUNT(*) OVER w FROM src " +
			"WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW)",
		// Each row joins the latest earlier row of its key at least 5 s older (a version
		// of it from 5 s after its time on); the rows wait for the watermark, an hour
		// behind, so the rows and the versions are state until the drain at the end.
		"insert-temporal_t": "INSERT INTO temporal_t SELECT s.id, s.k, r.id, r.v FROM src s " +
			"LEFT JOIN ver FOR SYSTEM_TIME AS OF s.ts AS r ON s.k = r.k",
	}
	for _, job := range rescaleJobs {
		if sp := savepoints[job]; sp != "" {
			fmt.Fprintf(&b, "SET 'execution.savepoint.path' = '%s';\n", sp)
		}
		fmt.Fprintf(&b, "%s;\n", inserts[job])
	}
	return b.String()
}

var rescaleJobs = []string{"insert-agg", "insert-win", "insert-joined", "insert-top", "insert-over_t", "insert-temporal_t"}

// rescaleInput is the records of the topic in, from first up to before last.
func rescaleInput(first, last int) []string {
	var rows []string
	for id := first; id < last; id++ {
		ts := time.UnixMilli(1_700_000_000_000 + int64(id)*100).UTC().Format("2006-01-02 15:04:05.000")
		rows = append(rows, fmt.Sprintf("%d,%d,%d,%s", id, id*7%50, id*31%1000, ts))
	}
	return rows
}

// rescaleTables reads the six tables of rescaleScript under dir.
func rescaleTables(t *testing.T, script string) map[string]string {
	out := map[string]string{}
	for _, table := range []string{"agg", "win", "joined", "top", "over_t", "temporal_t"} {
		out[table] = readTable(t, script, table)
	}
	return out
}

// stopAll stops the script's jobs (with savepoints under target, if set) and waits for
// the process; it returns each job's savepoint.
func stopAll(t *testing.T, p *started, state, target string, drain bool) map[string]string {
	t.Helper()
	savepoints := map[string]string{}
	for _, job := range rescaleJobs {
		args := []string{"stop", "--state-dir", state}
		if target != "" {
			args = append(args, "--savepoint-path", target)
		}
		if drain {
			args = append(args, "--drain")
		}
		out, errOut, code := runCLI(t, "", append(args, job)...)
		if code != 0 {
			t.Fatalf("stopping %s: %s\n%s", job, errOut, p.errOut)
		}
		if target != "" {
			savepoints[job] = savepointPath(t, out)
		}
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.errOut)
	}
	return savepoints
}

// TestRescale: six stateful jobs (group aggregate, window aggregate, join, Top-N, OVER,
// temporal join) over
// a Kafka source, stopped mid-way at parallelism 2 with savepoints and restored from
// them at 4, stopped again and restarted from their own checkpoints at 1, stopped again
// and started elsewhere from those retained checkpoints (-s chk-N) at 2, end with the
// tables of a run that was never stopped or rescaled.
func TestRescale(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	run := func(addr, state, script string) *started {
		return start(t, "-f", writeScript(t, script), "--state-dir", state)
	}
	dims := make([]string, 50)
	for k := range dims {
		dims[k] = fmt.Sprintf("%d,name%d", k, k)
	}
	settle := func() { time.Sleep(1500 * time.Millisecond) }

	// Uninterrupted, at parallelism 2, drained at the end.
	addr := kafkaCluster(t, 4, "in", "dim")
	kafkaProduce(t, addr, "dim", dims)
	kafkaProduce(t, addr, "in", rescaleInput(0, 3000))
	want := rescaleScript(addr, t.TempDir(), 2, nil)
	state := t.TempDir()
	p := run(addr, state, want)
	settle()
	stopAll(t, p, state, "", true)
	wantTables := rescaleTables(t, want)
	if !strings.Contains(wantTables["top"], "\n") || strings.Count(wantTables["win"], "\n") < 100 || strings.Count(wantTables["over_t"], "\n") < 2999 ||
		strings.Count(wantTables["temporal_t"], "\n") < 2999 {
		t.Fatalf("the uninterrupted run wrote %v", wantTables)
	}

	addr = kafkaCluster(t, 4, "in", "dim")
	kafkaProduce(t, addr, "dim", dims)
	kafkaProduce(t, addr, "in", rescaleInput(0, 1000))
	dir, state := t.TempDir(), t.TempDir()
	p = run(addr, state, rescaleScript(addr, dir, 2, nil))
	settle()
	savepoints := stopAll(t, p, state, t.TempDir(), false)

	kafkaProduce(t, addr, "in", rescaleInput(1000, 2000))
	state = t.TempDir()
	p = run(addr, state, rescaleScript(addr, dir, 4, savepoints))
	settle()
	stopAll(t, p, state, "", false)
	if !strings.Contains(p.errOut.String(), "starting from savepoint") {
		t.Errorf("2 -> 4 did not start from the savepoints:\n%s", p.errOut)
	}

	kafkaProduce(t, addr, "in", rescaleInput(2000, 2500))
	p = run(addr, state, rescaleScript(addr, dir, 1, nil))
	settle()
	stopAll(t, p, state, "", false)
	if n := strings.Count(p.errOut.String(), "rescaling: checkpoint"); n != len(rescaleJobs) {
		t.Errorf("4 -> 1 rescaled %d jobs from their checkpoints:\n%s", n, p.errOut)
	}

	kafkaProduce(t, addr, "in", rescaleInput(2500, 3000))
	retained := map[string]string{}
	for _, job := range rescaleJobs {
		chks, _ := filepath.Glob(filepath.Join(state, job, "checkpoints", "chk-*"))
		sort.Slice(chks, func(i, k int) bool {
			return len(chks[i]) < len(chks[k]) || len(chks[i]) == len(chks[k]) && chks[i] < chks[k]
		})
		if len(chks) == 0 {
			t.Fatalf("%s retained no checkpoint", job)
		}
		retained[job] = chks[len(chks)-1]
	}
	got, elsewhere := rescaleScript(addr, dir, 2, retained), t.TempDir()
	p = run(addr, elsewhere, got)
	settle()
	stopAll(t, p, elsewhere, "", true)
	for table, w := range wantTables {
		if g := rescaleTables(t, got)[table]; g != w {
			t.Errorf("table %s after 2 -> 4 -> 1 -> 2:\n%s", table, diffLines(w, g))
		}
	}
}

// TestSavepointCommandErrors: each savepoint command that cannot do its work exits
// non-zero with one clear line.
func TestSavepointCommandErrors(t *testing.T) {
	state := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"savepoint", "--state-dir", state, "nosuch"}, "no running job named 'nosuch'"},
		{[]string{"stop", "--state-dir", state, "--savepoint-path", t.TempDir(), "nosuch"}, "no running job named 'nosuch'"},
		{[]string{"savepoint", "inspect", filepath.Join(state, "nothing")}, "no such file or directory"},
		{[]string{"savepoint", "inspect", state}, "not a complete savepoint"},
		{[]string{"-e", "SELECT 1;", "-s", state}, "needs checkpoints"},
		{[]string{"-e", "SET 'execution.checkpointing.interval' = '1 s'; SELECT 1;", "-s", state}, "not a complete savepoint"},
		{[]string{"-e", "SELECT 1;", "--dry-run"}, "give one with -s PATH"},
	}
	for _, c := range cases {
		_, errOut, code := runCLI(t, "", c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d: %q, want one line about %q", c.args, code, errOut, c.want)
		}
	}
	p := start(t, "-e", `SET 'parallelism.default' = '1';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT id FROM gen;`, "--state-dir", state)
	defer func() {
		p.cmd.Process.Kill()
		p.wait()
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if out, _, _ := runCLI(t, "", "list", "--state-dir", state); strings.Contains(out, "RUNNING") {
			break
		}
	}
	_, errOut, code := runCLI(t, "", "savepoint", "--state-dir", state, "insert-hole")
	if code == 0 || !strings.Contains(errOut, "takes no checkpoints") {
		t.Errorf("a savepoint of a job without checkpoints: exit %d: %s", code, errOut)
	}
}
