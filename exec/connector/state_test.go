package connector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// readAtLeast reads batches until it has n rows or more, or the input ends.
func readAtLeast(t *testing.T, r exec.Reader, n int) string {
	t.Helper()
	var out []byte
	enc := format.NewChangelogEncoder("", time.UTC)
	for rows := 0; rows < n; {
		b, err := r.Next(context.Background())
		if err != nil {
			break
		}
		rows += b.Len()
		out = format.AppendRows(out, enc, b)
		b.Release()
	}
	return string(out)
}

// readAll reads a new reader of tbl to its end.
func readAll(t *testing.T, tbl *planner.Table, batch int) string {
	t.Helper()
	r := openSource(t, checkedMem(t), tbl, batch)
	defer r.Close()
	rows, _, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func snapshot(t *testing.T, r exec.Reader) []byte {
	t.Helper()
	state, err := r.(exec.Snapshotter).Snapshot(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// checkRestore reads n rows of tbl, snapshots and reads on to the end; then restores
// the snapshot into a new reader (with another batch size) and reads to the end: both
// ends must be the same rows. It returns the rows before and after the snapshot.
func checkRestore(t *testing.T, tbl *planner.Table, batch, n int) (head, tail string) {
	t.Helper()
	mem := checkedMem(t)
	r := openSource(t, mem, tbl, batch)
	defer r.Close()
	head = readAtLeast(t, r, n)
	state := snapshot(t, r)
	tail, _, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	r2 := openSource(t, mem, tbl, batch+2)
	defer r2.Close()
	if err := r2.(exec.Restorer).Restore(state); err != nil {
		t.Fatal(err)
	}
	tail2, _, err := drain(t, r2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tail2 != tail {
		t.Fatalf("after restoring %s:\n%s\nwant:\n%s", state, tail2, tail)
	}
	return head, tail
}

var noTimes = planner.Schema{ // unseeded times follow the clock: not replayed exactly
	{Name: "b", Type: planner.TypeBoolean},
	{Name: "i", Type: planner.TypeInt},
	{Name: "l", Type: planner.TypeBigInt},
	{Name: "d", Type: planner.TypeDouble},
	{Name: "m", Type: planner.DecimalType(10, 2)},
	{Name: "s", Type: planner.TypeString},
}

var withSequence = planner.Schema{
	{Name: "id", Type: planner.TypeBigInt},
	{Name: "name", Type: planner.TypeString},
	{Name: "price", Type: planner.DecimalType(5, 2)},
	{Name: "v", Type: planner.TypeDouble},
}

func datagenCases() map[string]*planner.Table {
	random := map[string]string{
		"connector": "datagen", "number-of-rows": "1000", "rows-per-second": "100000000",
		"fields.s.length": "40", "fields.d.null-rate": "0.3", "fields.i.min": "-5", "fields.i.max": "5",
	}
	seeded := map[string]string{"seed": "42", "fields.ts.max-past": "5s", "fields.dt.max-past": "10d"}
	for k, v := range random {
		seeded[k] = v
	}
	seq := map[string]string{
		"connector": "datagen", "rows-per-second": "100000000", "number-of-rows": "900",
		"fields.id.kind": "sequence", "fields.id.start": "-10", "fields.id.end": "1000",
		"fields.name.kind": "sequence", "fields.name.start": "1", "fields.name.end": "1000000",
		"fields.name.null-rate": "0.1", "fields.price.kind": "sequence", "fields.price.start": "5", "fields.price.end": "999",
	}
	seqSeeded := map[string]string{"seed": "-3"}
	for k, v := range seq {
		seqSeeded[k] = v
	}
	return map[string]*planner.Table{
		"random":          table("gen", noTimes, random),
		"random seeded":   table("gen", everyType, seeded),
		"sequence":        table("seq", withSequence, seq),
		"sequence seeded": table("seq", withSequence, seqSeeded),
	}
}

func TestDatagenRestore(t *testing.T) {
	for name, tbl := range datagenCases() {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{0, 1, 333, 999, 1000} {
				head, tail := checkRestore(t, tbl, 100, n)
				if rows := strings.Count(head+tail, "+I["); rows != 1000 && rows != 900 {
					t.Fatalf("%d rows", rows)
				}
				if _, seeded := tbl.Options["seed"]; seeded {
					if head+tail != readAll(t, tbl, 64) {
						t.Fatal("a seeded source gave other rows")
					}
				}
			}
		})
	}
}

func TestDatagenRestoreUnbounded(t *testing.T) {
	tbl := table("gen", noTimes, map[string]string{"connector": "datagen", "rows-per-second": "100000000"})
	mem := checkedMem(t)
	r := openSource(t, mem, tbl, 50)
	defer r.Close()
	readAtLeast(t, r, 120)
	state := snapshot(t, r)
	want := readAtLeast(t, r, 200)
	r2 := openSource(t, mem, tbl, 50)
	defer r2.Close()
	if err := r2.(exec.Restorer).Restore(state); err != nil {
		t.Fatal(err)
	}
	if got := readAtLeast(t, r2, 200); got != want {
		t.Fatalf("after restore:\n%s\nwant:\n%s", got, want)
	}
	if p := r2.(*DatagenReader).Position(); p != 350 {
		t.Errorf("position %d", p)
	}
}

// fileCases writes the files of the filesystem tests: 11 rows each.
func fileCases(t *testing.T) map[string]*planner.Table {
	dir := t.TempDir()
	csv := filepath.Join(dir, "one.csv")
	writeFile(t, csv, "a,1,1\r\n\"multi\nline\",2,2\n\nb,3,\nc,4,4\nd,5,5\ne,6,6\nf,7,7\ng,8,8\nh,9,9\ni,10,10\nlast,11,11")
	js := filepath.Join(dir, "one.json")
	var lines []string
	for i := 1; i <= 11; i++ {
		lines = append(lines, fmt.Sprintf(`{"id":"j%d","temperature":%d.5,"cnt":%d}`, i, i, i))
	}
	writeFile(t, js, strings.Join(lines, "\n")+"\n")
	many := filepath.Join(dir, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, rows := range []int{3, 0, 4, 1, 3} {
		var b strings.Builder
		for j := 0; j < rows; j++ {
			fmt.Fprintf(&b, "f%d_%d,%d,%d\n", i, j, i, j)
		}
		writeFile(t, filepath.Join(many, fmt.Sprintf("%d.csv", i)), b.String())
	}
	opts := func(path, f string) map[string]string {
		return map[string]string{"connector": "filesystem", "path": path, "format": f}
	}
	return map[string]*planner.Table{
		"csv file":      table("f", sensors, opts(csv, "csv")),
		"json file":     table("f", sensors, opts(js, "json")),
		"csv directory": table("f", sensors, opts(many, "csv")),
	}
}

func TestFileSourceRestore(t *testing.T) {
	for name, tbl := range fileCases(t) {
		t.Run(name, func(t *testing.T) {
			whole := readAll(t, tbl, 1024)
			if n := strings.Count(whole, "+I["); n != 11 {
				t.Fatalf("%d rows", n)
			}
			// Every position: before, inside and at the end of each file.
			for _, batch := range []int{1, 3} {
				for n := 0; n <= 11; n++ {
					if head, tail := checkRestore(t, tbl, batch, n); head+tail != whole {
						t.Fatalf("batch %d, snapshot after %d rows: %q + %q", batch, n, head, tail)
					}
				}
			}
		})
	}
}

func TestFileSourceRestoreMonitoredDirectory(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "1.csv"), "a,1,1\n")
	writeFile(t, filepath.Join(dir, "2.csv"), "b,2,2\nc,3,3\n")
	tbl := table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": dir, "format": "csv", "source.monitor-interval": "20ms",
	})
	r := openSource(t, mem, tbl, 2)
	defer r.Close()
	if got := readAtLeast(t, r, 2); got != "+I[a, 1.0, 1]\n+I[b, 2.0, 2]\n" {
		t.Fatalf("first rows: %q", got)
	}
	state := snapshot(t, r) // 1.csv done, 2.csv at line 1
	if !strings.Contains(string(state), `"done":["1.csv"],"file":"2.csv","offset":6,"line":1`) {
		t.Errorf("state %s", state)
	}
	writeFile(t, filepath.Join(dir, "0.csv"), "d,4,4\n") // new, though it sorts first
	r2 := openSource(t, mem, tbl, 2)
	defer r2.Close()
	if err := r2.(exec.Restorer).Restore(state); err != nil {
		t.Fatal(err)
	}
	rows, _, err := drain(t, r2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rows != "+I[c, 3.0, 3]\n+I[d, 4.0, 4]\n" {
		t.Fatalf("after restore: %q", rows)
	}
	// A file that appears later is read too; files read never again.
	writeFile(t, filepath.Join(dir, "3.csv"), "e,5,5\n")
	if rows, _, _ := drain(t, r2, 10); rows != "+I[e, 5.0, 5]\n" {
		t.Fatalf("later: %q", rows)
	}
	state = snapshot(t, r2)
	r3 := openSource(t, mem, tbl, 2)
	defer r3.Close()
	if err := r3.(exec.Restorer).Restore(state); err != nil {
		t.Fatal(err)
	}
	if rows, _, _ := drain(t, r3, 3); rows != "" {
		t.Fatalf("re-read after restore: %q", rows)
	}
}

