package expr

import (
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// datum is a kernel operand or result: a whole column (arr != nil) or one value standing
// for every row (a scalar). Kernels have array⊕scalar, scalar⊕array and array⊕array loops,
// so literals are never broadcast.
type datum struct {
	// arr holds one reference, released by whoever holds the datum.
	arr arrow.Array
	// owned: arr's value buffer was allocated by a kernel here and nothing else refers to it,
	// so a parent kernel may write its result into it.
	owned bool

	null bool           // scalar NULL
	b    bool           // BOOLEAN
	i    int64          // INT, BIGINT, DATE, TIMESTAMP[_LTZ] (ms), intervals
	f    float64        // DOUBLE
	s    string         // STRING
	d    decimal128.Num // DECIMAL (unscaled, at the type's scale)
}

func nullDatum() datum                       { return datum{null: true} }
func arrDatum(a arrow.Array, own bool) datum { return datum{arr: a, owned: own} }

func (d *datum) release() {
	if d.arr != nil {
		d.arr.Release()
		d.arr = nil
		d.owned = false
	}
}

func releaseAll(ds []datum) {
	for i := range ds {
		ds[i].release()
	}
}

// phys is the physical layout of a SQL type's Arrow array.
type phys uint8

const (
	physNull phys = iota
	physBool
	physI32 // INT, DATE, TIME, INTERVAL YEAR TO MONTH
	physI64 // BIGINT, TIMESTAMP, TIMESTAMP_LTZ, INTERVAL DAY TO SECOND
	physF64
	physDec
	physStr
	physNested // ROW, ARRAY, MAP: never a non-NULL scalar
	physI8     // TINYINT (a scalar in i)
	physI16    // SMALLINT (a scalar in i)
	physF32    // FLOAT (a scalar in f)
	physBin    // BYTES, BINARY, VARBINARY (a scalar in s)
)

func physOf(t planner.Type) phys {
	switch t.Kind {
	case planner.Boolean:
		return physBool
	case planner.Int, planner.Date, planner.IntervalYearMonth, planner.Time:
		return physI32
	case planner.BigInt, planner.Timestamp, planner.TimestampLTZ, planner.IntervalDayTime:
		return physI64
	case planner.Double:
		return physF64
	case planner.Decimal:
		return physDec
	case planner.String:
		return physStr
	case planner.Row, planner.Array, planner.Map, planner.Multiset:
		return physNested
	case planner.TinyInt:
		return physI8
	case planner.SmallInt:
		return physI16
	case planner.Float:
		return physF32
	case planner.Binary:
		return physBin
	}
	return physNull
}

// fixed is the set of Go types kernels read fixed-width Arrow values as.
type fixed interface {
	~int32 | ~int64 | ~float64 | decimal128.Num
}

// datumValid returns d's validity as a bitmap starting at bit 0 (nil: no nulls), copying
// when the array is sliced at an offset.
func datumValidity(mem memory.Allocator, d datum, n int) (*memory.Buffer, []byte) {
	if d.arr == nil || d.arr.NullN() == 0 {
		return nil, nil
	}
	bm, off := arrowbuf.Validity(d.arr)
	if off == 0 {
		buf := d.arr.Data().Buffers()[0]
		buf.Retain()
		return buf, bm
	}
	buf, out := arrowbuf.AllocBits(mem, n)
	bitutil.CopyBitmap(bm, off, n, out, 0)
	return buf, out
}

func bitAt(bm []byte, i int) bool { return bm[uint(i)>>3]>>(uint(i)&7)&1 != 0 }
func setBit(bm []byte, i int)     { bm[uint(i)>>3] |= 1 << (uint(i) & 7) }
func clearBit(bm []byte, i int)   { bm[uint(i)>>3] &^= 1 << (uint(i) & 7) }

func b2u8(b bool) uint8 {
	var x uint8
	if b {
		x = 1
	}
	return x
}

func b2i(b bool) int {
	var x int
	if b {
		x = 1
	}
	return x
}

// allocOnes allocates a bitmap of n set bits.
func allocOnes(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	buf, bm := arrowbuf.AllocBits(mem, n)
	for i := range bm {
		bm[i] = 0xff
	}
	return buf, bm
}

// andValidity returns the bitmap of rows where every array among args is valid, or nil when
// none has nulls. The caller owns the returned reference; the bitmap may be shared with an
// input and must not be written.
func andValidity(mem memory.Allocator, n int, args []datum) *memory.Buffer {
	var first arrow.Array
	count := 0
	for i := range args {
		if a := args[i].arr; a != nil && a.NullN() > 0 {
			if first == nil {
				first = a
			}
			count++
		}
	}
	if count == 0 {
		return nil
	}
	if count == 1 && first.Data().Offset() == 0 {
		buf := first.Data().Buffers()[0]
		buf.Retain()
		return buf
	}
	buf, _ := writableValidity(mem, n, args)
	return buf
}

// writableValidity returns a fresh bitmap of rows where every array among args is valid
// (all set when none has nulls), for kernels that add nulls of their own.
func writableValidity(mem memory.Allocator, n int, args []datum) (*memory.Buffer, []byte) {
	buf, out := allocOnes(mem, n)
	for i := range args {
		if a := args[i].arr; a != nil && a.NullN() > 0 {
			bm, off := arrowbuf.Validity(a)
			andBitsInto(out, bm, off, n)
		}
	}
	return buf, out
}

// andBitsInto clears in dst (bit 0 up) every bit that is clear in src from bit srcOff up.
func andBitsInto(dst, src []byte, srcOff, n int) {
	if srcOff&7 == 0 {
		src = src[srcOff>>3:]
		nb := int(bitutil.BytesForBits(int64(n)))
		for i := 0; i < nb; i++ {
			dst[i] &= src[i]
		}
		return
	}
	for i := 0; i < n; i++ {
		if !bitAt(src, srcOff+i) {
			clearBit(dst, i)
		}
	}
}

// boolBits returns a BOOLEAN array's values and validity (nil: no nulls) as bitmaps starting
// at bit 0, copying only when the array is sliced at an offset that is not a multiple of 8.
func boolBits(a arrow.Array) (vals, valid []byte) {
	data := a.Data()
	n, off := data.Len(), data.Offset()
	nb := int(bitutil.BytesForBits(int64(n)))
	get := func(buf *memory.Buffer) []byte {
		raw := buf.Bytes()
		if off&7 == 0 {
			return raw[off>>3 : off>>3+nb]
		}
		out := make([]byte, nb)
		bitutil.CopyBitmap(raw, off, n, out, 0)
		return out
	}
	if nb == 0 {
		return nil, nil
	}
	vals = get(data.Buffers()[1])
	if a.NullN() > 0 {
		valid = get(data.Buffers()[0])
	}
	return vals, valid
}

// scalarAs reads a scalar datum as the Go type its kernels use.
func scalarAs[T fixed](d datum) T {
	var z T
	switch p := any(&z).(type) {
	case *int32:
		*p = int32(d.i)
	case *int64:
		*p = d.i
	case *float64:
		*p = d.f
	case *decimal128.Num:
		*p = d.d
	}
	return z
}

// scalarAt returns row i of a as a scalar datum.
func scalarAt(a arrow.Array, i int) datum {
	if a.IsNull(i) || a.DataType().ID() == arrow.NULL {
		return nullDatum()
	}
	switch a := a.(type) {
	case *array.Boolean:
		return datum{b: a.Value(i)}
	case *array.String:
		return datum{s: string([]byte(a.Value(i)))}
	case *array.Binary:
		return datum{s: string(a.Value(i))}
	case *array.Float64:
		return datum{f: a.Value(i)}
	case *array.Float32:
		return datum{f: float64(a.Value(i))}
	case *array.Int8:
		return datum{i: int64(a.Value(i))}
	case *array.Int16:
		return datum{i: int64(a.Value(i))}
	case *array.Decimal128:
		return datum{d: a.Value(i)}
	}
	switch a.DataType().(arrow.FixedWidthDataType).BitWidth() {
	case 32:
		return datum{i: int64(arrowbuf.Values[int32](a)[i])}
	default:
		return datum{i: arrowbuf.Values[int64](a)[i]}
	}
}

// broadcast materializes a scalar as an array of n equal values of type t (dt).
func broadcast(mem memory.Allocator, t planner.Type, dt arrow.DataType, d datum, n int) arrow.Array {
	p := physOf(t)
	if p == physNull {
		return array.NewNull(n)
	}
	if d.null || p == physNested {
		if p >= physNested {
			return array.MakeArrayOfNull(mem, dt, n)
		}
		return nullArray(mem, p, dt, n)
	}
	switch p {
	case physBool:
		var buf *memory.Buffer
		if d.b {
			buf, _ = allocOnes(mem, n)
		} else {
			buf, _ = arrowbuf.AllocBits(mem, n)
		}
		return arrowbuf.NewArray(dt, n, nil, buf, 0)
	case physI32:
		return fillFixed(mem, dt, n, int32(d.i))
	case physI64:
		return fillFixed(mem, dt, n, d.i)
	case physF64:
		return fillFixed(mem, dt, n, d.f)
	case physDec:
		return fillFixed(mem, dt, n, d.d)
	case physI8:
		return fillFixed(mem, dt, n, int8(d.i))
	case physI16:
		return fillFixed(mem, dt, n, int16(d.i))
	case physF32:
		return fillFixed(mem, dt, n, float32(d.f))
	default:
		sb := newStrBuilder(mem, n, n*len(d.s))
		for i := 0; i < n; i++ {
			sb.appendString(d.s)
			sb.endRow(i)
		}
		arr := sb.finish(nil)
		if p == physBin {
			bin := relabel(arr, dt)
			arr.Release()
			return bin
		}
		return arr
	}
}

// nullArray returns n NULLs of a non-NULL type (zeroing explicitly: the allocator may not).
func nullArray(mem memory.Allocator, p phys, dt arrow.DataType, n int) arrow.Array {
	vbuf, _ := arrowbuf.AllocBits(mem, n)
	if p == physStr {
		offBuf, offs := arrowbuf.AllocFixed[int32](mem, n+1)
		clear(offs)
		data := array.NewData(dt, n, []*memory.Buffer{vbuf, offBuf, nil}, nil, n, 0)
		arr := array.MakeFromData(data)
		data.Release()
		vbuf.Release()
		offBuf.Release()
		return arr
	}
	var buf *memory.Buffer
	switch p {
	case physBool:
		buf, _ = arrowbuf.AllocBits(mem, n)
	case physI32:
		buf = zeroFixed[int32](mem, n)
	case physDec:
		buf = zeroFixed[dec](mem, n)
	default:
		buf = zeroFixed[int64](mem, n)
	}
	return arrowbuf.NewArray(dt, n, vbuf, buf, n)
}

func zeroFixed[T any](mem memory.Allocator, n int) *memory.Buffer {
	buf, out := arrowbuf.AllocFixed[T](mem, n)
	clear(out)
	return buf
}

func fillFixed[T any](mem memory.Allocator, dt arrow.DataType, n int, v T) arrow.Array {
	buf, out := arrowbuf.AllocFixed[T](mem, n)
	for i := range out {
		out[i] = v
	}
	return arrowbuf.NewArray(dt, n, nil, buf, 0)
}

// outFixed returns the buffer a fixed-width kernel writes n results into: the value buffer
// of an owned argument of the same width when there is one (reused in place), else a new one.
func outFixed[T any](mem memory.Allocator, n int, args []datum) (*memory.Buffer, []T) {
	var z T
	for i := range args {
		a := args[i].arr
		if !args[i].owned || a == nil || a.Data().Offset() != 0 {
			continue
		}
		fw, ok := a.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth() != 8*int(unsafe.Sizeof(z)) || a.DataType().ID() == arrow.BOOL {
			continue
		}
		buf := a.Data().Buffers()[1]
		buf.Retain()
		return buf, arrowbuf.Values[T](a)
	}
	return arrowbuf.AllocFixed[T](mem, n)
}
