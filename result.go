package streamsql

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// Change is one row of a query's changelog, its cells formatted for display.
type Change struct {
	Kind exec.RowKind
	Row  []string
}

// A LiveResult shows a query's result while it runs, as the shell's result modes do.
// Apply is called from the query's task for every batch of changes, and End once the
// query stopped; Apply does not keep changes past the call.
type LiveResult interface {
	Apply(changes []Change)
	End()
}

// LiveSpec is what a live view of a query's result is told when the query starts.
type LiveSpec struct {
	Mode    string   // 'sql-client.execution.result-mode': table, changelog or tableau
	Columns []string // the result's column names
	MaxRows int      // 'sql-client.execution.max-table-result.rows': at most this many rows kept
}

// resultOut is what a query's result sinks share across restarts of its job: the
// output, whether the header was written, whether the row bound was reported.
type resultOut struct {
	w       *bufio.Writer
	live    LiveResult // nil: print by the session's format
	header  bool
	warned  bool
	maxRows int
	log     *slog.Logger
}

// resultSink receives a SELECT's rows. It prints each change as it arrives in
// changelog format, each row as it arrives when the result is insert-only and printed
// as csv or json (stream), and hands each batch of changes to a live view when there
// is one; otherwise it applies the changelog to a materialized result, held by row and
// bounded by maxRows, and prints that when the query ends.
type resultSink struct {
	cfg    Config
	schema planner.Schema
	out    *resultOut
	stream bool

	held    *Materialized
	cells   []string
	changes []Change
}

var _ exec.Operator = (*resultSink)(nil)

func newResultSink(cfg Config, schema planner.Schema, out *resultOut, stream bool) *resultSink {
	r := &resultSink{cfg: cfg, schema: schema, out: out, stream: stream}
	r.held = NewMaterialized(out.maxRows, func() {
		if !out.warned {
			out.warned = true
			out.log.Warn(fmt.Sprintf("the result holds at most %d rows ('sql-client.execution.max-table-result.rows') and %d MB: the oldest rows are dropped", out.maxRows, MaxResultBytes>>20))
		}
	})
	return r
}

func (r *resultSink) Process(_ context.Context, _ int, b exec.Batch) error {
	cols := b.Rec.Columns()
	w := r.out.w
	if r.stream && !r.out.header {
		r.writeHeader()
	}
	r.changes = r.changes[:0]
	for row := 0; row < b.Len(); row++ {
		r.cells = r.cells[:0]
		for c, col := range cols {
			r.cells = append(r.cells, r.cell(col, c, row))
		}
		kind := b.Kind(row)
		switch {
		case r.out.live != nil:
			r.changes = append(r.changes, Change{Kind: kind, Row: append([]string(nil), r.cells...)})
		case r.cfg.Format == "changelog":
			w.WriteString(kind.String())
			w.WriteByte('[')
			w.WriteString(strings.Join(r.cells, ", "))
			w.WriteString("]\n")
		case r.stream:
			r.writeRow(r.cells)
		default:
			r.held.Apply(kind, r.cells)
		}
	}
	if r.out.live != nil {
		r.out.live.Apply(r.changes)
		return nil
	}
	if r.cfg.Format == "changelog" || r.stream {
		return w.Flush()
	}
	return nil
}

// cell formats one value of column c as the output format shows it.
func (r *resultSink) cell(col arrow.Array, c, row int) string {
	var t planner.Type
	if c < len(r.schema) {
		t = r.schema[c].Type
	}
	null := col.IsNull(row)
	f := r.cfg.Format
	if r.out.live != nil {
		f = "table"
	}
	switch f {
	case "json":
		if null {
			return "null"
		}
		text := format.FormatTypedValue(col, row, t, r.cfg.Location)
		switch col.DataType().ID() {
		case arrow.INT32, arrow.INT64, arrow.BOOL, arrow.DECIMAL128:
			return text
		case arrow.FLOAT64:
			if v := col.(interface{ Value(int) float64 }).Value(row); v == v && v-v == 0 {
				return text
			}
		case arrow.INT8, arrow.INT16, arrow.FLOAT32, arrow.BINARY, arrow.STRUCT, arrow.LIST, arrow.MAP:
			return format.JSONValue(col, row, r.cfg.Location)
		}
		q, _ := json.Marshal(text)
		return string(q)
	case "csv":
		if null {
			return ""
		}
	case "table":
		if null {
			return "<NULL>"
		}
	case "changelog":
		if null {
			return "null"
		}
	}
	return format.FormatTypedValue(col, row, t, r.cfg.Location)
}

func (r *resultSink) columns() []string { return columnNames(r.schema) }

// writeHeader writes the csv header line, once per query.
func (r *resultSink) writeHeader() {
	r.out.header = true
	if r.cfg.Format == "csv" {
		cw := csv.NewWriter(r.out.w)
		cw.Write(r.columns())
		cw.Flush()
	}
}

// writeRow writes one row in csv or json.
func (r *resultSink) writeRow(row []string) {
	w := r.out.w
	if r.cfg.Format == "csv" {
		cw := csv.NewWriter(w)
		cw.Write(row)
		cw.Flush()
		return
	}
	w.WriteByte('{')
	for i, v := range row {
		if i > 0 {
			w.WriteByte(',')
		}
		name, _ := json.Marshal(r.schema[i].Name)
		w.Write(name)
		w.WriteByte(':')
		w.WriteString(v)
	}
	w.WriteString("}\n")
}

// print writes the materialized result, or ends the stream.
func (r *resultSink) print() error {
	if r.out.live != nil {
		return nil
	}
	w := r.out.w
	if r.cfg.Format == "changelog" {
		return w.Flush()
	}
	if r.stream {
		if !r.out.header {
			r.writeHeader()
		}
		return w.Flush()
	}
	rows := r.held.Rows()
	switch r.cfg.Format {
	case "table":
		format.WriteTable(w, r.columns(), rows)
	case "csv":
		r.writeHeader()
		for _, row := range rows {
			r.writeRow(row)
		}
	case "json":
		for _, row := range rows {
			r.writeRow(row)
		}
	}
	return w.Flush()
}

// Snapshot records the materialized result, so a job restored from a checkpoint prints
// the same final result as one that never failed. Rows already printed (a changelog, a
// streamed result) cannot be taken back: there, rows are printed at least once.
func (r *resultSink) Snapshot(context.Context, int64) ([]byte, error) {
	return json.Marshal(r.held.Rows())
}

// Restore loads a snapshot's rows.
func (r *resultSink) Restore(data []byte) error {
	var rows [][]string
	if err := json.Unmarshal(data, &rows); err != nil {
		return fmt.Errorf("query result state: %w", err)
	}
	for _, row := range rows {
		r.held.Apply(exec.Insert, row)
	}
	return nil
}
