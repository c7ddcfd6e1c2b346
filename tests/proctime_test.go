package tests

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

// selectInBackground runs sql, which ends in an unbounded SELECT, in a session of its
// own until the test ends (a SELECT runs until its context does: Ctrl-C in the shell),
// and returns what the session prints as CSV.
func selectInBackground(t *testing.T, sql string) *lockedBuffer {
	out := &lockedBuffer{}
	s, err := streamsql.NewSession(streamsql.Config{Out: out, Err: out, Format: "csv", Location: time.UTC, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Exec(ctx, sql) }()
	t.Cleanup(func() { cancel(); <-done; s.Close() })
	return out
}

// TestProctimeWindows: a window over a PROCTIME() column closes on the clock while its
// unbounded source goes on: windows of one second, aligned to the second, one after the
// other, each with the rows of about a second, none ending after it was written.
func TestProctimeWindows(t *testing.T) {
	out := selectInBackground(t, `
CREATE TABLE g (id BIGINT, proc AS PROCTIME()) WITH ('connector' = 'datagen', 'rows-per-second' = '200');
SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE g, DESCRIPTOR(proc), INTERVAL '1' SECOND))
GROUP BY window_start, window_end;`)
	checkClockWindows(t, out)
}

// TestProctimeWindowsOverEventTime: in a table with a WATERMARK (here far in the
// future) and a PROCTIME() column, a window over the PROCTIME() column closes on the
// clock, not on the table's event time.
func TestProctimeWindowsOverEventTime(t *testing.T) {
	out := selectInBackground(t, `
CREATE TABLE g (id BIGINT, ts AS TO_TIMESTAMP('2099-01-01 00:00:00'), proc AS PROCTIME(), WATERMARK FOR ts AS ts)
WITH ('connector' = 'datagen', 'rows-per-second' = '200');
SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE g, DESCRIPTOR(proc), INTERVAL '1' SECOND))
GROUP BY window_start, window_end;`)
	checkClockWindows(t, out)
}

// checkClockWindows reads the windows of one second a query prints as they close: one
// after the other, each with the rows of about a second at 200 rows a second, none
// ending after it was read.
func checkClockWindows(t *testing.T, out *lockedBuffer) {
	t.Helper()
	var lines []string
	for deadline := time.Now().Add(10 * time.Second); len(lines) < 4 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		lines = strings.Split(strings.TrimSpace(out.String()), "\n")
		for i, line := range lines {
			if strings.HasPrefix(line, "window_start") {
				lines = lines[i+1:]
				break
			}
		}
	}
	if len(lines) < 4 {
		t.Fatalf("the windows did not close on the clock:\n%s", out.String())
	}
	const layout = "2006-01-02 15:04:05.000"
	var prevEnd time.Time
	for i, line := range lines[1:4] { // the first window began when the job did
		f := strings.Split(line, ",")
		start, err1 := time.Parse(layout, f[0])
		end, err2 := time.Parse(layout, f[1])
		n, err3 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("row %q", line)
		}
		if end.Sub(start) != time.Second || start.Nanosecond() != 0 || i > 0 && start != prevEnd {
			t.Errorf("window %s to %s after one ending %s", start, end, prevEnd)
		}
		if n < 100 || n > 300 {
			t.Errorf("window %s: %d rows at 200 rows/s", start, n)
		}
		if end.After(time.Now()) {
			t.Errorf("window %s ends in the future", end)
		}
		prevEnd = end
	}
}

// TestProctimeWindowClosesWithoutInput: the rows of a quiet socket feed are counted in
// their window once the clock passes its end, though no row comes after them.
func TestProctimeWindowClosesWithoutInput(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte("a\nb\nc\n"))
		<-hold // then nothing more, with the connection open
	}()
	defer func() { close(hold); ln.Close(); <-served }()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	out := selectInBackground(t, `
CREATE TABLE feed (w STRING, proc AS PROCTIME()) WITH ('connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '`+port+`', 'format' = 'csv');
SELECT COUNT(*) AS n FROM feed GROUP BY TUMBLE(proc, INTERVAL '1' SECOND);`)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(out.String(), "n\n3\n") {
			return
		}
	}
	t.Fatalf("the window of the three rows did not close:\n%s", out.String())
}
