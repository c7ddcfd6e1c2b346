package format

import (
	"encoding/base64"
	"encoding/hex"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// This file prints the structured types and BYTES. Their text is Flink's CAST to STRING,
// which its SQL client and print connector show: a ROW as (1, a), an ARRAY as [1, 2], a
// MAP as {k=1, j=2}, NULL inside them as NULL, BYTES as x'0aff'.

// nestedNull is how a NULL inside a structured value prints.
const nestedNull = "NULL"

// appendNested appends the text of the non-null structured or binary value arr[i]; ok is
// false for other arrays.
func appendNested(dst []byte, arr arrow.Array, i int, loc *time.Location) ([]byte, bool) {
	switch a := arr.(type) {
	case *array.Binary:
		dst = append(dst, "x'"...)
		dst = hex.AppendEncode(dst, a.Value(i))
		return append(dst, '\''), true
	case *array.Struct:
		dst = append(dst, '(')
		for f := 0; f < a.NumField(); f++ {
			if f > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendInner(dst, a.Field(f), i, loc)
		}
		return append(dst, ')'), true
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		dst = append(dst, '{')
		for k := start; k < end; k++ {
			if k > start {
				dst = append(dst, ", "...)
			}
			dst = appendInner(dst, keys, int(k), loc)
			dst = append(dst, '=')
			dst = appendInner(dst, items, int(k), loc)
		}
		return append(dst, '}'), true
	case *array.List:
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		dst = append(dst, '[')
		for k := start; k < end; k++ {
			if k > start {
				dst = append(dst, ", "...)
			}
			dst = appendInner(dst, values, int(k), loc)
		}
		return append(dst, ']'), true
	}
	return dst, false
}

func appendInner(dst []byte, arr arrow.Array, i int, loc *time.Location) []byte {
	if arr.IsNull(i) {
		return append(dst, nestedNull...)
	}
	return AppendValue(dst, arr, i, loc)
}

// appendCSVNested appends BYTES as base64, a ROW's fields or an ARRAY's elements separated by ';', Flink's
// csv.array-element-delimiter, a NULL inside as nothing; a MAP, which Flink's csv format
// cannot write, in its text form.
func appendCSVNested(dst []byte, arr arrow.Array, i int, loc *time.Location) ([]byte, bool) {
	var (
		values arrow.Array
		start  int64
		end    int64
	)
	switch a := arr.(type) {
	case *array.Binary:
		return base64.StdEncoding.AppendEncode(dst, a.Value(i)), true
	case *array.Struct:
		for f := 0; f < a.NumField(); f++ {
			if f > 0 {
				dst = append(dst, ';')
			}
			if !a.Field(f).IsNull(i) {
				dst = AppendValue(dst, a.Field(f), i, loc)
			}
		}
		return dst, true
	case *array.Map:
		return appendNested(dst, arr, i, loc)
	case *array.List:
		values = a.ListValues()
		start, end = a.ValueOffsets(i)
	default:
		return dst, false
	}
	for k := start; k < end; k++ {
		if k > start {
			dst = append(dst, ';')
		}
		if !values.IsNull(int(k)) {
			dst = AppendValue(dst, values, int(k), loc)
		}
	}
	return dst, true
}

// appendJSONNested appends a ROW as an object of its fields, an ARRAY as an array, a MAP
// as an object keyed by the keys' text, and BYTES as base64 (as Flink's json format does).
func (e *JSONEncoder) appendJSONNested(dst []byte, arr arrow.Array, i int) ([]byte, bool) {
	switch a := arr.(type) {
	case *array.Binary:
		return appendJSONString(dst, base64.StdEncoding.EncodeToString(a.Value(i))), true
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		dst = append(dst, '{')
		for f := 0; f < a.NumField(); f++ {
			if f > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, st.Field(f).Name)
			dst = append(dst, ':')
			dst = e.appendValue(dst, a.Field(f), -1, i)
		}
		return append(dst, '}'), true
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		dst = append(dst, '{')
		for k := start; k < end; k++ {
			if k > start {
				dst = append(dst, ',')
			}
			var buf [64]byte
			dst = appendJSONString(dst, unsafeString(appendInner(buf[:0], keys, int(k), e.opts.Location)))
			dst = append(dst, ':')
			dst = e.appendValue(dst, items, -1, int(k))
		}
		return append(dst, '}'), true
	case *array.List:
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		dst = append(dst, '[')
		for k := start; k < end; k++ {
			if k > start {
				dst = append(dst, ',')
			}
			dst = e.appendValue(dst, values, -1, int(k))
		}
		return append(dst, ']'), true
	}
	return dst, false
}

// JSONValue returns the JSON text of arr[i] as the json format writes it (null for NULL).
func JSONValue(arr arrow.Array, i int, loc *time.Location) string {
	e := &JSONEncoder{opts: JSONOptions{Location: loc}}
	return string(e.appendValue(nil, arr, -1, i))
}
