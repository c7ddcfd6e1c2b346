package connector

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

var sensors = planner.Schema{
	{Name: "id", Type: planner.TypeString},
	{Name: "temperature", Type: planner.TypeDouble},
	{Name: "cnt", Type: planner.TypeInt},
}

func table(name string, schema planner.Schema, opts map[string]string) *planner.Table {
	t := &planner.Table{Name: name, Options: opts}
	for _, c := range schema {
		t.Columns = append(t.Columns, planner.TableColumn{Name: c.Name, Type: c.Type})
	}
	return t
}

func checkedMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func openSource(t *testing.T, mem memory.Allocator, tbl *planner.Table, batch int) exec.Reader {
	t.Helper()
	r, err := OpenSource(context.Background(), SourceSpec{Table: tbl, Mem: mem, Location: time.UTC, BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// drain reads r to its end (or until maxEmpty empty batches in a row) and returns the
// rows in changelog form, the number of batches and the final error (nil at io.EOF).
func drain(t *testing.T, r exec.Reader, maxEmpty int) (string, int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []byte
	enc := format.NewChangelogEncoder("", time.UTC)
	batches, empty := 0, 0
	for {
		b, err := r.Next(ctx)
		if err == io.EOF {
			return string(out), batches, nil
		}
		if err != nil {
			return string(out), batches, err
		}
		if b.Rec == nil {
			empty++
			if empty >= maxEmpty {
				return string(out), batches, nil
			}
			continue
		}
		empty = 0
		batches++
		out = format.AppendRows(out, enc, b)
		b.Release()
	}
}

func TestOptionErrors(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	for _, tc := range []struct {
		opts map[string]string
		sink bool
		want string
	}{
		{map[string]string{"connector": "kafak"}, false,
			`table sensors: unknown connector "kafak" (supported: blackhole, datagen, filesystem, print, socket)`},
		{map[string]string{}, false,
			`table sensors: option 'connector' is required (supported: blackhole, datagen, filesystem, print, socket)`},
		{map[string]string{"connector": "print"}, false,
			`table sensors: connector 'print' is a sink; it cannot be read`},
		{map[string]string{"connector": "datagen"}, true,
			`table sensors: connector 'datagen' is a source; it cannot be written`},
		{map[string]string{"connector": "datagen", "foo": "1"}, false,
			`table sensors: unsupported option 'foo' for connector 'datagen' (supported: connector, fields.#.end, fields.#.kind, fields.#.length, fields.#.max, fields.#.max-past, fields.#.min, fields.#.null-rate, fields.#.start, number-of-rows, rows-per-second, seed)`},
		{map[string]string{"connector": "datagen", "rows-per-second": "fast"}, false,
			`table sensors: option 'rows-per-second' must be an integer from 1 to 9223372036854775807, got "fast"`},
		{map[string]string{"connector": "datagen", "fields.nope.kind": "random"}, false,
			`table sensors: option 'fields.nope.kind' names no physical column nope`},
		{map[string]string{"connector": "datagen", "fields.id.kind": "sequence", "fields.id.start": "1"}, false,
			`table sensors: option 'fields.id.end' is required for a sequence`},
		{map[string]string{"connector": "datagen", "fields.cnt.kind": "sequence", "fields.cnt.start": "9", "fields.cnt.end": "1"}, false,
			`table sensors: option 'fields.cnt.start' (9) is greater than 'fields.cnt.end' (1)`},
		{map[string]string{"connector": "datagen", "fields.cnt.length": "5"}, false,
			`table sensors: option 'fields.cnt.length' does not apply to a random field cnt of type INT`},
		{map[string]string{"connector": "datagen", "fields.cnt.kind": "zigzag"}, false,
			`table sensors: option 'fields.cnt.kind' must be 'random' or 'sequence', got "zigzag"`},
		{map[string]string{"connector": "datagen", "fields.cnt.min": "10", "fields.cnt.max": "1"}, false,
			`table sensors: option 'fields.cnt.min' (10) is greater than 'fields.cnt.max' (1)`},
		{map[string]string{"connector": "datagen", "fields.temperature.null-rate": "2"}, false,
			`table sensors: option 'fields.temperature.null-rate' must be a number from 0 to 1, got "2"`},
		{map[string]string{"connector": "filesystem", "format": "csv"}, false,
			`table sensors: option 'path' is required`},
		{map[string]string{"connector": "filesystem", "path": "/x"}, false,
			`table sensors: option 'format' is required (supported: csv, json, debezium-json, canal-json, maxwell-json, raw)`},
		{map[string]string{"connector": "filesystem", "path": "/x", "format": "avro"}, false,
			`table sensors: unknown format "avro" (supported: csv, json, debezium-json, canal-json, maxwell-json, raw)`},
		{map[string]string{"connector": "filesystem", "path": "/x", "format": "csv", "json.ignore-parse-errors": "true"}, false,
			`table sensors: unsupported option 'json.ignore-parse-errors' for connector 'filesystem' (did you mean 'csv.ignore-parse-errors'?) (supported: connector, csv.allow-comments, csv.disable-quote-character, csv.field-delimiter, csv.ignore-parse-errors, csv.null-literal, csv.quote-character, format, partition.default-name, partition.time-extractor.kind, partition.time-extractor.timestamp-pattern, path, sink.partition-commit.delay, sink.partition-commit.policy.kind, sink.partition-commit.success-file.name, sink.partition-commit.trigger, sink.partition-commit.watermark-time-zone, sink.rolling-policy.check-interval, sink.rolling-policy.file-size, sink.rolling-policy.inactivity-interval, sink.rolling-policy.rollover-interval, sink.shuffle-by-partition.enable, source.monitor-interval)`},
		{map[string]string{"connector": "filesystem", "path": t.TempDir(), "format": "csv", "csv.field-delimiter": ";;"}, false,
			`table sensors: option 'csv.field-delimiter' must be a single ASCII character other than a line break, got ";;"`},
		{map[string]string{"connector": "filesystem", "path": t.TempDir(), "format": "csv", "source.monitor-interval": "soon"}, false,
			`table sensors: option 'source.monitor-interval': invalid duration "soon", expected for example '10 s' or '500 ms'`},
		{map[string]string{"connector": "socket", "hostname": "localhost", "format": "csv"}, false,
			`table sensors: option 'port' is required`},
		{map[string]string{"connector": "socket", "hostname": "localhost", "port": "99999", "format": "csv"}, false,
			`table sensors: option 'port' must be an integer from 1 to 65535, got "99999"`},
		{map[string]string{"connector": "print", "standard-error": "maybe"}, true,
			`table sensors: option 'standard-error' must be true or false, got "maybe"`},
		{map[string]string{"connector": "blackhole", "path": "/x"}, true,
			`table sensors: unsupported option 'path' for connector 'blackhole' (supported: connector, test.fail-at-record, test.fail-mode)`},
		{map[string]string{"connector": "filesystem", "format": "json"}, true,
			`table sensors: option 'path' is required`},
	} {
		tbl := table("sensors", sensors, tc.opts)
		var err error
		if tc.sink {
			_, err = OpenSink(ctx, SinkSpec{Table: tbl, Mem: mem})
		} else {
			var r exec.Reader
			r, err = OpenSource(ctx, SourceSpec{Table: tbl, Mem: mem})
			if err == nil {
				r.Close()
			}
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.opts, err, tc.want)
		}
	}
	_, err := OpenSource(ctx, SourceSpec{Table: table("t", sensors, map[string]string{"connector": "kafak"})})
	if !errors.Is(err, ErrUnknownConnector) {
		t.Errorf("errors.Is(ErrUnknownConnector) false for %v", err)
	}
	_, err = OpenSource(ctx, SourceSpec{Table: table("t", sensors, map[string]string{"connector": "datagen", "foo": "x"})})
	if !errors.Is(err, ErrInvalidOption) {
		t.Errorf("errors.Is(ErrInvalidOption) false for %v", err)
	}
}

func TestSinkOutput(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	rec := recordOf(t, mem, sensors, `[{"id":"sensor_1","temperature":35.8,"cnt":3},{"id":null,"temperature":null,"cnt":null}]`)
	defer rec.Release()
	batch := exec.Batch{Rec: rec, Kinds: []exec.RowKind{exec.Insert, exec.UpdateBefore}}

	var out, errOut bytes.Buffer
	for _, tc := range []struct {
		opts map[string]string
		want string
		err  string
	}{
		{map[string]string{"connector": "print"}, "+I[sensor_1, 35.8, 3]\n-U[null, null, null]\n", ""},
		{map[string]string{"connector": "print", "print-identifier": "sensors"}, "sensors> +I[sensor_1, 35.8, 3]\nsensors> -U[null, null, null]\n", ""},
		{map[string]string{"connector": "print", "standard-error": "true"}, "", "+I[sensor_1, 35.8, 3]\n-U[null, null, null]\n"},
		{map[string]string{"connector": "blackhole"}, "", ""},
	} {
		out.Reset()
		errOut.Reset()
		s, err := OpenSink(ctx, SinkSpec{Table: table("out", sensors, tc.opts), Schema: sensors, Mem: mem, Stdout: &out, Stderr: &errOut})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Process(ctx, 0, batch); err != nil {
			t.Fatal(err)
		}
		if err := s.Process(ctx, 0, exec.Batch{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want || errOut.String() != tc.err {
			t.Errorf("%v: stdout %q, stderr %q; want %q, %q", tc.opts, out.String(), errOut.String(), tc.want, tc.err)
		}
	}
}

func TestEmptyBatchesAreIgnoredBySinks(t *testing.T) {
	for _, c := range []string{"print", "blackhole"} {
		s, err := OpenSink(context.Background(), SinkSpec{Table: table("t", sensors, map[string]string{"connector": c}), Stdout: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Process(context.Background(), 0, exec.Batch{}); err != nil {
			t.Error(err)
		}
		s.Close()
	}
}

func recordOf(t *testing.T, mem memory.Allocator, schema planner.Schema, js string) arrow.Record {
	t.Helper()
	rec, _, err := array.RecordFromJSON(mem, exec.ArrowSchema(schema), strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
