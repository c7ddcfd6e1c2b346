package format

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// Decoder turns records, one line each, into the rows of an Arrow record of a table's
// physical schema. Builders are kept across records and batches. A Decoder is used by
// one goroutine.
type Decoder interface {
	// Decode decodes one record: a line without its terminator. Blank lines (and, in
	// csv with csv.allow-comments, lines starting with '#') produce no row. A bad record
	// appends nothing and returns a *ParseError naming lineNo, or, when the format
	// ignores parse errors, is counted as skipped and returns nil.
	Decode(line []byte, lineNo int64) error
	// RecordEnd returns the index of the '\n' that ends the first record of buf, or -1
	// when buf holds no complete record. In csv a line break inside a quoted field does
	// not end a record; a record may end in "\r\n", and Decode drops the '\r'.
	RecordEnd(buf []byte) int
	// Rows returns the number of rows decoded since the last Flush.
	Rows() int
	// Flush returns the rows decoded since the last Flush as a record the caller owns
	// and releases, or nil when there are none.
	Flush() arrow.Record
	// Kinds returns the row kinds of the record the latest Flush returned, nil when
	// every row is an insert (always so but for the changelog formats: debezium-json,
	// canal-json, maxwell-json). The caller owns the slice.
	Kinds() []exec.RowKind
	// Skipped returns how many records were skipped as malformed.
	Skipped() int64
	// Release frees the builders; rows not flushed are dropped.
	Release()
}

// NewDecoder returns the decoder of format (one of Formats) for schema, configured by
// the format's keys in opts (Flink's WITH options, e.g. csv.field-delimiter; other keys
// are ignored). loc is the session time zone (nil means UTC).
func NewDecoder(format string, schema planner.Schema, mem memory.Allocator, opts map[string]string, loc *time.Location) (Decoder, error) {
	switch format {
	case "csv":
		o, err := ParseCSVOptions(opts)
		if err != nil {
			return nil, err
		}
		o.Location = loc
		return NewCSVDecoder(schema, mem, o)
	case "json":
		o, err := ParseJSONOptions(opts)
		if err != nil {
			return nil, err
		}
		o.Location = loc
		return NewJSONDecoder(schema, mem, o)
	case Debezium, Canal, Maxwell:
		o, err := ParseChangelogOptions(format, opts)
		if err != nil {
			return nil, err
		}
		o.JSON.Location = loc
		return NewCDCDecoder(schema, mem, o)
	case Raw:
		o, err := ParseRawOptions(opts)
		if err != nil {
			return nil, err
		}
		return NewRawDecoder(schema, mem, o)
	}
	return nil, fmt.Errorf("unknown format %q (supported: %s)", format, strings.Join(Formats(), ", "))
}

// column is one output column: its type, and its writer or (for the kinds without
// one) its Arrow builder.
type column struct {
	name     string
	kind     planner.Kind
	typeName string // the type in messages, without NOT NULL
	notNull  bool
	prec     int
	scale    int
	ltz      bool

	w     *arrowbuf.Writer
	other array.Builder // the builder of the kinds without a writer

	nested *nestedCol  // json: how to read a ROW, ARRAY or MAP column
	minute minuteCache // a timestamp column's last minute
}

// cell holds one parsed value of the record being decoded until the whole record is
// known to be good; only then are the cells appended to the builders.
type cell struct {
	null bool
	set  bool // json: the field was present
	i    int64
	f    float64
	d    decimal128.Num
	s    []byte
	tree any // a ROW, ARRAY or MAP value (see nestedCol.parse)
}

// rowBuilder is the part of a decoder shared by the formats: columns, cells, their
// writers and builders, and the error policy.
type rowBuilder struct {
	format  string
	schema  *arrow.Schema
	cols    []column
	cells   []cell
	loc     *time.Location
	ignore  bool
	rows    int
	skipped int64

	// The row kinds of the changelog formats: kinds of the rows since the last Flush
	// (nil while all are inserts), flushed those of the latest Flush.
	kinds, flushed []exec.RowKind
}

