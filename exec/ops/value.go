package ops

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
)

// value is one SQL value held outside Arrow, in the field its type uses: integers,
// booleans, dates and timestamps in i, DOUBLE in f, STRING in s, DECIMAL in d. It is
// comparable, so it can key a map.
type value struct {
	null bool
	i    int64
	f    float64
	s    string
	d    decimal128.Num
}

// owned returns v with its string copied out of the batch it was read from (readers
// return strings that share the batch's buffers): a value kept beyond its batch must not
// keep the batch's memory alive, or read it once the allocator reuses it.
func owned(v value) value {
	if v.s != "" {
		v.s = strings.Clone(v.s)
	}
	return v
}

// ownedRow is a row of owned values in a slice of its own (readRows slices one array
// per batch).
func ownedRow(vals []value) []value { return ownedRowIn(nil, vals) }

// ownedRowIn is ownedRow into row's room when it has enough (a row its holder let go).
func ownedRowIn(row, vals []value) []value {
	if cap(row) < len(vals) {
		row = make([]value, len(vals))
	}
	row = row[:len(vals)]
	copy(row, vals)
	size := 0
	for _, v := range vals {
		size += len(v.s)
	}
	if size == 0 {
		return row
	}
	// The row's strings share one copy: one allocation a row, not one a string.
	var all strings.Builder
	all.Grow(size)
	for _, v := range vals {
		all.WriteString(v.s)
	}
	at, s := 0, all.String()
	for i := range row {
		if n := len(row[i].s); n > 0 {
			row[i].s = s[at : at+n]
			at += n
		}
	}
	return row
}

// reader returns a function reading row i of arr as a value, chosen once per array.
func reader(arr arrow.Array) (func(i int) value, error) {
	nulls := arr.NullN() > 0
	wrap := func(get func(i int) value) func(int) value {
		if !nulls {
			return get
		}
		return func(i int) value {
			if arr.IsNull(i) {
				return value{null: true}
			}
			return get(i)
		}
	}
	switch a := arr.(type) {
	case *array.Int64:
		v := a.Int64Values()
		return wrap(func(i int) value { return value{i: v[i]} }), nil
	case *array.Int32:
		v := a.Int32Values()
		return wrap(func(i int) value { return value{i: int64(v[i])} }), nil
	case *array.Int16:
		v := a.Int16Values()
		return wrap(func(i int) value { return value{i: int64(v[i])} }), nil
	case *array.Int8:
		v := a.Int8Values()
		return wrap(func(i int) value { return value{i: int64(v[i])} }), nil
	case *array.Float32:
		v := a.Float32Values()
		return wrap(func(i int) value { return value{f: float64(v[i])} }), nil
	case *array.Binary:
		return wrap(func(i int) value { return value{s: string(a.Value(i))} }), nil
	case *array.Float64:
		v := a.Float64Values()
		return wrap(func(i int) value { return value{f: v[i]} }), nil
	case *array.String:
		return wrap(func(i int) value { return value{s: a.Value(i)} }), nil
	case *array.Boolean:
		return wrap(func(i int) value {
			if a.Value(i) {
				return value{i: 1}
			}
			return value{}
		}), nil
	case *array.Timestamp:
		v := a.TimestampValues()
		return wrap(func(i int) value { return value{i: int64(v[i])} }), nil
	case *array.Date32:
		v := a.Date32Values()
		return wrap(func(i int) value { return value{i: int64(v[i])} }), nil
	case *array.Time32:
		v := a.Time32Values()
		return wrap(func(i int) value { return value{i: int64(v[i])} }), nil
	case *array.Duration:
		v := a.DurationValues()
		return wrap(func(i int) value { return value{i: int64(v[i])} }), nil
	case *array.Decimal128:
		v := a.Values()
		return wrap(func(i int) value { return value{d: v[i]} }), nil
	case *array.Null:
		return func(int) value { return value{null: true} }, nil
	}
	return nil, fmt.Errorf("aggregation over %s is not supported", arr.DataType())
}

// appender returns a function appending values to b, typed once for b's type.
func appender(b array.Builder) func(value) {
	null := func(v value) bool {
		if v.null {
			b.AppendNull()
		}
		return v.null
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		return func(v value) {
			if !null(v) {
				b.Append(v.i)
			}
		}
	case *array.Int32Builder:
		return func(v value) {
			if !null(v) {
				b.Append(int32(v.i))
			}
		}
	case *array.Float64Builder:
		return func(v value) {
			if !null(v) {
				b.Append(v.f)
			}
		}
	case *array.Float32Builder:
		return func(v value) {
			if !null(v) {
				b.Append(float32(v.f))
			}
		}
	case *array.Int16Builder:
		return func(v value) {
			if !null(v) {
				b.Append(int16(v.i))
			}
		}
	case *array.Int8Builder:
		return func(v value) {
			if !null(v) {
				b.Append(int8(v.i))
			}
		}
	case *array.BinaryBuilder:
		return func(v value) {
			if !null(v) {
				b.Append([]byte(v.s))
			}
		}
	case *array.StringBuilder:
		return func(v value) {
			if !null(v) {
				b.Append(v.s)
			}
		}
	case *array.BooleanBuilder:
		return func(v value) {
			if !null(v) {
				b.Append(v.i != 0)
			}
		}
	case *array.TimestampBuilder:
		return func(v value) {
			if !null(v) {
				b.Append(arrow.Timestamp(v.i))
			}
		}
	case *array.Date32Builder:
		return func(v value) {
			if !null(v) {
				b.Append(arrow.Date32(v.i))
			}
		}
	case *array.Time32Builder:
		return func(v value) {
			if !null(v) {
				b.Append(arrow.Time32(v.i))
			}
		}
	case *array.DurationBuilder:
		return func(v value) {
			if !null(v) {
				b.Append(arrow.Duration(v.i))
			}
		}
	case *array.Decimal128Builder:
		return func(v value) {
			if !null(v) {
				b.Append(v.d)
			}
		}
	case *array.MapBuilder:
		return mapAppender(b)
	case *array.ListBuilder:
		return listAppender(b)
	}
	return func(value) { b.AppendNull() }
}

// less orders two non-null values of the same SQL type.
func less(kind arrow.Type) func(a, b value) bool {
	switch kind {
	case arrow.FLOAT64, arrow.FLOAT32:
		return func(a, b value) bool { return a.f < b.f }
	case arrow.STRING, arrow.BINARY:
		return func(a, b value) bool { return a.s < b.s }
	case arrow.DECIMAL128:
		return func(a, b value) bool { return a.d.Less(b.d) }
	}
	return func(a, b value) bool { return a.i < b.i }
}
