package format

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// Encoder appends rows as text records, each ending in a newline. Values print as
// FormatValue defines. An Encoder is used by one goroutine.
type Encoder interface {
	// AppendRow appends row i of b to dst.
	AppendRow(dst []byte, b exec.Batch, i int) []byte
}

// AppendRows appends every row of b to dst with enc.
func AppendRows(dst []byte, enc Encoder, b exec.Batch) []byte {
	for i, n := 0, b.Len(); i < n; i++ {
		dst = enc.AppendRow(dst, b, i)
	}
	return dst
}

// NewEncoder returns the encoder of format (one of Formats) for rows of the given
// columns, configured by the format's keys in opts (other keys are ignored). loc is the
// session time zone (nil means UTC). Values print by their column's type (a TIMESTAMP(p)
// with p fraction digits).
func NewEncoder(format string, cols planner.Schema, opts map[string]string, loc *time.Location) (Encoder, error) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	digits := columnDigits(cols)
	switch format {
	case "csv":
		o, err := ParseCSVOptions(opts)
		if err != nil {
			return nil, err
		}
		o.Location = loc
		e := NewCSVEncoder(o)
		e.digits = digits
		return e, nil
	case "json":
		o, err := ParseJSONOptions(opts)
		if err != nil {
			return nil, err
		}
		o.Location = loc
		e := NewJSONEncoder(names, o)
		e.digits = digits
		return e, nil
	case Debezium, Canal, Maxwell:
		o, err := ParseChangelogOptions(format, opts)
		if err != nil {
			return nil, err
		}
		o.JSON.Location = loc
		e := NewCDCEncoder(names, o)
		e.row.digits = digits
		return e, nil
	case Raw:
		o, err := ParseRawOptions(opts)
		if err != nil {
			return nil, err
		}
		return NewRawEncoder(o), nil
	}
	return nil, fmt.Errorf("unknown format %q (supported: %s)", format, strings.Join(Formats(), ", "))
}

// CSVEncoder writes csv lines that CSVDecoder reads back with the same options: NULL is
// an empty field (or csv.null-literal), and a field is quoted when it holds the
// delimiter, the quote character or a line break, is the empty string, starts with '#',
// or equals the null literal.
type CSVEncoder struct {
	opts    CSVOptions
	digits  []int     // fraction digits of each TIMESTAMP column (see columnDigits); nil: 3
	special [256]bool // bytes that force quoting
	// plainValues: the text of a value other than a string (a number, a date, ...)
	// never needs quoting, because neither the delimiter nor the quote can occur in it.
	plainValues bool
	scratch     []byte
}

var _ Encoder = (*CSVEncoder)(nil)

// NewCSVEncoder returns a csv encoder.
func NewCSVEncoder(opts CSVOptions) *CSVEncoder {
	e := &CSVEncoder{opts: opts}
	for _, c := range []byte{opts.FieldDelimiter, opts.QuoteCharacter, '\n', '\r'} {
		e.special[c] = true
	}
	const valueBytes = "0123456789+-.: EINaNfinitytruefals" // every byte plainText values print
	e.plainValues = !opts.HasNullLiteral &&
		strings.IndexByte(valueBytes, opts.FieldDelimiter) < 0 && strings.IndexByte(valueBytes, opts.QuoteCharacter) < 0
	return e
}

// AppendHeader appends a line of column names, quoted as needed.
func (e *CSVEncoder) AppendHeader(dst []byte, names []string) []byte {
	for i, n := range names {
		if i > 0 {
			dst = append(dst, e.opts.FieldDelimiter)
		}
		start := len(dst)
		dst = append(dst, n...)
		dst = e.quoteTail(dst, start)
	}
	return append(dst, '\n')
}

