package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// started is a streamsql process running in the background.
type started struct {
	cmd         *exec.Cmd
	out, errOut *strings.Builder
}

func start(t *testing.T, args ...string) *started {
	t.Helper()
	p := &started{cmd: streamsqlCmd(args...), out: &strings.Builder{}, errOut: &strings.Builder{}}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// kill SIGKILLs the process after d; it must not have ended by itself.
func (p *started) kill(t *testing.T, d time.Duration) {
	t.Helper()
	time.Sleep(d)
	p.cmd.Process.Kill()
	if err := p.cmd.Wait(); err == nil {
		t.Fatalf("the job finished before it was killed")
	}
}

// wait waits for the process and returns its exit code.
func (p *started) wait() int {
	p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode()
}

// embeddedCounts is a keyed aggregate upserted into the embedded table counts at path,
// from a datagen source of the seed.
func embeddedCounts(path string, seed int) (create, script string) {
	create = fmt.Sprintf(`CREATE TABLE counts (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'embedded', 'path' = '%s')`, path)
	script = strings.Replace(sinkJob(create, "INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k"),
		"'seed' = '7'", fmt.Sprintf("'seed' = '%d'", seed), 1)
	return create, script
}

// readEmbedded reads the table counts of create back through another process.
func readEmbedded(t *testing.T, create string) string {
	t.Helper()
	out, errOut, code := runCLI(t, "", "-e", create+"; SELECT * FROM counts;", "--format", "csv", "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("reading the table back: %s", errOut)
	}
	return out
}

// tablePath is the 'path' option of create.
func tablePath(create string) string {
	return strings.Split(strings.Split(create, "'path' = '")[1], "'")[0]
}

// failureFreeCounts writes the embeddedCounts script of seed 7 and returns the table it
// creates, the script's path and the table's content after a failure-free run, with the
// table removed again.
func failureFreeCounts(t *testing.T) (create, path, want string) {
	create, script := embeddedCounts(filepath.Join(t.TempDir(), "counts.db"), 7)
	path = writeScript(t, script)
	runUntilDone(t, path, t.TempDir(), 0, nil)
	want = readEmbedded(t, create)
	os.Remove(tablePath(create))
	return create, path, want
}

// resumeAndCompare runs the script again on state: it must resume from a checkpoint and
// leave the table as want.
func resumeAndCompare(t *testing.T, path, state, create, want string) {
	t.Helper()
	p := start(t, "-f", path, "--state-dir", state)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.errOut)
	}
	if !strings.Contains(p.errOut.String(), "restoring checkpoint") {
		t.Errorf("did not resume:\n%s", p.errOut)
	}
	if got := readEmbedded(t, create); got != want {
		t.Errorf("the resumed run's table differs from a failure-free run's:\n%s", diffLines(want, got))
	}
}

// TestJobsKeepTheirOwnState: two scripts of the same shape over different inputs and
// sinks share a state directory; each, killed and restarted in turn, ends with its own
// failure-free result.
func TestJobsKeepTheirOwnState(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	state := t.TempDir()
	var creates, scripts, wants []string
	for i, seed := range []int{7, 8} {
		create, script := embeddedCounts(filepath.Join(t.TempDir(), "counts.db"), seed)
		if i == 1 { // the same query into a sink of another name: another job
			script = strings.ReplaceAll(strings.ReplaceAll(script, "TABLE counts", "TABLE counts2"), "INTO counts", "INTO counts2")
		}
		runUntilDone(t, writeScript(t, script), t.TempDir(), 0, nil)
		creates, scripts = append(creates, create), append(scripts, writeScript(t, script))
		wants = append(wants, readEmbedded(t, create))
		os.Remove(tablePath(create))
	}
	for round := 0; round < 3; round++ {
		for i := range scripts {
			start(t, "-f", scripts[i], "--state-dir", state).kill(t, time.Duration(400+150*round)*time.Millisecond)
		}
	}
	for i := range scripts {
		p := start(t, "-f", scripts[i], "--state-dir", state)
		if code := p.wait(); code != 0 {
			t.Fatalf("script %d: exit %d\n%s", i, code, p.errOut)
		}
		if !strings.Contains(p.errOut.String(), "restoring checkpoint") {
			t.Errorf("script %d did not resume:\n%s", i, p.errOut)
		}
		if got := readEmbedded(t, creates[i]); got != wants[i] {
			t.Errorf("script %d: after kills the table differs:\n%s", i, diffLines(wants[i], got))
		}
	}
}

