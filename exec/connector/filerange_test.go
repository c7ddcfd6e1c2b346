package connector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// rangeFile writes n JSON lines of random lengths (and a few empty lines), the last
// without a line break, into a file of dir, and returns the file's table.
func rangeFile(t *testing.T, dir, name string, n int) *planner.Table {
	return rangeFileIn(t, "json", dir, name, n)
}

// rangeFileIn is rangeFile in format json or csv. The csv records' ids are quoted
// and hold line breaks, commas and quotes, and comment lines with quotes come between
// them.
func rangeFileIn(t *testing.T, format, dir, name string, n int) *planner.Table {
	t.Helper()
	r := rand.New(rand.NewPCG(3, uint64(n)))
	var b strings.Builder
	for i := 1; i <= n; i++ {
		pad := strings.Repeat("x", r.IntN(200))
		if format == "csv" {
			if r.IntN(5) == 0 {
				b.WriteString("# \"a comment\n")
			}
			fmt.Fprintf(&b, "\"%s%d\n,\"\"%s\",%d.5,%d", name, i, pad, i, i)
		} else {
			fmt.Fprintf(&b, `{"id":"%s%d%s","temperature":%d.5,"cnt":%d}`, name, i, pad, i, i)
		}
		if i < n {
			b.WriteByte('\n')
		}
		if r.IntN(10) == 0 {
			b.WriteByte('\n')
		}
	}
	path := filepath.Join(dir, name+"."+format)
	writeFile(t, path, b.String())
	opts := map[string]string{"connector": "filesystem", "path": path, "format": format}
	if format == "csv" {
		opts["csv.allow-comments"] = "true"
	}
	return table("f", sensors, opts)
}

func openTask(t *testing.T, tbl *planner.Table, task, tasks, batch int) exec.Reader {
	t.Helper()
	r, err := OpenSource(context.Background(), SourceSpec{Table: tbl, Mem: checkedMem(t), Location: time.UTC, BatchSize: batch, Task: task, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func rowsOf(s string) []string {
	rows := strings.SplitAfter(s, "]\n")
	return slices.DeleteFunc(rows, func(s string) bool { return s == "" })
}

// A JSON or CSV file read in parallel is split by byte ranges: each task reads a share
// of it, and together they read every record once.
func TestFileRangesReadEveryRecordOnce(t *testing.T) {
	for _, format := range []string{"json", "csv"} {
		t.Run(format, func(t *testing.T) { testRangesReadEveryRecordOnce(t, format) })
	}
}

func testRangesReadEveryRecordOnce(t *testing.T, format string) {
	tbl := rangeFileIn(t, format, t.TempDir(), "big", 2000)
	all := rowsOf(readAll(t, tbl, 100))
	if len(all) != 2000 {
		t.Fatalf("one task read %d rows", len(all))
	}
	slices.Sort(all)
	for tasks := 2; tasks <= 5; tasks++ {
		var union []string
		for task := range tasks {
			rows, _, err := drain(t, openTask(t, tbl, task, tasks, 64), 1)
			if err != nil {
				t.Fatal(err)
			}
			got := rowsOf(rows)
			if len(got) < 2000/tasks/2 {
				t.Errorf("task %d of %d read %d rows: not its share", task, tasks, len(got))
			}
			union = append(union, got...)
		}
		slices.Sort(union)
		if !slices.Equal(union, all) {
			t.Errorf("%d tasks read %d rows, not the %d of one task", tasks, len(union), len(all))
		}
	}
}

// Whichever task reads a malformed record names its line in the whole file.
func TestFileRangesNameTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		if i == 777 {
			b.WriteString("{oops\n")
			continue
		}
		fmt.Fprintf(&b, "{\"id\":\"r%d\",\"temperature\":1.5,\"cnt\":%d}\n", i, i)
	}
	writeFile(t, path, b.String())
	tbl := table("f", sensors, map[string]string{"connector": "filesystem", "path": path, "format": "json"})
	var errs []string
	for task := range 3 {
		if _, _, err := drain(t, openTask(t, tbl, task, 3, 50), 1); err != nil {
			errs = append(errs, fmt.Sprintf("task %d: %v", task, err))
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "task 2: ") || !strings.Contains(errs[0], "line 777") {
		t.Errorf("errors %q, want one of task 2 naming line 777", errs)
	}
}

// A task restored from its snapshot goes on in its range where it was; snapshots of
// a parallelism moved to another cover every record once: of files begun, finished and
// not yet opened by each task.
func TestFileRangesRestoreAndRescale(t *testing.T) {
	for _, format := range []string{"json", "csv"} {
		t.Run(format, func(t *testing.T) { testRangesRestoreAndRescale(t, format) })
	}
}

func testRangesRestoreAndRescale(t *testing.T, format string) {
	dir := t.TempDir()
	rangeFileIn(t, format, dir, "a", 3000)
	rangeFileIn(t, format, dir, "b", 40)
	tbl := rangeFileIn(t, format, dir, "c", 500)
	tbl.Options["path"] = dir
	all := rowsOf(readAll(t, tbl, 100))
	slices.Sort(all)
	for _, c := range []struct{ from, to int }{{3, 3}, {2, 3}, {3, 1}, {1, 3}, {4, 2}} {
		t.Run(fmt.Sprintf("%d to %d", c.from, c.to), func(t *testing.T) {
			var read []string
			states := make([][]byte, c.from)
			for task := range c.from {
				r := openTask(t, tbl, task, c.from, 16)
				read = append(read, rowsOf(readAtLeast(t, r, 700*task))...) // task 0 opens no file
				states[task] = snapshot(t, r)
			}
			if c.from != c.to {
				var err error
				if states, err = (*Registry)(nil).RescaleSource(tbl, states, c.to); err != nil {
					t.Fatal(err)
				}
			}
			for task := range c.to {
				r := openTask(t, tbl, task, c.to, 16)
				if err := r.(exec.Restorer).Restore(states[task]); err != nil {
					t.Fatal(err)
				}
				rows, _, err := drain(t, r, 1)
				if err != nil {
					t.Fatal(err)
				}
				read = append(read, rowsOf(rows)...)
			}
			slices.Sort(read)
			if !slices.Equal(read, all) {
				t.Errorf("read %d rows before and after, want each of %d once", len(read), len(all))
			}
		})
	}
}
