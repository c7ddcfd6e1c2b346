package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// kind is how a column's values are held and sent: the Go type pgx encodes and the
// PostgreSQL type of the parameter.
type kind uint8

const (
	kNull kind = iota
	kBool
	kInt32
	kInt64
	kFloat64
	kDecimal
	kString
	kTimestamp   // epoch milliseconds of a wall clock, as timestamp
	kTimestampTZ // epoch milliseconds of an instant, as timestamptz
	kDate        // days since the epoch
	kMillis      // INTERVAL DAY TO SECOND, milliseconds
	kMonths      // INTERVAL YEAR TO MONTH
	kTime        // TIME: milliseconds of the day, as time
)

// pgTypes are the parameter types, by kind; NULL columns send an array of unknown
// nulls as bool[] and insert NULL.
var pgTypes = [...]string{"bool", "bool", "int4", "int8", "float8", "numeric", "text", "timestamp", "timestamptz", "date", "interval", "interval", "time"}

func kindOf(t planner.Type) (kind, error) {
	switch t.Kind {
	case planner.Null:
		return kNull, nil
	case planner.Boolean:
		return kBool, nil
	case planner.Int:
		return kInt32, nil
	case planner.BigInt:
		return kInt64, nil
	case planner.Double:
		return kFloat64, nil
	case planner.Decimal:
		return kDecimal, nil
	case planner.String:
		return kString, nil
	case planner.Timestamp:
		return kTimestamp, nil
	case planner.TimestampLTZ:
		return kTimestampTZ, nil
	case planner.Date:
		return kDate, nil
	case planner.IntervalDayTime:
		return kMillis, nil
	case planner.IntervalYearMonth:
		return kMonths, nil
	case planner.Time:
		return kTime, nil
	}
	return 0, fmt.Errorf("type %s cannot be written to PostgreSQL", t)
}

// column holds one column of the buffered rows. Integers, times and intervals live in
// i64, doubles in f64, and so on; valid says which rows are not NULL.
type column struct {
	name  string
	kind  kind
	scale int32 // DECIMAL scale
	valid []bool
	i64   []int64
	f64   []float64
	b     []bool
	str   []string
	dec   []decimal128.Num
}

// resize makes room for n rows.
func (c *column) resize(n int) {
	c.valid = grow(c.valid, n)
	switch c.kind {
	case kBool:
		c.b = grow(c.b, n)
	case kFloat64:
		c.f64 = grow(c.f64, n)
	case kString:
		c.str = grow(c.str, n)
	case kDecimal:
		c.dec = grow(c.dec, n)
	case kNull:
	default:
		c.i64 = grow(c.i64, n)
	}
}

