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

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFileSourceCSVFile(t *testing.T) {
	mem := checkedMem(t)
	path := filepath.Join(t.TempDir(), "sensors.csv")
	// CRLF line ends, a multi-line quoted field, a blank line and no final line break.
	writeFile(t, path, "sensor_1,35.8,3\r\n\"multi\nline\",1.5,2\n\nsensor_2,-1,\n# not a comment,1,1\nlast,0,0")
	r := openSource(t, mem, table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": path, "format": "csv",
	}), 2)
	defer r.Close()
	rows, batches, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "+I[sensor_1, 35.8, 3]\n+I[multi\nline, 1.5, 2]\n+I[sensor_2, -1.0, null]\n+I[# not a comment, 1.0, 1]\n+I[last, 0.0, 0]\n"
	if rows != want || batches != 3 {
		t.Errorf("rows (%d batches):\n%s\nwant:\n%s", batches, rows, want)
	}
	pos := r.(*FileReader).Position()
	if pos.Path != path || pos.Line != 7 || pos.Offset != 78 {
		t.Errorf("position %+v", pos)
	}
}

// TestFileSourceByteOrderMark: a byte-order mark at a file's start is not part of its
// first field; one later in the file is data.
func TestFileSourceByteOrderMark(t *testing.T) {
	mem := checkedMem(t)
	path := filepath.Join(t.TempDir(), "sensors.csv")
	writeFile(t, path, "\ufeffsensor_1,35.8,3\n\ufeffsensor_2,1,1\n")
	r := openSource(t, mem, table("sensors", sensors, map[string]string{"connector": "filesystem", "path": path, "format": "csv"}), 10)
	defer r.Close()
	rows, _, err := drain(t, r, 1)
	if want := "+I[sensor_1, 35.8, 3]\n+I[\ufeffsensor_2, 1.0, 1]\n"; err != nil || rows != want {
		t.Errorf("rows %q, %v; want %q", rows, err, want)
	}
}

func TestFileSourceJSONDirectory(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.json"), `{"id":"b1","temperature":2,"cnt":2}`+"\n")
	writeFile(t, filepath.Join(dir, "a.json"), `{"id":"a1","temperature":1,"cnt":1}`+"\n"+`{"id":"a2","extra":[1,{"x":"]"}]}`+"\n")
	writeFile(t, filepath.Join(dir, ".hidden.json"), "not json\n")
	writeFile(t, filepath.Join(dir, "_SUCCESS"), "not json\n")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := openSource(t, mem, table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": dir, "format": "json",
	}), 1024)
	defer r.Close()
	rows, batches, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "+I[a1, 1.0, 1]\n+I[a2, null, null]\n+I[b1, 2.0, 2]\n"
	if rows != want || batches != 1 {
		t.Errorf("rows (%d batches):\n%s\nwant:\n%s", batches, rows, want)
	}
}

func TestFileSourceBadRecord(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "data.csv")
	writeFile(t, path, "sensor_1,35.8,3\nsensor_1,abc,3\nsensor_2,1,1\n")
	r := openSource(t, mem, table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": dir, "format": "csv",
	}), 1024)
	_, _, err := drain(t, r, 1)
	r.Close()
	want := `table sensors: ` + path + `: line 2: cannot parse "abc" as DOUBLE for column temperature: "sensor_1,abc,3"`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n got %v\nwant %s", err, want)
	}
	var pe *format.ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Errorf("not a ParseError for line 2: %v", err)
	}

	jpath := filepath.Join(dir, "data.json")
	writeFile(t, jpath, `{"id":"a"}`+"\n"+`{"id":"a","cnt":"x"}`+"\n")
	r = openSource(t, mem, table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": jpath, "format": "json",
	}), 1024)
	_, _, err = drain(t, r, 1)
	r.Close()
	if want := `table sensors: ` + jpath + `: line 2: cannot parse "x" as INT for column cnt: "{\"id\":\"a\",\"cnt\":\"x\"}"`; err == nil || err.Error() != want {
		t.Fatalf("error:\n got %v\nwant %s", err, want)
	}
}

func TestFileSourceSkipsBadRecords(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "1.csv"), "a,1,1\nb,x,1\nc,1\nd,2,2\n")
	writeFile(t, filepath.Join(dir, "2.json"), "")
	r := openSource(t, mem, table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": filepath.Join(dir, "1.csv"), "format": "csv", "csv.ignore-parse-errors": "true",
	}), 1024)
	defer r.Close()
	rows, _, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rows != "+I[a, 1.0, 1]\n+I[d, 2.0, 2]\n" {
		t.Errorf("rows:\n%s", rows)
	}
	if n := r.(exec.SkipCounter).Skipped(); n != 2 {
		t.Errorf("skipped %d, want 2", n)
	}
}

func TestFileSourceMissingPath(t *testing.T) {
	_, err := OpenSource(context.Background(), SourceSpec{Table: table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": "/does/not/exist", "format": "csv",
	})})
	if err == nil || !strings.HasPrefix(err.Error(), "table sensors: stat /does/not/exist: ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error: %v", err)
	}
}