func newRowBuilder(format string, schema planner.Schema, mem memory.Allocator, loc *time.Location, ignore bool) (*rowBuilder, error) {
	if len(schema) == 0 {
		return nil, fmt.Errorf("format %s needs at least one column", format)
	}
	if loc == nil {
		loc = time.UTC
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	for _, c := range schema {
		if !readable(c.Type, format == "json") {
			return nil, fmt.Errorf("format %s cannot read column %s of type %s", format, c.Name, c.Type.Nullable())
		}
	}
	b := &rowBuilder{
		format: format,
		schema: exec.ArrowSchema(schema),
		cols:   make([]column, len(schema)),
		cells:  make([]cell, len(schema)),
		loc:    loc,
		ignore: ignore,
	}
	for i, c := range schema {
		col := &b.cols[i]
		col.name = c.Name
		col.kind = c.Type.Kind
		col.typeName = c.Type.Nullable().String()
		col.notNull = c.Type.NotNull
		col.prec, col.scale = c.Type.Precision, c.Type.Scale
		col.ltz = c.Type.Kind == planner.TimestampLTZ
		if c.Type.IsNested() {
			col.nested = newNestedCol(c.Type)
		}
		dtype := b.schema.Field(i).Type
		if col.w = newColWriter(mem, col.kind, dtype); col.w == nil {
			col.other = array.NewBuilder(mem, dtype)
		}
	}
	return b, nil
}

// readable reports whether a format reads values of type t; only json reads ROW, ARRAY
// and MAP.
func readable(t planner.Type, nested bool) bool {
	switch t.Kind {
	case planner.Boolean, planner.TinyInt, planner.SmallInt, planner.Int, planner.BigInt,
		planner.Float, planner.Double, planner.String, planner.Binary, planner.Timestamp,
		planner.TimestampLTZ, planner.Date, planner.Time:
		return true
	case planner.Decimal:
		return t.Precision >= 1 && t.Precision <= 38 && t.Scale >= 0 && t.Scale <= t.Precision
	case planner.Row:
		for _, f := range t.Fields() {
			if !readable(f.Type, nested) {
				return false
			}
		}
		return nested
	case planner.Array:
		return nested && readable(t.Elem(), nested)
	case planner.Map, planner.Multiset:
		return nested && readable(t.Elem(), nested) && readable(t.Value(), nested)
	}
	return false
}

// leafColumn describes a value of a scalar type t for parseText.
func leafColumn(name string, t planner.Type) column {
	return column{name: name, kind: t.Kind, typeName: t.Nullable().String(), notNull: t.NotNull,
		prec: t.Precision, scale: t.Scale, ltz: t.Kind == planner.TimestampLTZ}
}

// parseText parses the text of a non-null value of column c into dst; it returns a
// reason when the text is not a value of the column's type.
func (c *column) parseText(dst *cell, text []byte, loc *time.Location) string {
	dst.null = false
	if c.kind == planner.String {
		dst.s = text
		return ""
	}
	text = trimSpace(text)
	var r string
	switch c.kind {
	case planner.Boolean:
		var v bool
		v, r = parseBool(text)
		dst.i = 0
		if v {
			dst.i = 1
		}
	case planner.TinyInt:
		dst.i, r = parseInt(text, -1<<7, 1<<7-1)
	case planner.SmallInt:
		dst.i, r = parseInt(text, -1<<15, 1<<15-1)
	case planner.Int:
		dst.i, r = parseInt(text, -1<<31, 1<<31-1)
	case planner.BigInt:
		dst.i, r = parseInt(text, -1<<63, 1<<63-1)
	case planner.Float:
		dst.f, r = parseFloat(text)
		dst.f = float64(float32(dst.f))
	case planner.Double:
		dst.f, r = parseFloat(text)
	case planner.Binary:
		// BYTES text is base64, as in Flink's csv and json formats.
		var err error
		if dst.s, err = base64.StdEncoding.AppendDecode(dst.s[:0], text); err != nil {
			r = "not base64"
		}
	case planner.Decimal:
		// A number too large for the DECIMAL is a malformed record, under the table's
		// error policy (Flink reads it as NULL, silently).
		dst.d, r = parseDecimal(text, c.prec, c.scale)
	case planner.Timestamp, planner.TimestampLTZ:
		dst.i, r = parseTimestampCached(text, c.ltz, loc, &c.minute)
		dst.i = planner.TruncateMillis(dst.i, c.prec) // TIMESTAMP(p < 3) keeps p digits
	case planner.Date:
		var d int32
		d, r = parseDate(text)
		dst.i = int64(d)
	case planner.Time:
		dst.i, r = parseTime(text, c.prec)
	}
	return r
}

// appendCells appends the parsed record to the builders.
func (b *rowBuilder) appendCells() { b.appendRow(b.cells, exec.Insert) }

// appendRow appends a parsed row of the given kind to the writers and builders.
func (b *rowBuilder) appendRow(cells []cell, kind exec.RowKind) {
	if kind != exec.Insert && b.kinds == nil {
		b.kinds = make([]exec.RowKind, b.rows, max(b.rows+1, 64))
	}
	if b.kinds != nil {
		b.kinds = append(b.kinds, kind)
	}
	row := b.rows
	for i := range b.cols {
		c, v := &b.cols[i], &cells[i]
		if w := c.w; w != nil {
			switch {
			case v.null:
				w.PutNull(row)
			case c.kind == planner.String || c.kind == planner.Binary:
				w.PutBytes(row, v.s)
			case c.kind == planner.Double:
				w.PutInt64(row, int64(math.Float64bits(v.f)))
			case w.Width() == 8:
				w.PutInt64(row, v.i)
			default:
				w.PutInt32(row, int32(v.i))
			}
			continue
		}
		switch {
		case v.null:
			c.other.AppendNull()
		case c.nested != nil:
			c.nested.append(c.other, v.tree)
		default:
			appendLeaf(c.other, v)
		}
	}
	b.rows++
}

// appendLeaf appends a parsed scalar to a builder of any scalar type.
func appendLeaf(b array.Builder, v *cell) {
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.i != 0)
	case *array.Int8Builder:
		b.Append(int8(v.i))
	case *array.Int16Builder:
		b.Append(int16(v.i))
	case *array.Int32Builder:
		b.Append(int32(v.i))
	case *array.Int64Builder:
		b.Append(v.i)
	case *array.Float32Builder:
		b.Append(float32(v.f))
	case *array.Float64Builder:
		b.Append(v.f)
	case *array.Decimal128Builder:
		b.Append(v.d)
	case *array.StringBuilder:
		b.BinaryBuilder.Append(v.s)
	case *array.BinaryBuilder:
		b.Append(v.s)
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.i))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.i))
	case *array.Time32Builder:
		b.Append(arrow.Time32(v.i))
	default:
		b.AppendNull()
	}
}

