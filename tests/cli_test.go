package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the streamsql command built once for the CLI tests.
var binary string

func TestMain(m *testing.M) {
	// Every streamsql the tests start fills the buffers it frees with garbage, so that a
	// string kept from a batch without a copy shows in the results.
	os.Setenv("STREAMSQL_POISON_FREED", "1")
	dir, err := os.MkdirTemp("", "streamsql-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "streamsql")
	build := exec.Command("go", "build", "-o", binary, "../cmd/streamsql")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building streamsql:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// streamsqlCmd runs the binary from the repository root, as the README does.
func streamsqlCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "HOME="+os.TempDir())
	return cmd
}

func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := streamsqlCmd(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestExampleQueries runs every file-based example in queries/ through the real command.
func TestExampleQueries(t *testing.T) {
	files, _ := filepath.Glob("../queries/*.sql")
	want := map[string]string{
		"sensors.sql": "+I[sensor_1, 37.1, 4]\n+I[sensor_6, 15.9, 2]\n+I[sensor_7, 7.2, 2]\n+I[sensor_10, 38.1, 2]\n",
	}
	ran := 0
	for _, f := range files {
		name := filepath.Base(f)
		if name == "sensors_socket.sql" {
			continue // needs a server: TestSocketExample
		}
		ran++
		t.Run(name, func(t *testing.T) {
			out, errOut, code := runCLI(t, "", "-f", "queries/"+name, "--format", "csv")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if w, ok := want[name]; ok && out != w {
				t.Errorf("output:\n%s\nwant:\n%s", out, w)
			}
			if strings.TrimSpace(out) == "" {
				t.Errorf("no output")
			}
		})
	}
	if ran < 2 {
		t.Fatalf("only %d example queries found", ran)
	}
}

// TestSocketExample serves sensor readings on port 7777, as `nc -lk 7777` would for
// Flink's example, and checks the changelog the job prints.
func TestSocketExample(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:7777")
	if err != nil {
		t.Fatalf("port 7777 is needed by the example: %v", err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		// Two separate writes with a pause: the second updates sensor_1.
		io.WriteString(conn, "sensor_1,1547718199,35.8\nsensor_6,1547718201,15.4\n")
		time.Sleep(300 * time.Millisecond)
		io.WriteString(conn, "sensor_1,1547718207,36.3\n")
		time.Sleep(300 * time.Millisecond)
	}()
	out, errOut, code := runCLI(t, "", "-f", "queries/sensors_socket.sql")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "+I[sensor_1, 35.8, 1]\n+I[sensor_6, 15.4, 1]\n-U[sensor_1, 35.8, 1]\n+U[sensor_1, 36.3, 2]\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

func TestCLIFormats(t *testing.T) {
	query := "SELECT id, COUNT(*) AS n FROM (SELECT 'a' AS id) AS x GROUP BY id;"
	cases := map[string]string{
		"csv":       "id,n\na,1\n",
		"json":      "{\"id\":\"a\",\"n\":1}\n",
		"changelog": "+I[a, 1]\n",
		"table":     "+----+---+\n| id | n |\n+----+---+\n|  a | 1 |\n+----+---+\n1 row in set\n",
	}
	for format, want := range cases {
		out, errOut, code := runCLI(t, "", "-e", query, "--format", format)
		if code != 0 || out != want {
			t.Errorf("--format %s: exit %d, stderr %q, output:\n%s\nwant:\n%s", format, code, errOut, out, want)
		}
	}
}

func TestCLIErrors(t *testing.T) {
	_, errOut, code := runCLI(t, "", "-e", "SELECT a\nFORM t;")
	if code == 0 || !strings.Contains(errOut, "2:1: unexpected \"FORM\"") || !strings.Contains(errOut, "^") {
		t.Errorf("syntax error: exit %d, stderr:\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "-f", "no/such/file.sql")
	if code == 0 || !strings.Contains(errOut, "no/such/file.sql") {
		t.Errorf("missing file: exit %d, stderr:\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "--format", "xml", "-e", "SELECT 1;")
	if code == 0 || !strings.Contains(errOut, "unknown format") {
		t.Errorf("bad format: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestREPL drives the interactive shell through its standard input: help, DDL, a query,
// SHOW TABLES, DESCRIBE, a multi-line statement, an error that keeps the shell, quit; and
// checks that the history file is written.
func TestREPL(t *testing.T) {
	home := t.TempDir()
	cmd := streamsqlCmd()
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		"help",
		"CREATE TABLE s (id STRING, ts BIGINT, temperature DOUBLE)",
		"  WITH ('connector' = 'filesystem', 'path' = 'queries/data/sensors.csv', 'format' = 'csv');",
		"SHOW TABLES;",
		"DESCRIBE s;",
		"SELECT id, MAX(temperature) AS mx",
		"FROM s",
		"GROUP BY id;",
		"SELECT nope FROM s;",
		"EXPLAIN SELECT id FROM s WHERE temperature > 30;",
		"CREATE TABLE pg (id INT) WITH ('connector' = 'postgres', 'url' = 'postgres://u:s3cret@localhost/db',",
		"  'table-name' = 't', 'password' = 'hunter2');",
		"quit",
	}, "\n") + "\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	for _, want := range []string{
		"Statements end with ';'", "[INFO] Table has been created.", "| table name |", "|          s |",
		"| temperature | DOUBLE |", "|  sensor_1 | 37.1 |", "== Physical Plan ==", "Filter(where=[(temperature > 30",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "unknown column `nope`") {
		t.Errorf("stderr lacks the error:\n%s", errOut.String())
	}
	history, err := os.ReadFile(filepath.Join(home, ".streamsql_history"))
	if err != nil || !strings.Contains(string(history), "GROUP BY id;") || !strings.Contains(string(history), "'password' = '******'") {
		t.Errorf("history: %v\n%s", err, history)
	}
	if strings.Contains(string(history), "hunter2") || strings.Contains(string(history), "s3cret") {
		t.Errorf("the history holds a secret:\n%s", history)
	}
	if st, err := os.Stat(filepath.Join(home, ".streamsql_history")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("history mode: %v %v", st.Mode(), err)
	}
}

// TestREPLInterruptStopsQuery sends SIGINT while a query over an unbounded source runs:
// the query stops, and the shell goes on to run the next statement.
func TestREPLInterruptStopsQuery(t *testing.T) {
	cmd := streamsqlCmd()
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	io.WriteString(stdin, "CREATE TABLE g (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');\n")
	io.WriteString(stdin, "SELECT COUNT(*) AS c FROM g;\n")
	waitFor(t, lines, "[INFO] Table has been created.")
	time.Sleep(500 * time.Millisecond) // the query is running
	cmd.Process.Signal(syscall.SIGINT)
	io.WriteString(stdin, "SELECT 'still here' AS msg;\n")
	waitFor(t, lines, "still here")
	io.WriteString(stdin, "quit\n")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
}

func waitFor(t *testing.T, lines *bufio.Scanner, want string) {
	t.Helper()
	done := make(chan bool)
	go func() {
		for lines.Scan() {
			if strings.Contains(lines.Text(), want) {
				done <- true
				return
			}
		}
		done <- false
	}()
	select {
	case ok := <-done:
		if !ok {
			t.Fatalf("output ended before %q", want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %q", want)
	}
}

// TestREPLJobs: in the shell an INSERT prints its job's name and returns while the job
// runs; SHOW JOBS lists it, STOP JOB stops it; a background job that fails is reported
// at once, naming it.
func TestREPLJobs(t *testing.T) {
	cmd := streamsqlCmd("--state-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	errOut := &lockedBuffer{}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	io.WriteString(stdin, "CREATE TABLE g (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');\n")
	io.WriteString(stdin, "CREATE TABLE hole (n BIGINT) WITH ('connector' = 'blackhole');\n")
	io.WriteString(stdin, "INSERT INTO hole SELECT n FROM g;\n")
	waitFor(t, lines, "Job ID: insert-hole")
	io.WriteString(stdin, "SHOW JOBS;\n")
	waitFor(t, lines, "| insert-hole |") // CREATED or RUNNING, as the job's start goes
	io.WriteString(stdin, "STOP JOB 'insert-hole';\n")
	waitFor(t, lines, "[INFO] Job insert-hole stopped.")
	io.WriteString(stdin, "INSERT INTO g SELECT n FROM g;\n")
	waitFor(t, lines, "Job ID: insert-g")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errOut.String(), "[ERROR] job insert-g failed: table g: connector 'datagen' is a source") {
		if time.Now().After(deadline) {
			t.Fatalf("the failure was not reported:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	io.WriteString(stdin, "quit\n")
	stdin.Close()
	cmd.Wait()
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestScriptWithByteOrderMark: a script saved with a byte-order mark runs.
func TestScriptWithByteOrderMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bom.sql")
	os.WriteFile(path, []byte("\ufeffSELECT 1 AS x;\n"), 0o600)
	out, errOut, code := runCLI(t, "", "-f", path, "--format", "csv")
	if code != 0 || out != "x\n1\n" {
		t.Errorf("exit %d: %q %s", code, out, errOut)
	}
}
