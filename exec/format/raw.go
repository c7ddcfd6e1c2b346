package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// Raw is Flink's raw format: a record is the value of the table's single column as it
// is, text in raw.charset or bytes, or a number in its binary form (raw.endianness).
const Raw = "raw"

var rawOptionKeys = []string{"raw.charset", "raw.endianness"}

// RawOptions are the options of the raw format.
type RawOptions struct {
	// Charset is raw.charset: "UTF-8" (the default), "ISO-8859-1" or "US-ASCII".
	Charset string
	// LittleEndian is raw.endianness = 'little-endian' (the default is big-endian).
	LittleEndian bool
}

// ParseRawOptions reads the raw.* keys of opts (other keys are ignored).
func ParseRawOptions(opts map[string]string) (RawOptions, error) {
	o := RawOptions{Charset: "UTF-8"}
	if v, ok := opts["raw.charset"]; ok {
		switch c := strings.ToUpper(strings.TrimSpace(v)); c {
		case "UTF-8", "UTF8":
		case "ISO-8859-1", "LATIN1":
			o.Charset = "ISO-8859-1"
		case "US-ASCII", "ASCII":
			o.Charset = "US-ASCII"
		default:
			return o, fmt.Errorf("option 'raw.charset' must be 'UTF-8', 'ISO-8859-1' or 'US-ASCII', got %q", v)
		}
	}
	if v, ok := opts["raw.endianness"]; ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "big-endian":
		case "little-endian":
			o.LittleEndian = true
		default:
			return o, fmt.Errorf("option 'raw.endianness' must be 'big-endian' or 'little-endian', got %q", v)
		}
	}
	return o, nil
}

// rawSize is the size in bytes of a raw value of kind k, 0 for text and bytes.
func rawSize(k planner.Kind) int {
	switch k {
	case planner.Boolean, planner.TinyInt:
		return 1
	case planner.SmallInt:
		return 2
	case planner.Int, planner.Float:
		return 4
	case planner.BigInt, planner.Double:
		return 8
	}
	return 0
}

// checkRawSchema checks that schema is one column of a type raw reads.
func checkRawSchema(schema planner.Schema) error {
	if len(schema) != 1 {
		return fmt.Errorf("format raw needs exactly one physical column, the table has %d", len(schema))
	}
	switch k := schema[0].Type.Kind; k {
	case planner.String, planner.Binary:
	default:
		if rawSize(k) == 0 {
			return fmt.Errorf("format raw cannot read column %s of type %s (it reads STRING, BYTES, BOOLEAN and the integer and floating-point types)", schema[0].Name, schema[0].Type.Nullable())
		}
	}
	return nil
}

// RawDecoder decodes raw records: each record (a line of a file, a Kafka record's value)
// is one row whose single column is the record.
type RawDecoder struct {
	*rowBuilder
	opts RawOptions
	buf  []byte
}

var _ Decoder = (*RawDecoder)(nil)

// NewRawDecoder returns a raw decoder for schema, which must be one column.
func NewRawDecoder(schema planner.Schema, mem memory.Allocator, opts RawOptions) (*RawDecoder, error) {
	if err := checkRawSchema(schema); err != nil {
		return nil, err
	}
	rb, err := newRowBuilder(Raw, schema, mem, nil, false)
	if err != nil {
		return nil, err
	}
	return &RawDecoder{rowBuilder: rb, opts: opts}, nil
}