func TestRestoreRejectsForeignOrCorruptState(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "data.csv")
	writeFile(t, path, "a,1,1\nb,2,2\n")
	gen := table("gen", noTimes, map[string]string{"connector": "datagen", "number-of-rows": "10", "seed": "1"})
	files := table("f", sensors, map[string]string{"connector": "filesystem", "path": dir, "format": "csv"})
	open := func(tbl *planner.Table, task, tasks int) exec.Reader {
		r, err := OpenSource(context.Background(), SourceSpec{Table: tbl, Mem: mem, Task: task, Tasks: tasks})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	state := func(tbl *planner.Table, task, tasks int) string {
		r := open(tbl, task, tasks)
		defer r.Close()
		return string(snapshot(t, r))
	}
	genState, fsState := state(gen, 0, 1), state(files, 0, 1)
	edit := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("%s lacks %s", s, old)
		}
		return strings.Replace(s, old, new, 1)
	}
	otherFile := filepath.Join(dir, "other.csv")
	writeFile(t, otherFile, "x,1,1\n")
	for _, tc := range []struct {
		into  *planner.Table
		state string
		want  string
	}{
		{gen, "", "corrupt state: unexpected end of JSON input"},
		{gen, "\x00\xff garbage", "corrupt state"},
		{gen, genState[:len(genState)/2], "corrupt state"},
		{gen, genState + "{}", "corrupt state: invalid character"},
		{gen, "{}", "state version 0 is not supported"},
		{gen, `[1,2]`, "corrupt state"},
		{gen, edit(genState, `"rows":0`, `"rows":"0"`), "corrupt state"},
		{gen, edit(genState, `"rows":0`, `"rows":0,"extra":1`), `unknown field "extra"`},
		{gen, edit(genState, `"version":1`, `"version":2`), "state version 2 is not supported (want 1)"},
		{gen, fsState, "the state is of the filesystem source of table f"},
		{gen, edit(genState, `"table":"gen"`, `"table":"other"`), "the state is of the datagen source of table other"},
		{gen, state(gen, 1, 2), "the state is of task 1 of 2, not of task 0 of 1"},
		{gen, edit(genState, `"seed":1`, `"seed":2`), "the state is of another 'seed'"},
		{gen, edit(genState, `"seeded":true`, `"seeded":false`), "the state is of another 'seed'"},
		{gen, edit(genState, `"rows":0`, `"rows":11`), "position 11 is out of range"},
		{gen, edit(genState, `"rows":0`, `"rows":-1`), "position -1 is out of range"},
		{files, genState, "the state is of the datagen source of table gen"},
		{files, edit(fsState, `"path":"`+dir, `"path":"`+dir+`x`), "the state is of path " + dir + "x"},
		{files, edit(fsState, `"done":[]`, `"done":["../data.csv"]`), `corrupt state: "../data.csv" is not a file name`},
		{files, edit(fsState, `"pending":["data.csv"`, `"pending":[""`), `corrupt state: "" is not a file name`},
		{files, edit(fsState, `"offset":0`, `"file":"data.csv","offset":100`), "has 12 bytes, fewer than its position 100: it changed"},
		{files, edit(fsState, `"offset":0,"line":0`, `"file":"data.csv","offset":2,"line":3`), "corrupt state: offset 2, line 3"},
		{files, edit(fsState, `"offset":0`, `"offset":-1`), "corrupt state: offset -1"},
		{table("f", sensors, map[string]string{"connector": "filesystem", "path": otherFile, "format": "csv"}),
			edit(fsState, `"path":"`+dir, `"path":"`+otherFile), "the state names file data.csv, not " + otherFile},
	} {
		r := open(tc.into, 0, 1)
		err := r.(exec.Restorer).Restore([]byte(tc.state))
		r.Close()
		prefix := fmt.Sprintf("table %s: cannot restore the %s source: ", tc.into.Name, tc.into.Connector())
		if err == nil || !errors.Is(err, ErrInvalidState) || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("restoring %q into %s:\n got %v\nwant %s...%s", tc.state, tc.into.Name, err, prefix, tc.want)
		}
	}
	// A file of the state that is gone is an I/O error, not a corrupt state.
	r := open(files, 0, 1)
	defer r.Close()
	err := r.(exec.Restorer).Restore([]byte(edit(fsState, `"offset":0`, `"file":"gone.csv","offset":0`)))
	if err == nil || errors.Is(err, ErrInvalidState) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