// AppendRow appends row i of b as one csv line.
func (e *CSVEncoder) AppendRow(dst []byte, b exec.Batch, i int) []byte {
	for c, col := range b.Rec.Columns() {
		if c > 0 {
			dst = append(dst, e.opts.FieldDelimiter)
		}
		if col.IsNull(i) {
			if e.opts.HasNullLiteral {
				dst = append(dst, e.opts.NullLiteral...)
			}
			continue
		}
		start := len(dst)
		var nested bool
		if dst, nested = appendCSVNested(dst, col, i, e.opts.Location); !nested {
			if ts, ok := col.(*array.Timestamp); ok && e.digits != nil {
				dst = appendTimestampCol(dst, ts, i, e.opts.Location, digitsAt(e.digits, c))
			} else {
				dst = AppendValue(dst, col, i, e.opts.Location)
			}
		}
		if e.plainValues && plainText(col) {
			continue
		}
		dst = e.quoteTail(dst, start)
	}
	return append(dst, '\n')
}

// plainText reports whether FormatValue prints the values of col with digits, signs,
// '.', ':', ' ', 'E' and the words true, false, NaN and Infinity only.
func plainText(col arrow.Array) bool {
	switch col.(type) {
	case *array.Boolean, *array.Int8, *array.Int16, *array.Int32, *array.Int64,
		*array.Uint8, *array.Uint16, *array.Uint32, *array.Uint64, *array.Float32, *array.Float64,
		*array.Decimal128, *array.Timestamp, *array.Date32, *array.Date64, *array.Time32, *array.Time64,
		*array.Duration, *array.MonthInterval:
		return true
	}
	return false
}

// quoteTail quotes dst[start:] in place when the field needs it.
func (e *CSVEncoder) quoteTail(dst []byte, start int) []byte {
	q := e.opts.QuoteCharacter
	if q == 0 {
		return dst
	}
	f := dst[start:]
	need := len(f) == 0 || f[0] == '#' ||
		(e.opts.HasNullLiteral && string(f) == e.opts.NullLiteral)
	for _, c := range f {
		if e.special[c] {
			need = true
			break
		}
	}
	if !need {
		return dst
	}
	e.scratch = append(e.scratch[:0], f...)
	dst = append(dst[:start], q)
	for _, c := range e.scratch {
		if c == q {
			dst = append(dst, q)
		}
		dst = append(dst, c)
	}
	return append(dst, q)
}

// JSONEncoder writes one JSON object a line, as Flink's json format does: numbers as
// JSON numbers (NaN and infinities, which JSON lacks, as strings), DECIMAL as a plain
// number, TIMESTAMP and DATE as strings in the text form, TIMESTAMP_LTZ as a UTC string
// ending in Z (2019-01-17 09:43:19.000Z), intervals as strings, NULL as null.
type JSONEncoder struct {
	keys   []string // `"name":` for each column, with the separating comma
	opts   JSONOptions
	digits []int // fraction digits of each TIMESTAMP column (see columnDigits); nil: 3
}

var _ Encoder = (*JSONEncoder)(nil)

// NewJSONEncoder returns a json encoder writing the given field names.
func NewJSONEncoder(names []string, opts JSONOptions) *JSONEncoder {
	e := &JSONEncoder{opts: opts, keys: make([]string, len(names))}
	for i, n := range names {
		var k []byte
		if i > 0 {
			k = append(k, ',')
		}
		k = appendJSONString(k, n)
		e.keys[i] = string(append(k, ':'))
	}
	return e
}

// AppendRow appends row i of b as one JSON object line.
func (e *JSONEncoder) AppendRow(dst []byte, b exec.Batch, i int) []byte {
	return append(e.appendObject(dst, b, i), '\n')
}

// appendObject appends row i of b as a JSON object.
func (e *JSONEncoder) appendObject(dst []byte, b exec.Batch, i int) []byte {
	dst = append(dst, '{')
	for c, col := range b.Rec.Columns() {
		if c < len(e.keys) {
			dst = append(dst, e.keys[c]...)
		} else {
			if c > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, fmt.Sprintf("f%d", c))
			dst = append(dst, ':')
		}
		dst = e.appendValue(dst, col, c, i)
	}
	return append(dst, '}')
}

