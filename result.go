package streamsql

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// resultSink receives a SELECT's rows. In changelog format it prints each row as it
// arrives; otherwise it applies the changelog to a materialized result and prints that
// when the query ends.
type resultSink struct {
	cfg    Config
	schema planner.Schema
	w      *bufio.Writer

	rows  [][]string
	live  []bool
	index map[string][]int // row text → positions of live copies
	cells []string
}

var _ exec.Operator = (*resultSink)(nil)

func newResultSink(cfg Config, schema planner.Schema) *resultSink {
	return &resultSink{cfg: cfg, schema: schema, w: bufio.NewWriter(cfg.Out), index: map[string][]int{}}
}

func (r *resultSink) Process(_ context.Context, _ int, b exec.Batch) error {
	cols := b.Rec.Columns()
	for row := 0; row < b.Len(); row++ {
		r.cells = r.cells[:0]
		for _, col := range cols {
			r.cells = append(r.cells, r.cell(col, row))
		}
		kind := b.Kind(row)
		if r.cfg.Format == "changelog" {
			r.w.WriteString(kind.String())
			r.w.WriteByte('[')
			r.w.WriteString(strings.Join(r.cells, ", "))
			r.w.WriteString("]\n")
			continue
		}
		key := strings.Join(r.cells, "\x00")
		if kind.IsRetraction() {
			if pos := r.index[key]; len(pos) > 0 {
				r.live[pos[len(pos)-1]] = false
				r.index[key] = pos[:len(pos)-1]
			}
			continue
		}
		r.index[key] = append(r.index[key], len(r.rows))
		r.rows = append(r.rows, append([]string(nil), r.cells...))
		r.live = append(r.live, true)
	}
	if r.cfg.Format == "changelog" {
		return r.w.Flush()
	}
	return nil
}

// cell formats one value as the output format shows it.
func (r *resultSink) cell(col arrow.Array, row int) string {
	null := col.IsNull(row)
	switch r.cfg.Format {
	case "json":
		if null {
			return "null"
		}
		text := format.FormatValue(col, row, r.cfg.Location)
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
	return format.FormatValue(col, row, r.cfg.Location)
}

// print writes the materialized result.
func (r *resultSink) print() error {
	if r.cfg.Format == "changelog" {
		return r.w.Flush()
	}
	header := make([]string, len(r.schema))
	for i, c := range r.schema {
		header[i] = c.Name
	}
	var rows [][]string
	for i, row := range r.rows {
		if r.live[i] {
			rows = append(rows, row)
		}
	}
	switch r.cfg.Format {
	case "table":
		format.WriteTable(r.w, header, rows)
	case "csv":
		cw := csv.NewWriter(r.w)
		cw.Write(header)
		cw.WriteAll(rows)
	case "json":
		for _, row := range rows {
			r.w.WriteByte('{')
			for i, v := range row {
				if i > 0 {
					r.w.WriteByte(',')
				}
				name, _ := json.Marshal(header[i])
				r.w.Write(name)
				r.w.WriteByte(':')
				r.w.WriteString(v)
			}
			r.w.WriteString("}\n")
		}
	}
	return r.w.Flush()
}

// Snapshot records the materialized result, so a job restored from a checkpoint prints
// the same final result as one that never failed. A changelog already printed cannot be
// taken back: in that format, rows are printed at least once.
func (r *resultSink) Snapshot(context.Context, int64) ([]byte, error) {
	var live [][]string
	for i, row := range r.rows {
		if r.live[i] {
			live = append(live, row)
		}
	}
	return json.Marshal(live)
}

// Restore loads a snapshot's rows.
func (r *resultSink) Restore(data []byte) error {
	var rows [][]string
	if err := json.Unmarshal(data, &rows); err != nil {
		return fmt.Errorf("query result state: %w", err)
	}
	for _, row := range rows {
		r.index[strings.Join(row, "\x00")] = append(r.index[strings.Join(row, "\x00")], len(r.rows))
		r.rows = append(r.rows, row)
		r.live = append(r.live, true)
	}
	return nil
}