// valueError is the ParseError message for a value that does not parse.
func (c *column) valueError(text []byte, reason string) string {
	msg := "cannot parse " + quoteClipped(string(text)) + " as " + c.typeName
	if reason != reasonSyntax && reason != "" {
		msg += " (" + reason + ")"
	}
	return msg
}

// fail handles a bad record: counted and dropped when errors are ignored, otherwise a
// *ParseError. col is the index of the bad column or -1.
func (b *rowBuilder) fail(line []byte, lineNo int64, col int, msg string) error {
	if b.ignore {
		b.skipped++
		return nil
	}
	if !utf8.Valid(line) {
		line = appendValidUTF8(nil, line)
	}
	e := &ParseError{Line: lineNo, Text: string(line), Msg: msg}
	if col >= 0 {
		e.Column = b.cols[col].name
	}
	return e
}

// Rows returns the number of rows decoded since the last Flush.
func (b *rowBuilder) Rows() int { return b.rows }

// Skipped returns how many records were skipped as malformed.
func (b *rowBuilder) Skipped() int64 { return b.skipped }

// Flush returns the decoded rows as a record, or nil when there are none.
func (b *rowBuilder) Flush() arrow.Record {
	if b.rows == 0 {
		b.flushed = nil
		return nil
	}
	n := b.rows
	arrs := make([]arrow.Array, len(b.cols))
	for i := range b.cols {
		if c := &b.cols[i]; c.w != nil {
			arrs[i] = c.w.Finish(n) // and sized for a next batch like this one
		} else {
			arrs[i] = c.other.NewArray()
			c.other.Reserve(n)
		}
	}
	rec := array.NewRecord(b.schema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	b.rows = 0
	b.flushed, b.kinds = b.kinds, nil
	return rec
}

// Kinds returns the row kinds of the latest Flush's record, nil when all are inserts.
func (b *rowBuilder) Kinds() []exec.RowKind {
	k := b.flushed
	b.flushed = nil
	return k
}

// Release frees the writers and builders.
func (b *rowBuilder) Release() {
	for i := range b.cols {
		c := &b.cols[i]
		if c.w != nil {
			c.w.Release()
			c.w = nil
		}
		if c.other != nil {
			c.other.Release()
			c.other = nil
		}
	}
}
