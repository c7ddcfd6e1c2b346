package connector

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// readTask reads task of tasks of tbl to its end and returns its rows, sorted.
func readTask(t *testing.T, tbl *planner.Table, task, tasks int) []string {
	t.Helper()
	r, err := OpenSource(context.Background(), SourceSpec{Table: tbl, Mem: checkedMem(t), Location: time.UTC, BatchSize: 64, Task: task, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, _, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.SplitAfter(out, "]\n") // no value of these tests holds "]\n"
	slices.Sort(rows)
	return slices.DeleteFunc(rows, func(s string) bool { return s == "" })
}

func TestSplitsReadEveryRowOnce(t *testing.T) {
	tables := map[string]*planner.Table{}
	for name, tbl := range datagenCases() {
		if _, seeded := tbl.Options["seed"]; seeded {
			tables["datagen "+name] = tbl
		}
	}
	for name, tbl := range fileCases(t) {
		tables[name] = tbl
	}
	monitored := *tables["csv directory"] // files by the hash of their name
	monitored.Options = map[string]string{"source.monitor-interval": "1h"}
	for k, v := range tables["csv directory"].Options {
		monitored.Options[k] = v
	}
	tables["monitored csv directory"] = &monitored
	for name, tbl := range tables {
		t.Run(name, func(t *testing.T) {
			all := readTask(t, tbl, 0, 0)
			for tasks := 1; tasks <= 3; tasks++ {
				var union []string
				for task := 0; task < tasks; task++ {
					rows := readTask(t, tbl, task, tasks)
					// A file is split by byte ranges.
					if len(rows) == 0 {
						t.Errorf("task %d of %d read nothing", task, tasks)
					}
					union = append(union, rows...)
				}
				slices.Sort(union)
				if !slices.Equal(union, all) {
					t.Errorf("%d tasks read %d rows, not the %d of one task", tasks, len(union), len(all))
				}
			}
		})
	}
}

func TestSplitsOfDatagen(t *testing.T) {
	tbl := table("seq", planner.Schema{{Name: "id", Type: planner.TypeInt}}, map[string]string{
		"connector": "datagen", "rows-per-second": "300", "number-of-rows": "8",
		"fields.id.kind": "sequence", "fields.id.start": "10", "fields.id.end": "100",
	})
	want := []string{"+I[10]\n+I[13]\n+I[16]\n", "+I[11]\n+I[14]\n+I[17]\n", "+I[12]\n+I[15]\n"}
	for task := 0; task < 3; task++ {
		r, err := OpenSource(context.Background(), SourceSpec{Table: tbl, Mem: checkedMem(t), Task: task, Tasks: 3})
		if err != nil {
			t.Fatal(err)
		}
		d := r.(*DatagenReader)
		if d.pace.rate != 100 {
			t.Errorf("task %d paced to %v rows/s", task, d.pace.rate)
		}
		rows, _, err := drain(t, r, 100)
		r.Close()
		if err != nil || rows != want[task] {
			t.Errorf("task %d: %q, %v; want %q", task, rows, err, want[task])
		}
	}
}

func TestSplitRestore(t *testing.T) {
	tbl := fileCases(t)["csv directory"]
	mem := checkedMem(t)
	open := func(task int) exec.Reader {
		r, err := OpenSource(context.Background(), SourceSpec{Table: tbl, Mem: mem, BatchSize: 2, Task: task, Tasks: 2})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := open(0) // files 0, 2 and 4: 10 rows
	defer r.Close()
	readAtLeast(t, r, 5)
	state := snapshot(t, r)
	tail, _, _ := drain(t, r, 1)
	r2 := open(0)
	defer r2.Close()
	if err := r2.(exec.Restorer).Restore(state); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := drain(t, r2, 1); got != tail || tail == "" {
		t.Errorf("after restore: %q, want %q", got, tail)
	}
	r1 := open(1)
	defer r1.Close()
	if err := r1.(exec.Restorer).Restore(state); !errors.Is(err, ErrInvalidState) {
		t.Errorf("task 1 restored task 0's state: %v", err)
	}
}

func TestSplitErrors(t *testing.T) {
	ctx := context.Background()
	sock := table("t", sensors, map[string]string{"connector": "socket", "hostname": "localhost", "port": "9", "format": "csv"})
	_, err := OpenSource(ctx, SourceSpec{Table: sock, Tasks: 2})
	if err == nil || err.Error() != "table t: the socket source cannot run in parallel" {
		t.Errorf("socket in parallel: %v", err)
	}
	gen := table("t", sensors, map[string]string{"connector": "datagen"})
	for _, s := range [][2]int{{2, 2}, {-1, 2}, {1, 0}, {0, -1}} {
		_, err := OpenSource(ctx, SourceSpec{Table: gen, Task: s[0], Tasks: s[1]})
		if err == nil || !strings.HasPrefix(err.Error(), "table t: source task ") {
			t.Errorf("task %d of %d: %v", s[0], s[1], err)
		}
	}
	files := table("t", sensors, map[string]string{"connector": "filesystem", "path": filepath.Join(t.TempDir()), "format": "csv"})
	for tbl, want := range map[*planner.Table]bool{sock: false, gen: true, files: true, table("t", sensors, map[string]string{"connector": "kafka"}): false} {
		if got := (*Registry)(nil).Parallelizable(tbl); got != want {
			t.Errorf("Parallelizable(%s) = %v", tbl.Connector(), got)
		}
	}
	wal := table("t", sensors, map[string]string{"connector": "socket", "source.wal": "true"})
	for tbl, want := range map[*planner.Table]bool{sock: false, wal: true, gen: true, files: true} {
		if got := (*Registry)(nil).Replayable(tbl); got != want {
			t.Errorf("Replayable(%v) = %v", tbl.Options, got)
		}
	}
}

// TestDatagenRescale: the snapshots of a datagen source's tasks, taken part-way and
// rescaled to another number of tasks, and rescaled again, leave the new tasks the rows
// not yet produced, each once and with the values it had: together with those produced
// before, exactly the rows of a single task's run.
func TestDatagenRescale(t *testing.T) {
	tbl := table("gen", planner.Schema{{Name: "id", Type: planner.TypeInt}, {Name: "v", Type: planner.TypeBigInt}}, map[string]string{
		"connector": "datagen", "rows-per-second": "1000000", "number-of-rows": "1000", "seed": "5",
		"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "5000",
	})
	checkRescales(t, tbl, rescaleDatagen, 60, 45)
}

// TestFilesRescale: as TestDatagenRescale, for files read once (split by byte ranges,
// so that a task restored later resumes another's range) and for a monitored
// directory, whose tasks then begin several files each.
func TestFilesRescale(t *testing.T) {
	files := fileCases(t)
	monitored := *files["csv directory"]
	monitored.Options = maps.Clone(monitored.Options)
	monitored.Options["source.monitor-interval"] = "1 ms"
	for name, tbl := range map[string]*planner.Table{"read once": files["csv directory"], "csv file": files["csv file"], "json file": files["json file"], "monitored": &monitored} {
		t.Run(name, func(t *testing.T) { checkRescales(t, tbl, rescaleFiles, 3, 2) })
	}
}

// checkRescales reads a source's tasks part-way (first rows each), rescales their
// snapshots along several paths of parallelism, reads each stage part-way again (then
// rows each), and finally all the rest in one task: every row of a single task's run
// comes out once.
func checkRescales(t *testing.T, tbl *planner.Table, rescale func(*planner.Table, [][]byte, int) ([][]byte, error), first, then int) {
	t.Helper()
	want := readTask(t, tbl, 0, 1)
	mem := checkedMem(t)
	// step reads up to n rows of each of the tasks whose snapshots are states (nil: fresh
	// tasks) and returns the rows and the tasks' snapshots.
	step := func(states [][]byte, tasks, n int) ([]string, [][]byte) {
		var rows []string
		var snaps [][]byte
		for task := range tasks {
			r, err := OpenSource(context.Background(), SourceSpec{Table: tbl, Mem: mem, BatchSize: 1, Task: task, Tasks: tasks, Now: time.Now})
			if err != nil {
				t.Fatal(err)
			}
			if states != nil {
				if err := r.(exec.Restorer).Restore(states[task]); err != nil {
					t.Fatal(err)
				}
			}
			got := readUpTo(t, r, n)
			rows = append(rows, strings.SplitAfter(got, "]\n")...)
			snaps = append(snaps, snapshot(t, r))
			r.Close()
		}
		return rows, snaps
	}
	for _, path := range [][]int{{2, 3}, {3, 1}, {2, 5, 2}, {4, 4}} {
		rows, states := step(nil, path[0], first)
		for _, tasks := range append(path[1:], 1) {
			var err error
			if states, err = rescale(tbl, states, tasks); err != nil {
				t.Fatal(err)
			}
			n := then
			if tasks == 1 {
				n = 1 << 30
			}
			more, snaps := step(states, tasks, n)
			rows, states = append(rows, more...), snaps
		}
		rows = slices.DeleteFunc(rows, func(s string) bool { return s == "" })
		slices.Sort(rows)
		if strings.Join(rows, "") != strings.Join(want, "") {
			t.Errorf("%v: %d rows, want %d:\n%s", path, len(rows), len(want), strings.Join(rows, ""))
		}
	}
}

// readUpTo reads batches of r until it has n rows, its end, or three empty batches in a
// row (a monitored directory with nothing new).
func readUpTo(t *testing.T, r exec.Reader, n int) string {
	t.Helper()
	var out []byte
	enc := format.NewChangelogEncoder("", time.UTC)
	for rows, empty := 0, 0; rows < n && empty < 3; {
		b, err := r.Next(context.Background())
		if err != nil {
			break
		}
		if b.Rec == nil {
			empty++
			continue
		}
		empty = 0
		rows += b.Len()
		out = format.AppendRows(out, enc, b)
		b.Release()
	}
	return string(out)
}

// TestBounded: whether a table's source ends, by its options, for the built-in
// connectors and one of a package of its own.
func TestBounded(t *testing.T) {
	cols := planner.Schema{{Name: "n", Type: planner.TypeBigInt}}
	opts := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	reg := &Registry{Sources: map[string]SourceConnector{
		"ends":  {Bounded: func(t *planner.Table) bool { return t.Options["stop"] == "yes" }},
		"never": {},
	}}
	for _, c := range []struct {
		opts map[string]string
		want bool
	}{
		{opts("connector", "filesystem", "path", "/x"), true},
		{opts("connector", "filesystem", "path", "/x", "source.monitor-interval", "1 s"), false},
		{opts("connector", "filesystem", "path", "/x", "source.monitor-interval", "0"), true},
		{opts("connector", "datagen"), false},
		{opts("connector", "datagen", "number-of-rows", "10"), true},
		{opts("connector", "socket", "hostname", "h"), false},
		{opts("connector", "ends", "stop", "yes"), true},
		{opts("connector", "ends"), false},
		{opts("connector", "never"), false},
		{opts("connector", "nosuch"), false},
	} {
		if got := reg.Bounded(table("t", cols, c.opts)); got != c.want {
			t.Errorf("Bounded(%v) = %v, want %v", c.opts, got, c.want)
		}
	}
}