// TestMisspeltOptionFailsFast: an option no restart can fix fails the job at once, even
// with checkpointing and its default restart strategy, naming the nearest right option.
func TestMisspeltOptionFailsFast(t *testing.T) {
	script := writeScript(t, `
SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE src (line STRING) WITH ('connector' = 'socket', 'hostname' = 'localhost', 'port' = '9', 'format' = 'csv', 'source.wall' = 'true');
CREATE TABLE out (line STRING) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT line FROM src;`)
	began := time.Now()
	_, errOut, code := runCLI(t, "", "-f", script, "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "'source.wall'") || !strings.Contains(errOut, "did you mean 'source.wal'?") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
	if took := time.Since(began); took > 5*time.Second || strings.Contains(errOut, "restart") {
		t.Errorf("took %v, restarting:\n%s", took, errOut)
	}
}

// TestScriptSkipsFinishedJobs: a script of two INSERT jobs into exactly-once sinks,
// killed after the first finished, resumes the second and skips the first: every row is
// once in both sinks. Run again once complete, it starts over.
func TestScriptSkipsFinishedJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	quick, slow := filepath.Join(t.TempDir(), "quick"), filepath.Join(t.TempDir(), "slow")
	script := writeScript(t, fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE few (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '500',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '500');
CREATE TABLE many (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000', 'rows-per-second' = '5000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000');
CREATE TABLE quick (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE slow (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO quick SELECT id FROM few;
INSERT INTO slow SELECT id FROM many;`, quick, slow))
	state := t.TempDir()
	p := start(t, "-f", script, "--state-dir", state)
	deadline := time.Now().Add(10 * time.Second)
	for len(committedRows(quick)) < 500 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	p.kill(t, 300*time.Millisecond)
	if n := len(committedRows(quick)); n != 500 {
		t.Fatalf("the first job committed %d rows before the kill", n)
	}
	p = start(t, "-f", script, "--state-dir", state)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.errOut)
	}
	if !strings.Contains(p.errOut.String(), "job insert-quick: finished in an earlier run") {
		t.Errorf("the restart did not skip the finished job:\n%s", p.errOut)
	}
	for dir, n := range map[string]int{quick: 500, slow: 20000} {
		rows := committedRows(dir)
		seen := map[string]bool{}
		for _, r := range rows {
			if seen[r] {
				t.Fatalf("%s: row %s twice", filepath.Base(dir), r)
			}
			seen[r] = true
		}
		if len(rows) != n {
			t.Errorf("%s: %d rows, want %d", filepath.Base(dir), len(rows), n)
		}
	}
	// The script completed: its record is gone, and a third run writes every row again.
	if entries, _ := os.ReadDir(filepath.Join(state, "insert-quick")); len(entries) > 1 {
		t.Errorf("the finished job's directory still holds %d entries", len(entries))
	}
}

// TestDamagedCheckpointsAndState damages, after a kill, a job's latest metadata or its
// state file. The restart either ends with the failure-free result or exits non-zero
// naming the damaged file: never a panic, never a silently different result.
func TestDamagedCheckpointsAndState(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	create, path, want := failureFreeCounts(t)
	table := tablePath(create)
	latest := func(dir string) string {
		chks, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "chk-*", "_metadata"))
		best, id := "", -1
		for _, c := range chks {
			var n int
			fmt.Sscanf(filepath.Base(filepath.Dir(c)), "chk-%d", &n)
			if n > id {
				best, id = c, n
			}
		}
		return best
	}
	flip := func(path string) {
		data, _ := os.ReadFile(path)
		if len(data) > 0 {
			data[len(data)/2] ^= 0x40
		}
		os.WriteFile(path, data, 0o600)
	}
	cases := []struct {
		name    string
		damage  func(t *testing.T, job string)
		refuses string // what the error names, "" when the run must end as the failure-free one
	}{
		{"one metadata copy", func(t *testing.T, job string) { flip(latest(job)) }, ""},
		{"both metadata copies", func(t *testing.T, job string) { flip(latest(job)); flip(latest(job) + ".copy") }, ""},
		{"state deleted", func(t *testing.T, job string) { os.Remove(filepath.Join(job, "state.db")) }, "state.db"},
		{"state emptied", func(t *testing.T, job string) { os.WriteFile(filepath.Join(job, "state.db"), nil, 0o600) }, "state.db"},
		{"state bytes flipped", func(t *testing.T, job string) {
			f, _ := os.OpenFile(filepath.Join(job, "state.db"), os.O_RDWR, 0)
			st, _ := f.Stat()
			buf := make([]byte, 1)
			for off := int64(4096 * 2); off < st.Size(); off += 997 {
				f.ReadAt(buf, off)
				buf[0] ^= 0xff
				f.WriteAt(buf, off)
			}
			f.Close()
		}, "state"},
		{"state replaced by an older copy", func(t *testing.T, job string) {
			db := filepath.Join(job, "state.db")
			old, _ := os.ReadFile(db)
			start(t, "-f", path, "--state-dir", filepath.Dir(job)).kill(t, 700*time.Millisecond)
			os.WriteFile(db, old, 0o600)
		}, "state.db"},
		{"state truncated", func(t *testing.T, job string) {
			st, _ := os.Stat(filepath.Join(job, "state.db"))
			os.Truncate(filepath.Join(job, "state.db"), st.Size()/3)
		}, "state.db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(table)
			state := t.TempDir()
			start(t, "-f", path, "--state-dir", state).kill(t, 900*time.Millisecond)
			c.damage(t, filepath.Join(state, "insert-counts"))
			p := start(t, "-f", path, "--state-dir", state)
			code := p.wait()
			errOut := p.errOut.String()
			if strings.Contains(errOut, "panic") || strings.Contains(errOut, "SIGBUS") || strings.Contains(errOut, "goroutine ") {
				t.Fatalf("crashed:\n%.2000s", errOut)
			}
			if code != 0 {
				if c.refuses == "" || !strings.Contains(errOut, c.refuses) {
					t.Fatalf("exit %d:\n%s", code, errOut)
				}
				return
			}
			if got := readEmbedded(t, create); got != want {
				t.Errorf("the damage went unnoticed: the table differs:\n%s\n%s", diffLines(want, got), errOut)
			}
		})
	}
}

// TestDamagedMetadataWithCommittedSink: a transactional sink may have committed the
// latest checkpoint; with both copies of its metadata damaged, falling back would write
// that output again, so the restart refuses, naming the checkpoint and the sink. For the
// filesystem, PostgreSQL and Kafka exactly-once sinks.
func TestDamagedMetadataWithCommittedSink(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	sinks := map[string]func(t *testing.T) string{
		"filesystem": func(t *testing.T) string {
			return fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv')`,
				filepath.Join(t.TempDir(), "out"))
		},
		"postgres": func(t *testing.T) string {
			url, _ := pgDB(t, "CREATE TABLE out (id bigint, k bigint, v bigint)")
			return fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'postgres', 'url' = '%s',
  'table-name' = 'out', 'sink.delivery-guarantee' = 'exactly-once')`, url)
		},
		"kafka": func(t *testing.T) string {
			return fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '%s', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'damaged')`, kafkaCluster(t, 1, "out"))
		},
	}
	for connector, create := range sinks {
		t.Run(connector, func(t *testing.T) {
			path := writeScript(t, sinkJob(create(t), "INSERT INTO out SELECT id, k, v FROM gen"))
			state := t.TempDir()
			start(t, "-f", path, "--state-dir", state).kill(t, 900*time.Millisecond)
			chks, _ := filepath.Glob(filepath.Join(state, "insert-out", "checkpoints", "chk-*", "_metadata"))
			newest, id := "", -1
			for _, c := range chks {
				var n int
				fmt.Sscanf(filepath.Base(filepath.Dir(c)), "chk-%d", &n)
				if n > id {
					newest, id = filepath.Dir(c), n
				}
			}
			if newest == "" {
				t.Fatal("no checkpoint before the kill")
			}
			for _, f := range []string{"_metadata", "_metadata.copy"} {
				os.WriteFile(filepath.Join(newest, f), []byte("crc32c 00000000\n{}"), 0o600)
			}
			_, errOut, code := runCLI(t, "", "-f", path, "--state-dir", state)
			if code == 0 || !strings.Contains(errOut, filepath.Base(newest)) || !strings.Contains(errOut, "sink out ("+connector+")") {
				t.Errorf("exit %d:\n%s", code, errOut)
			}
		})
	}
}

