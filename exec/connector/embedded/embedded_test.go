package embedded

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

var schema = planner.Schema{
	{Name: "k", Type: planner.TypeString},
	{Name: "n", Type: planner.TypeBigInt},
	{Name: "ts", Type: planner.TypeTS},
}

func tableOf(dir string, opts map[string]string, pk ...string) *planner.Table {
	o := map[string]string{"connector": "embedded"}
	for k, v := range opts {
		o[k] = v
	}
	t := &planner.Table{Name: "counts", Options: o, PrimaryKey: pk}
	for _, c := range schema {
		t.Columns = append(t.Columns, planner.TableColumn{Name: c.Name, Type: c.Type})
	}
	return t
}

// write applies rows with their kinds to a new sink and ends it as a barrier would.
func write(t *testing.T, mem memory.Allocator, tbl *planner.Table, tablesDir, rows string, kinds ...exec.RowKind) {
	t.Helper()
	ctx := context.Background()
	s, err := Sink.Open(ctx, connector.SinkSpec{Table: tbl, Schema: schema, Mem: mem, TablesDir: tablesDir})
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(mem, exec.ArrowSchema(schema), strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if err := s.Process(ctx, 0, exec.Batch{Rec: rec, Kinds: kinds}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.(exec.Snapshotter).Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// scan reads the whole table, batch rows a batch, restarting from a snapshot midway.
func scan(t *testing.T, mem memory.Allocator, tbl *planner.Table, tablesDir string, batch int) string {
	t.Helper()
	ctx := context.Background()
	open := func() exec.Reader {
		r, err := Source.Open(ctx, connector.SourceSpec{Table: tbl, Mem: mem, TablesDir: tablesDir, BatchSize: batch})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := open()
	var out strings.Builder
	enc := format.NewChangelogEncoder("", time.UTC)
	for i := 0; ; i++ {
		b, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out.Write(format.AppendRows(nil, enc, b))
		b.Release()
		if i == 0 { // continue in a new reader from the position
			pos, err := r.(exec.Snapshotter).Snapshot(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			r = open()
			if err := r.(exec.Restorer).Restore(pos); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Close()
	return out.String()
}

func TestUpsertsDeletesAndScan(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	tbl := tableOf("", nil, "k")
	if got := scan(t, mem, tbl, dir, 2); got != "" {
		t.Fatalf("a table never written reads %q", got)
	}
	write(t, mem, tbl, dir, `[{"k":"a","n":1,"ts":0},{"k":"b","n":1,"ts":null},{"k":"c","n":5,"ts":1000}]`)
	write(t, mem, tbl, dir, `[{"k":"a","n":1,"ts":0},{"k":"a","n":2,"ts":0},{"k":"c","n":5,"ts":1000},{"k":"d","n":7,"ts":2000}]`,
		exec.UpdateBefore, exec.UpdateAfter, exec.Delete, exec.Insert)
	want := "+I[a, 2, 1970-01-01 00:00:00.000]\n+I[b, 1, null]\n+I[d, 7, 1970-01-01 00:00:02.000]\n"
	if got := scan(t, mem, tbl, dir, 2); got != want {
		t.Errorf("scan:\n%s\nwant:\n%s", got, want)
	}
	// Written again (a replay), the content is the same.
	write(t, mem, tbl, dir, `[{"k":"a","n":2,"ts":0},{"k":"d","n":7,"ts":2000}]`, exec.UpdateAfter, exec.Insert)
	if got := scan(t, mem, tbl, dir, 1); got != want {
		t.Errorf("after replay:\n%s\nwant:\n%s", got, want)
	}
}

func TestOptionsAndSchema(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Sink.Open(ctx, connector.SinkSpec{Table: tableOf("", nil), Schema: schema, TablesDir: dir}); err == nil ||
		!strings.Contains(err.Error(), "needs a PRIMARY KEY") {
		t.Errorf("without a key: %v", err)
	}
	if _, err := Sink.Open(ctx, connector.SinkSpec{Table: tableOf("", map[string]string{"paht": "x"}, "k"), Schema: schema}); err == nil ||
		!strings.Contains(err.Error(), "unsupported option 'paht'") {
		t.Errorf("misspelt option: %v", err)
	}
	path := filepath.Join(dir, "t.db")
	write(t, mem, tableOf("", map[string]string{"path": path}, "k"), "", `[{"k":"a","n":1,"ts":0}]`)
	other := tableOf("", map[string]string{"path": path}, "n")
	r, err := Source.Open(ctx, connector.SourceSpec{Table: other, Mem: mem, BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(ctx); err == nil || !strings.Contains(err.Error(), "holds (k STRING, n BIGINT, ts TIMESTAMP(3), PRIMARY KEY (k))") {
		t.Errorf("reading with another key: %v", err)
	}
}