func grow[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// set copies the rows of arr to the slots of the buffer: row i goes to slots[i],
// unless that is negative.
func (c *column) set(arr arrow.Array, slots []int32) error {
	for i, s := range slots {
		if s >= 0 {
			c.valid[s] = arr.IsValid(i)
		}
	}
	bad := func() error {
		return fmt.Errorf("column %s: cannot write %s values as %s", c.name, arr.DataType(), pgTypes[c.kind])
	}
	switch c.kind {
	case kNull:
		return nil
	case kBool:
		a, ok := arr.(*array.Boolean)
		if !ok {
			return bad()
		}
		for i, s := range slots {
			if s >= 0 {
				c.b[s] = a.Value(i)
			}
		}
	case kFloat64:
		switch a := arr.(type) {
		case *array.Float64:
			setAll(c.f64, slots, a.Float64Values())
		case *array.Float32:
			for i, s := range slots {
				if s >= 0 {
					c.f64[s] = float64(a.Value(i))
				}
			}
		default:
			return bad()
		}
	case kString:
		switch a := arr.(type) {
		case *array.String:
			for i, s := range slots {
				if s >= 0 {
					c.str[s] = strings.Clone(a.Value(i)) // the buffer outlives the batch
				}
			}
		case *array.LargeString:
			for i, s := range slots {
				if s >= 0 {
					c.str[s] = strings.Clone(a.Value(i))
				}
			}
		default:
			return bad()
		}
	case kDecimal:
		a, ok := arr.(*array.Decimal128)
		if !ok {
			return bad()
		}
		c.scale = a.DataType().(*arrow.Decimal128Type).Scale
		setAll(c.dec, slots, a.Values())
	default:
		return c.setInt(arr, slots, bad)
	}
	return nil
}

// setInt copies integer-like values: integers, times (as milliseconds), dates (days)
// and intervals.
func (c *column) setInt(arr arrow.Array, slots []int32, bad func() error) error {
	conv := func(n int, v func(i int) int64) {
		for i, s := range slots[:n] {
			if s >= 0 {
				c.i64[s] = v(i)
			}
		}
	}
	n := len(slots)
	switch a := arr.(type) {
	case *array.Int64:
		if c.kind != kInt64 && c.kind != kInt32 {
			return bad()
		}
		setAll(c.i64, slots, a.Int64Values())
	case *array.Int32:
		if c.kind != kInt64 && c.kind != kInt32 {
			return bad()
		}
		conv(n, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int16:
		if c.kind != kInt64 && c.kind != kInt32 {
			return bad()
		}
		conv(n, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int8:
		if c.kind != kInt64 && c.kind != kInt32 {
			return bad()
		}
		conv(n, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Timestamp:
		if c.kind != kTimestamp && c.kind != kTimestampTZ {
			return bad()
		}
		unit := a.DataType().(*arrow.TimestampType).Unit
		conv(n, func(i int) int64 { return toMillis(int64(a.Value(i)), unit) })
	case *array.Date32:
		if c.kind != kDate {
			return bad()
		}
		conv(n, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Time32:
		if c.kind != kTime {
			return bad()
		}
		unit := int64(1)
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Second {
			unit = 1000
		}
		conv(n, func(i int) int64 { return int64(a.Value(i)) * unit })
	case *array.Date64:
		if c.kind != kDate {
			return bad()
		}
		conv(n, func(i int) int64 { return floorDiv(int64(a.Value(i)), 86400000) })
	case *array.Duration:
		if c.kind != kMillis {
			return bad()
		}
		unit := a.DataType().(*arrow.DurationType).Unit
		conv(n, func(i int) int64 { return toMillis(int64(a.Value(i)), unit) })
	case *array.MonthInterval:
		if c.kind != kMonths {
			return bad()
		}
		conv(n, func(i int) int64 { return int64(a.Value(i)) })
	default:
		return bad()
	}
	return nil
}

func setAll[T any](dst []T, slots []int32, src []T) {
	for i, s := range slots {
		if s >= 0 {
			dst[s] = src[i]
		}
	}
}

func toMillis(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1000
	case arrow.Microsecond:
		return floorDiv(v, 1000)
	case arrow.Nanosecond:
		return floorDiv(v, 1000000)
	}
	return v
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// value returns row i as the Go value pgx encodes, nil for NULL.
func (c *column) value(i int) any {
	if !c.valid[i] {
		return nil
	}
	switch c.kind {
	case kBool:
		return c.b[i]
	case kInt32:
		if v := c.i64[i]; v >= math.MinInt32 && v <= math.MaxInt32 {
			return int32(v)
		}
		return c.i64[i] // out of range: let the encoder say so
	case kInt64:
		return c.i64[i]
	case kFloat64:
		return c.f64[i]
	case kDecimal:
		return pgtype.Numeric{Int: c.dec[i].BigInt(), Exp: -c.scale, Valid: true}
	case kString:
		return c.str[i]
	case kTimestamp, kTimestampTZ:
		return time.UnixMilli(c.i64[i]).UTC()
	case kDate:
		return time.Unix(c.i64[i]*86400, 0).UTC()
	case kMillis:
		return pgtype.Interval{Microseconds: c.i64[i] * 1000, Valid: true}
	case kMonths:
		return pgtype.Interval{Months: int32(c.i64[i]), Valid: true}
	case kTime:
		return pgtype.Time{Microseconds: c.i64[i] * 1000, Valid: true}
	}
	return nil
}

// zero is a value of the type value returns, for pgx to plan the encoding by.
func (c *column) zero() any {
	switch c.kind {
	case kBool, kNull:
		return false
	case kInt32:
		return int32(0)
	case kInt64:
		return int64(0)
	case kFloat64:
		return float64(0)
	case kDecimal:
		return pgtype.Numeric{}
	case kString:
		return ""
	case kTimestamp, kTimestampTZ, kDate:
		return time.Time{}
	case kTime:
		return pgtype.Time{}
	}
	return pgtype.Interval{}
}

// text returns row i as error messages show it.
func (c *column) text(i int) string {
	if !c.valid[i] {
		return format.NullText
	}
	switch c.kind {
	case kBool:
		return strconv.FormatBool(c.b[i])
	case kInt32, kInt64:
		return strconv.FormatInt(c.i64[i], 10)
	case kFloat64:
		return string(format.AppendDouble(nil, c.f64[i]))
	case kDecimal:
		return decimalText(c.dec[i].BigInt(), int(c.scale))
	case kString:
		return strconv.Quote(c.str[i])
	case kTimestamp, kTimestampTZ:
		return time.UnixMilli(c.i64[i]).UTC().Format("2006-01-02 15:04:05.000")
	case kDate:
		return time.Unix(c.i64[i]*86400, 0).UTC().Format("2006-01-02")
	case kMillis:
		return (time.Duration(c.i64[i]) * time.Millisecond).String()
	case kMonths:
		return fmt.Sprintf("%d months", c.i64[i])
	case kTime:
		return time.UnixMilli(c.i64[i]).UTC().Format("15:04:05.000")
	}
	return format.NullText
}

func decimalText(n *big.Int, scale int) string {
	s := new(big.Int).Abs(n).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// keyBytes appends the bytes that identify row i's value, for folding by key.
func (c *column) keyBytes(dst []byte, arr arrow.Array, i int) []byte {
	if arr.IsNull(i) {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	switch a := arr.(type) {
	case *array.String:
		v := a.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	case *array.LargeString:
		v := a.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	case *array.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	case *array.Int32:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	}
	return append(dst, format.AppendValue(nil, arr, i, time.UTC)...)
}

// buffer is rows waiting to be written, column by column. With a primary key, rows are
// folded by key: a later change of a key replaces the earlier one in its slot.
type buffer struct {
	cols  []column
	kinds []exec.RowKind // Insert (write the row) or Delete (delete its key)
	keys  []int          // the key's columns; none: append every row
	index map[string]int32
	n     int

	slots []int32 // per row of the batch being added
	key   []byte
}

func newBuffer(names []string, types []kind, keys []int) *buffer {
	b := &buffer{keys: keys}
	for i, name := range names {
		b.cols = append(b.cols, column{name: name, kind: types[i]})
	}
	if len(keys) > 0 {
		b.index = map[string]int32{}
	}
	return b
}

// errUpdateWithoutKey: a table without a primary key received an update or a delete.
var errUpdateWithoutKey = errors.New("received an update or delete, but the table has no PRIMARY KEY to apply it by")

// add buffers the rows of bt: with a key, +I and +U write and -D deletes the key, and
// -U is skipped (the +U after it overwrites the row); without one, only +I is allowed.
func (b *buffer) add(bt exec.Batch) error {
	n := bt.Len()
	if n == 0 {
		return nil
	}
	if int(bt.Rec.NumCols()) != len(b.cols) {
		return fmt.Errorf("received rows of %d columns, want %d", bt.Rec.NumCols(), len(b.cols))
	}
	if bt.Kinds != nil && len(bt.Kinds) != n {
		return fmt.Errorf("received %d rows with %d row kinds", n, len(bt.Kinds))
	}
	b.slots = grow(b.slots, n)
	if len(b.keys) == 0 {
		for i := range n {
			if k := bt.Kind(i); k != exec.Insert {
				return fmt.Errorf("row %s: %w", k, errUpdateWithoutKey)
			}
			b.slots[i] = int32(b.n + i)
		}
		b.kinds = grow(b.kinds, b.n+n)
		clear(b.kinds[b.n:])
		b.n += n
	} else {
		for i := range n {
			k := bt.Kind(i)
			if k == exec.UpdateBefore {
				b.slots[i] = -1
				continue
			}
			b.key = b.key[:0]
			for _, c := range b.keys {
				b.key = b.cols[c].keyBytes(b.key, bt.Rec.Column(c), i)
			}
			s, ok := b.index[string(b.key)]
			if !ok {
				s = int32(b.n)
				b.index[string(b.key)] = s
				b.n++
				b.kinds = append(b.kinds[:s], exec.Insert)
			}
			if k == exec.Delete {
				b.kinds[s] = exec.Delete
			} else {
				b.kinds[s] = exec.Insert
			}
			b.slots[i] = s
		}
	}
	for c := range b.cols {
		b.cols[c].resize(b.n)
		if err := b.cols[c].set(bt.Rec.Column(c), b.slots[:n]); err != nil {
			return err
		}
	}
	return nil
}

// reset empties the buffer, keeping its memory.
func (b *buffer) reset() {
	b.n = 0
	b.kinds = b.kinds[:0]
	clear(b.index)
	for c := range b.cols {
		col := &b.cols[c]
		clear(col.str) // let the strings go
		col.resize(0)
	}
}

// rowText shows row i for error messages: +I(id=1, name="x").
func (b *buffer) rowText(i int) string {
	var s strings.Builder
	if b.kinds[i] == exec.Delete {
		s.WriteString("-D(")
	} else {
		s.WriteString("+I(")
	}
	for c := range b.cols {
		if c > 0 {
			s.WriteString(", ")
		}
		s.WriteString(b.cols[c].name)
		s.WriteByte('=')
		s.WriteString(b.cols[c].text(i))
	}
	s.WriteByte(')')
	return s.String()
}

// The spool encoding of a buffer, column by column: the row count and kinds, then per
// column a validity byte per row and the values (fixed width, strings with a length).

// encode appends the buffer's rows.
func (b *buffer) encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(b.n))
	for _, k := range b.kinds[:b.n] {
		dst = append(dst, byte(k))
	}
	for c := range b.cols {
		col := &b.cols[c]
		dst = binary.AppendVarint(dst, int64(col.scale))
		for _, v := range col.valid[:b.n] {
			if v {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		}
		switch col.kind {
		case kNull:
		case kBool:
			for _, v := range col.b[:b.n] {
				if v {
					dst = append(dst, 1)
				} else {
					dst = append(dst, 0)
				}
			}
		case kFloat64:
			for _, v := range col.f64[:b.n] {
				dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
			}
		case kString:
			for _, v := range col.str[:b.n] {
				dst = binary.AppendUvarint(dst, uint64(len(v)))
				dst = append(dst, v...)
			}
		case kDecimal:
			for _, v := range col.dec[:b.n] {
				dst = binary.LittleEndian.AppendUint64(dst, v.LowBits())
				dst = binary.LittleEndian.AppendUint64(dst, uint64(v.HighBits()))
			}
		default:
			for _, v := range col.i64[:b.n] {
				dst = binary.AppendVarint(dst, v)
			}
		}
	}
	return dst
}

// errCorrupt: a spool chunk does not decode, or fails its checksum; no restart cures
// it, so it fails the job at once.
var errCorrupt = fmt.Errorf("spool chunk is %w", connector.ErrDamaged)

// decode replaces the buffer's rows with those of an encoded chunk. Rows are not
// folded: a chunk came from a folded buffer.
func (b *buffer) decode(data []byte) error {
	b.reset()
	r := reader{data: data}
	n := int(r.uvarint())
	if r.err != nil || n < 0 || n > len(data) {
		return errCorrupt
	}
	b.n = n
	b.kinds = grow(b.kinds, n)
	for i := range n {
		b.kinds[i] = exec.RowKind(r.byte())
	}
	for c := range b.cols {
		col := &b.cols[c]
		col.resize(n)
		col.scale = int32(r.varint())
		for i := range n {
			col.valid[i] = r.byte() == 1
		}
		switch col.kind {
		case kNull:
		case kBool:
			for i := range n {
				col.b[i] = r.byte() == 1
			}
		case kFloat64:
			for i := range n {
				col.f64[i] = math.Float64frombits(r.uint64())
			}
		case kString:
			for i := range n {
				col.str[i] = string(r.bytes(int(r.uvarint())))
			}
		case kDecimal:
			for i := range n {
				lo := r.uint64()
				col.dec[i] = decimal128.New(int64(r.uint64()), lo)
			}
		default:
			for i := range n {
				col.i64[i] = r.varint()
			}
		}
		if r.err != nil {
			return errCorrupt
		}
	}
	if r.err != nil || len(r.data) != 0 {
		return errCorrupt
	}
	return nil
}

// reader decodes a chunk; the first error sticks and later reads return zeros.
type reader struct {
	data []byte
	err  error
}

func (r *reader) byte() byte {
	if len(r.data) < 1 {
		r.err = errCorrupt
		return 0
	}
	v := r.data[0]
	r.data = r.data[1:]
	return v
}

func (r *reader) uint64() uint64 {
	if len(r.data) < 8 {
		r.err = errCorrupt
		return 0
	}
	v := binary.LittleEndian.Uint64(r.data)
	r.data = r.data[8:]
	return v
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.data)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.data = r.data[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.data)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.data = r.data[n:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.data) {
		r.err = errCorrupt
		return nil
	}
	v := r.data[:n]
	r.data = r.data[n:]
	return v
}