// TestOneProcessPerJob: a second process on a running job, with or without --fresh,
// fails at once naming the first, and removes nothing; the first ends as if alone.
func TestOneProcessPerJob(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	create, script := embeddedCounts(filepath.Join(t.TempDir(), "counts.db"), 7)
	path := writeScript(t, script)
	state := t.TempDir()
	first := start(t, "-f", path, "--state-dir", state)
	time.Sleep(700 * time.Millisecond)
	for _, args := range [][]string{{}, {"--fresh"}} {
		began := time.Now()
		_, errOut, code := runCLI(t, "", append([]string{"-f", path, "--state-dir", state}, args...)...)
		want := fmt.Sprintf("job insert-counts is running in process %d", first.cmd.Process.Pid)
		if code == 0 || !strings.Contains(errOut, want) || time.Since(began) > 3*time.Second {
			t.Errorf("%v: exit %d after %v:\n%s", args, code, time.Since(began), errOut)
		}
	}
	if code := first.wait(); code != 0 {
		t.Fatalf("the first process: exit %d\n%s", code, first.errOut)
	}
	got := readEmbedded(t, create)
	if n := strings.Count(got, "\n"); n != 301 {
		t.Errorf("the first process wrote %d lines", n)
	}
}

// TestSIGTERMStopsGracefully: SIGTERM stops a script's jobs with a final checkpoint and
// exit 0; started again, each resumes from there and ends as a failure-free run does.
func TestSIGTERMStopsGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	create, path, want := failureFreeCounts(t)
	state := t.TempDir()
	for i := 0; i < 3; i++ {
		p := start(t, "-f", path, "--state-dir", state)
		time.Sleep(time.Duration(500+200*i) * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(); code != 0 {
			t.Fatalf("stop %d: exit %d\n%s", i, code, p.errOut)
		}
	}
	resumeAndCompare(t, path, state, create, want)
}