func (e *JSONEncoder) appendValue(dst []byte, col arrow.Array, c, i int) []byte {
	if col.IsNull(i) {
		return append(dst, "null"...)
	}
	switch a := col.(type) {
	case *array.Boolean, *array.Int8, *array.Int16, *array.Int32, *array.Int64,
		*array.Uint8, *array.Uint16, *array.Uint32, *array.Uint64, *array.Decimal128:
		return AppendValue(dst, col, i, nil)
	case *array.Float64:
		if v := a.Value(i); math.IsNaN(v) || math.IsInf(v, 0) {
			break
		}
		return AppendValue(dst, col, i, nil)
	case *array.Float32:
		if v := float64(a.Value(i)); math.IsNaN(v) || math.IsInf(v, 0) {
			break
		}
		return AppendValue(dst, col, i, nil)
	case *array.String:
		return appendJSONString(dst, a.Value(i))
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		sep := byte(' ')
		if e.opts.TimestampISO8601 {
			sep = 'T'
		}
		dst = append(dst, '"')
		dst = appendTimestamp(dst, toMillis(int64(a.Value(i)), t.Unit), time.UTC, sep, digitsAt(e.digits, c))
		if t.TimeZone != "" {
			dst = append(dst, 'Z')
		}
		return append(dst, '"')
	}
	if out, ok := e.appendJSONNested(dst, col, i); ok {
		return out
	}
	var buf [64]byte
	return appendJSONString(dst, unsafeString(AppendValue(buf[:0], col, i, e.opts.Location)))
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// ChangelogEncoder writes rows as Flink's print connector does: the row kind and the
// values in brackets, +I[sensor_1, 35.8, 3], NULL as null, after an optional prefix
// (print-identifier> ).
type ChangelogEncoder struct {
	prefix string
	loc    *time.Location
	digits []int // fraction digits of each TIMESTAMP column (see columnDigits); nil: 3
}

var _ Encoder = (*ChangelogEncoder)(nil)

// NewChangelogEncoder returns a changelog encoder; identifier, when not empty, prefixes
// every line as "identifier> ".
func NewChangelogEncoder(identifier string, loc *time.Location) *ChangelogEncoder {
	e := &ChangelogEncoder{loc: loc}
	if identifier != "" {
		e.prefix = identifier + "> "
	}
	return e
}

// Typed makes e print the values of the given columns by their types (a TIMESTAMP(p)
// with p fraction digits) and returns it.
func (e *ChangelogEncoder) Typed(cols planner.Schema) *ChangelogEncoder {
	e.digits = columnDigits(cols)
	return e
}

// AppendRow appends row i of b as one changelog line.
func (e *ChangelogEncoder) AppendRow(dst []byte, b exec.Batch, i int) []byte {
	dst = append(dst, e.prefix...)
	dst = append(dst, b.Kind(i).String()...)
	dst = append(dst, '[')
	for c, col := range b.Rec.Columns() {
		if c > 0 {
			dst = append(dst, ", "...)
		}
		if col.IsNull(i) {
			dst = append(dst, NullText...)
			continue
		}
		if ts, ok := col.(*array.Timestamp); ok && e.digits != nil {
			dst = appendTimestampCol(dst, ts, i, e.loc, digitsAt(e.digits, c))
			continue
		}
		dst = AppendValue(dst, col, i, e.loc)
	}
	return append(dst, ']', '\n')
}

// appendTimestampCol appends a[i] with digits fraction digits, in loc for a
// TIMESTAMP_LTZ, as AppendValue does with three.
func appendTimestampCol(dst []byte, a *array.Timestamp, i int, loc *time.Location, digits int) []byte {
	t := a.DataType().(*arrow.TimestampType)
	if t.TimeZone == "" {
		loc = time.UTC
	}
	return appendTimestamp(dst, toMillis(int64(a.Value(i)), t.Unit), loc, ' ', digits)
}
