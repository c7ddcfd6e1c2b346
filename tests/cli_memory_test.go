package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// peakRSS reads a process's peak resident memory (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the peak memory of process %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// runUnbounded runs sql through `streamsql -e` with --format csv for d, counting the
// lines it prints, then stops it with SIGINT. It returns the lines printed by the
// first second after the first row, all lines, the process's peak memory and its
// stderr.
func runUnbounded(t *testing.T, sql string, d time.Duration) (early, total, peak int64, stderr string) {
	t.Helper()
	cmd := streamsqlCmd("--state-dir", t.TempDir(), "--format", "csv", "-e", sql)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var lines atomic.Int64
	read := make(chan struct{})
	go func() {
		defer close(read)
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
				return
			}
			lines.Add(1)
		}
	}()
	start := time.Now()
	for lines.Load() < 2 && time.Since(start) < 5*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	early = lines.Load()
	for time.Since(start) < d {
		time.Sleep(500 * time.Millisecond)
		peak = max(peak, peakRSS(t, cmd.Process.Pid))
	}
	peak = max(peak, peakRSS(t, cmd.Process.Pid))
	cmd.Process.Signal(syscall.SIGINT)
	<-read
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	return early, lines.Load(), peak, errOut.String()
}

// TestUnboundedSelectStreamsInBoundedMemory: an unbounded SELECT * at 200,000 rows/s
// printed as csv streams its rows from the first seconds, and the process's peak
// memory stays under 200 MB over a minute (it grew without bound when results were
// held to the end).
func TestUnboundedSelectStreamsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a process for a minute")
	}
	early, total, peak, stderr := runUnbounded(t,
		"CREATE TABLE g (id BIGINT, name STRING, v DOUBLE) WITH ('connector' = 'datagen', 'rows-per-second' = '200000');\n"+
			"SELECT * FROM g;", 60*time.Second)
	t.Logf("%d rows in the first second, %d in all, peak memory %d MB", early, total, peak>>20)
	if early < 10_000 {
		t.Errorf("%d rows printed in the first second of output: rows do not stream", early)
	}
	if total < 1_000_000 {
		t.Errorf("only %d rows printed in a minute at 200,000 rows/s", total)
	}
	if peak > 200<<20 {
		t.Errorf("peak memory %d MB, want under 200 MB", peak>>20)
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
}

// TestUpdatingResultHeldByKey: an unbounded GROUP BY over 1,000 keys is held by key,
// so memory stays bounded however many changes arrive, and stopping it prints one row
// per key.
func TestUpdatingResultHeldByKey(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a process for 20 seconds")
	}
	_, total, peak, stderr := runUnbounded(t,
		"CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200000', 'fields.id.min' = '1', 'fields.id.max' = '1000');\n"+
			"SELECT id, COUNT(*) AS n FROM g GROUP BY id;", 20*time.Second)
	t.Logf("peak memory %d MB", peak>>20)
	if total != 1001 { // the header and a row per key
		t.Errorf("printed %d lines, want 1001; stderr: %s", total, stderr)
	}
	if peak > 200<<20 {
		t.Errorf("peak memory %d MB, want under 200 MB", peak>>20)
	}
}