// TestDamagedPendingPartFile: a pending part file damaged after a kill is never
// committed: the restart ends with the failure-free rows or fails naming the file.
func TestDamagedPendingPartFile(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	out := filepath.Join(t.TempDir(), "out")
	create := fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv')`, out)
	path := writeScript(t, sinkJob(create, "INSERT INTO out SELECT id, k, v FROM gen"))
	runUntilDone(t, path, t.TempDir(), 0, nil)
	want := strings.Join(committedRows(out), "\n")
	for attempt := 0; attempt < 20; attempt++ {
		os.RemoveAll(out)
		state := t.TempDir()
		// A part file is pending from a checkpoint's barrier to its completion, a few
		// milliseconds on a fast disk: the kill comes as soon as one shows.
		p := start(t, "-f", path, "--state-dir", state)
		for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if pending, _ := filepath.Glob(filepath.Join(out, ".*.pending")); len(pending) > 0 {
				break
			}
		}
		p.kill(t, 0)
		pending, _ := filepath.Glob(filepath.Join(out, ".*.pending"))
		if len(pending) == 0 {
			continue // committed before the kill; try again
		}
		data, _ := os.ReadFile(pending[0])
		data[len(data)/2] ^= 0x01
		os.WriteFile(pending[0], data, 0o600)
		_, errOut, code := runCLI(t, "", "-f", path, "--state-dir", state)
		if code != 0 {
			if !strings.Contains(errOut, filepath.Base(pending[0])) || !strings.Contains(errOut, "damaged") {
				t.Fatalf("exit %d:\n%s", code, errOut)
			}
			return
		}
		if got := strings.Join(committedRows(out), "\n"); got != want {
			t.Fatalf("a damaged pending file changed the output:\n%s", diffLines(want, got))
		}
		return
	}
	t.Fatal("no pending part file at any of the kills")
}