func TestFileSourceMonitorsDirectory(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "1.csv"), "a,1,1\n")
	r := openSource(t, mem, table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": dir, "format": "csv", "source.monitor-interval": "20ms",
	}), 1024)
	defer r.Close()
	ctx := context.Background()
	next := func() string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			b, err := r.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if b.Rec != nil {
				defer b.Release()
				return string(format.AppendRows(nil, format.NewChangelogEncoder("", nil), b))
			}
		}
		t.Fatal("no rows within 5s")
		return ""
	}
	if got := next(); got != "+I[a, 1.0, 1]\n" {
		t.Fatalf("first: %q", got)
	}
	start := time.Now()
	b, err := r.Next(ctx) // nothing new: an empty batch after a short poll
	if err != nil || b.Rec != nil || time.Since(start) > time.Second {
		t.Fatalf("idle Next: %v, %v after %v", b.Rec, err, time.Since(start))
	}
	// A file written under a hidden name and renamed appears once.
	writeFile(t, filepath.Join(dir, ".2.csv.tmp"), "b,2,2\n")
	if err := os.Rename(filepath.Join(dir, ".2.csv.tmp"), filepath.Join(dir, "2.csv")); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "+I[b, 2.0, 2]\n" {
		t.Fatalf("second: %q", got)
	}
	writeFile(t, filepath.Join(dir, "0.csv"), "c,3,3\n") // sorts first but is new: read now
	if got := next(); got != "+I[c, 3.0, 3]\n" {
		t.Fatalf("third: %q", got)
	}
	for i := 0; i < 3; i++ { // files already read are not read again
		b, err := r.Next(ctx)
		if err != nil || b.Rec != nil {
			t.Fatalf("re-read: %v %v", b.Rec, err)
		}
	}
}

func TestFileSinkThenSource(t *testing.T) {
	for _, f := range []string{"csv", "json"} {
		t.Run(f, func(t *testing.T) {
			mem := checkedMem(t)
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "out", "nested")
			schema := planner.Schema{
				{Name: "id", Type: planner.TypeString},
				{Name: "temperature", Type: planner.TypeDouble},
				{Name: "ts", Type: planner.TypeTS},
			}
			tbl := table("out", schema, map[string]string{"connector": "filesystem", "path": dir, "format": f})
			sink, err := OpenSink(ctx, SinkSpec{Table: tbl, Schema: schema, Mem: mem, Location: time.UTC})
			if err != nil {
				t.Fatal(err)
			}
			rec := recordOf(t, mem, schema, `[{"id":"a,\"b\"","temperature":35.8,"ts":1547718199000},{"id":"","temperature":null,"ts":null}]`)
			if err := sink.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			// Nothing is visible before the sink finishes: the file is hidden.
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), ".part-") {
				t.Fatalf("before finish: %v", entries)
			}
			if err := sink.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
			entries, _ = os.ReadDir(dir)
			if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "part-") || !strings.HasSuffix(entries[0].Name(), "-0."+f) {
				t.Fatalf("after finish: %v", entries)
			}
			data, _ := os.ReadFile(filepath.Join(dir, entries[0].Name()))
			want := map[string]string{
				"csv":  "\"a,\"\"b\"\"\",35.8,2019-01-17 09:43:19.000\n\"\",,\n",
				"json": `{"id":"a,\"b\"","temperature":35.8,"ts":"2019-01-17 09:43:19.000"}` + "\n" + `{"id":"","temperature":null,"ts":null}` + "\n",
			}[f]
			if string(data) != want {
				t.Errorf("file:\n%s\nwant:\n%s", data, want)
			}
			r := openSource(t, mem, tbl, 1024)
			defer r.Close()
			rows, _, err := drain(t, r, 1)
			if err != nil {
				t.Fatal(err)
			}
			if want := "+I[a,\"b\", 35.8, 2019-01-17 09:43:19.000]\n+I[, null, null]\n"; rows != want {
				t.Errorf("read back:\n%s\nwant:\n%s", rows, want)
			}
		})
	}
}

func TestFileSinkRejectsUpdates(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	dir := t.TempDir()
	tbl := table("out", sensors, map[string]string{"connector": "filesystem", "path": dir, "format": "csv"})
	sink, err := OpenSink(ctx, SinkSpec{Table: tbl, Schema: sensors, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	rec := recordOf(t, mem, sensors, `[{"id":"a","temperature":1,"cnt":1},{"id":"a","temperature":2,"cnt":2}]`)
	defer rec.Release()
	if err := sink.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
		t.Fatal(err)
	}
	err = sink.Process(ctx, 0, exec.Batch{Rec: rec, Kinds: []exec.RowKind{exec.UpdateBefore, exec.UpdateAfter}})
	if err == nil || err.Error() != "filesystem sink out accepts only inserts; the query produces updates" ||
		!errors.Is(err, ErrNotAppendOnly) {
		t.Fatalf("error: %v", err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed sink left files: %v", entries)
	}
}

func TestFileSinkWithoutRowsWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sink, err := OpenSink(ctx, SinkSpec{Table: table("out", sensors, map[string]string{"connector": "filesystem", "path": dir, "format": "json"})})
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	sink.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files: %v", entries)
	}
}

func BenchmarkFileSourceCSV(b *testing.B) {
	const rows = 100000
	path := filepath.Join(b.TempDir(), "sensors.csv")
	var data []byte
	for i := 0; i < rows; i++ {
		data = fmt.Appendf(data, "sensor_%d,%d,%d.%d\n", i%100, 1547718199+i, 20+i%15, i%10)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	schema := planner.Schema{{Name: "id", Type: planner.TypeString}, {Name: "ts", Type: planner.TypeBigInt}, {Name: "temperature", Type: planner.TypeDouble}}
	tbl := table("sensors", schema, map[string]string{"connector": "filesystem", "path": path, "format": "csv"})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	ctx := context.Background()
	for n := 0; n < b.N; n++ {
		r, err := OpenSource(ctx, SourceSpec{Table: tbl})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			batch, err := r.Next(ctx)
			if err != nil {
				break
			}
			got += batch.Len()
			batch.Release()
		}
		r.Close()
		if got != rows {
			b.Fatalf("%d rows", got)
		}
	}
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
}