// Decode decodes one record; unlike the other formats an empty record is a row (the
// empty string). A number of the wrong size fails the job, naming the record.
func (d *RawDecoder) Decode(line []byte, lineNo int64) error {
	c, v := &d.cols[0], &d.cells[0]
	v.null = false
	switch c.kind {
	case planner.String:
		v.s = d.text(line)
	case planner.Binary:
		v.s = line
	default:
		n := rawSize(c.kind)
		if len(line) != n {
			return &ParseError{Line: lineNo, Text: string(line), Column: c.name,
				Msg: fmt.Sprintf("a raw %s is %d bytes, the record has %d", c.typeName, n, len(line))}
		}
		var u uint64
		for i := range n {
			b := line[i]
			if d.opts.LittleEndian {
				b = line[n-1-i]
			}
			u = u<<8 | uint64(b)
		}
		switch c.kind {
		case planner.Boolean:
			v.i = 0
			if u != 0 {
				v.i = 1
			}
		case planner.TinyInt:
			v.i = int64(int8(u))
		case planner.SmallInt:
			v.i = int64(int16(u))
		case planner.Int:
			v.i = int64(int32(u))
		case planner.BigInt:
			v.i = int64(u)
		case planner.Float:
			v.f = float64(math.Float32frombits(uint32(u)))
		case planner.Double:
			v.f = math.Float64frombits(u)
		}
	}
	d.appendCells()
	return nil
}

// text converts a record in the charset to UTF-8.
func (d *RawDecoder) text(b []byte) []byte {
	switch d.opts.Charset {
	case "ISO-8859-1":
		d.buf = d.buf[:0]
		for _, c := range b {
			d.buf = utf8.AppendRune(d.buf, rune(c))
		}
		return d.buf
	case "US-ASCII":
		d.buf = d.buf[:0]
		for _, c := range b {
			if c >= utf8.RuneSelf {
				d.buf = utf8.AppendRune(d.buf, utf8.RuneError)
			} else {
				d.buf = append(d.buf, c)
			}
		}
		return d.buf
	}
	if !utf8.Valid(b) {
		d.buf = appendValidUTF8(d.buf[:0], b)
		return d.buf
	}
	return b
}

// RecordEnd returns the end of the first record of buf: its first '\n'.
func (d *RawDecoder) RecordEnd(buf []byte) int { return bytes.IndexByte(buf, '\n') }

// RawEncoder writes the first column of each row as a raw record: text in the charset,
// bytes as they are, numbers in their binary form. NULL is an empty record (Flink
// writes a null message).
type RawEncoder struct {
	opts RawOptions
}

var _ Encoder = (*RawEncoder)(nil)

// NewRawEncoder returns a raw encoder.
func NewRawEncoder(opts RawOptions) *RawEncoder { return &RawEncoder{opts: opts} }

// AppendRow appends row i of b as one record and a newline.
func (e *RawEncoder) AppendRow(dst []byte, b exec.Batch, i int) []byte {
	col := b.Rec.Column(0)
	if col.IsNull(i) {
		return append(dst, '\n')
	}
	var u uint64
	n := 0
	switch a := col.(type) {
	case *array.String:
		s := a.Value(i)
		switch e.opts.Charset {
		case "ISO-8859-1", "US-ASCII":
			limit := rune(0xFF)
			if e.opts.Charset == "US-ASCII" {
				limit = 0x7F
			}
			for _, r := range s {
				if r > limit {
					r = '?' // as Java's encoder replaces what the charset lacks
				}
				dst = append(dst, byte(r))
			}
		default:
			dst = append(dst, s...)
		}
		return append(dst, '\n')
	case *array.Binary:
		return append(append(dst, a.Value(i)...), '\n')
	case *array.Boolean:
		n = 1
		if a.Value(i) {
			u = 1
		}
	case *array.Int8:
		n, u = 1, uint64(a.Value(i))
	case *array.Int16:
		n, u = 2, uint64(a.Value(i))
	case *array.Int32:
		n, u = 4, uint64(a.Value(i))
	case *array.Int64:
		n, u = 8, uint64(a.Value(i))
	case *array.Float32:
		n, u = 4, uint64(math.Float32bits(a.Value(i)))
	case *array.Float64:
		n, u = 8, math.Float64bits(a.Value(i))
	default:
		return append(AppendValue(dst, col, i, nil), '\n')
	}
	var tmp [8]byte
	binary.BigEndian.PutUint64(tmp[:], u)
	v := tmp[8-n:]
	if e.opts.LittleEndian {
		for j := len(v) - 1; j >= 0; j-- {
			dst = append(dst, v[j])
		}
	} else {
		dst = append(dst, v...)
	}
	return append(dst, '\n')
}