// TestControlFromAnotherTerminal: `streamsql list` shows the jobs of a running process
// through its control socket (mode 0600), `streamsql stop` stops one gracefully (the
// process then exits 0), and the script started again resumes and ends as a failure-free
// run does.
func TestControlFromAnotherTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	create, path, want := failureFreeCounts(t)
	state := t.TempDir()
	p := start(t, "-f", path, "--state-dir", state)
	var list string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, _, _ = runCLI(t, "", "list", "--state-dir", state)
		if strings.Contains(list, "insert-counts") && strings.Contains(list, "RUNNING") {
			break
		}
	}
	if !strings.Contains(list, fmt.Sprintf("%d", p.cmd.Process.Pid)) || !strings.Contains(list, "RUNNING") {
		t.Fatalf("streamsql list:\n%s", list)
	}
	socks, _ := filepath.Glob(filepath.Join(state, ".control", "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("control sockets: %v", socks)
	}
	if st, err := os.Stat(socks[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("control socket mode: %v %v", st.Mode(), err)
	}
	time.Sleep(500 * time.Millisecond)
	out, errOut, code := runCLI(t, "", "stop", "--state-dir", state, "insert-counts")
	if code != 0 || !strings.Contains(out, "Job insert-counts stopped with checkpoint") {
		t.Fatalf("streamsql stop: exit %d\n%s%s", code, out, errOut)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("the stopped process: exit %d\n%s", code, p.errOut)
	}
	if _, errOut, code := runCLI(t, "", "stop", "--state-dir", state, "insert-counts"); code == 0 || !strings.Contains(errOut, "no running job named 'insert-counts'") {
		t.Errorf("stopping a job nobody runs: exit %d %s", code, errOut)
	}
	resumeAndCompare(t, path, state, create, want)
}

// TestMalformedRecordFailsFast: a malformed record under the fail policy is read again
// by every restart, so it fails the job at once even with checkpoints and a restart
// strategy, naming the file, line and column.
func TestMalformedRecordFailsFast(t *testing.T) {
	data := filepath.Join(t.TempDir(), "dec.csv")
	os.WriteFile(data, []byte("1,1.5\n2,12345.6\n"), 0o600)
	script := writeScript(t, fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '100';
CREATE TABLE src (id INT, d DECIMAL(4, 1)) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out (id INT, d DECIMAL(4, 1)) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT * FROM src;`, data))
	began := time.Now()
	_, errOut, code := runCLI(t, "", "-f", script, "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "line 2: cannot parse \"12345.6\" as DECIMAL(4, 1)") || strings.Contains(errOut, "restart 1") || time.Since(began) > 5*time.Second {
		t.Errorf("exit %d after %v:\n%s", code, time.Since(began), errOut)
	}
}
