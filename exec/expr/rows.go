package expr

import (
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
)

// Row readers and drivers for functions whose per-row work (parsing, formatting, calendars,
// Unicode) dominates the loop overhead. Each reader is resolved once per batch; at(i) is a
// direct call that reads an array or returns the scalar.

// strCol reads a STRING datum without copying.
type strCol struct {
	offs   []int32
	data   []byte
	s      string
	scalar bool
}

func strColOf(d datum) strCol {
	if d.arr == nil {
		return strCol{s: d.s, scalar: true}
	}
	if d.arr.Len() == 0 {
		return strCol{}
	}
	a := d.arr.(*array.String)
	var data []byte
	if b := a.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	return strCol{offs: a.ValueOffsets(), data: data}
}

func (c *strCol) at(i int) string {
	if c.scalar {
		return c.s
	}
	o0, o1 := c.offs[i], c.offs[i+1]
	if o0 == o1 {
		return ""
	}
	return unsafe.String(&c.data[o0], int(o1-o0))
}

// intCol reads an integer-backed datum (TINYINT to BIGINT, dates, timestamps) as int64.
type intCol struct {
	v8     []int8
	v16    []int16
	v32    []int32
	v64    []int64
	s      int64
	scalar bool
}

func intColOf(d datum) intCol {
	if d.arr == nil {
		return intCol{s: d.i, scalar: true}
	}
	switch d.arr.DataType().(arrow.FixedWidthDataType).BitWidth() {
	case 8:
		return intCol{v8: arrowbuf.Values[int8](d.arr)}
	case 16:
		return intCol{v16: arrowbuf.Values[int16](d.arr)}
	case 32:
		return intCol{v32: arrowbuf.Values[int32](d.arr)}
	}
	return intCol{v64: arrowbuf.Values[int64](d.arr)}
}

func (c *intCol) at(i int) int64 {
	switch {
	case c.scalar:
		return c.s
	case c.v32 != nil:
		return int64(c.v32[i])
	case c.v8 != nil:
		return int64(c.v8[i])
	case c.v16 != nil:
		return int64(c.v16[i])
	}
	return c.v64[i]
}

// fixedRows computes a fixed-width result row by row over the rows where every argument is
// non-NULL; f reports ok=false for a NULL result.
func fixedRows[T any](c *ctx, n int, args []datum, dt arrow.DataType, f func(i int) (T, bool, error)) (datum, error) {
	vbuf, valid := writableValidity(c.mem, n, args)
	buf, out := arrowbuf.AllocFixed[T](c.mem, n)
	var zero T
	nulls := 0
	for i := 0; i < n; i++ {
		if !bitAt(valid, i) {
			out[i] = zero
			nulls++
			continue
		}
		v, ok, err := f(i)
		if err != nil {
			vbuf.Release()
			buf.Release()
			return datum{}, err
		}
		if !ok {
			clearBit(valid, i)
			out[i] = zero
			nulls++
			continue
		}
		out[i] = v
	}
	if nulls == 0 {
		vbuf.Release()
		vbuf = nil
	}
	return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, nulls), true), nil
}

// boolRows is fixedRows for a BOOLEAN result.
func boolRows(c *ctx, n int, args []datum, f func(i int) (bool, bool, error)) (datum, error) {
	vbuf, valid := writableValidity(c.mem, n, args)
	buf, out := arrowbuf.AllocBits(c.mem, n)
	nulls := 0
	for i := 0; i < n; i++ {
		if !bitAt(valid, i) {
			nulls++
			continue
		}
		v, ok, err := f(i)
		if err != nil {
			vbuf.Release()
			buf.Release()
			return datum{}, err
		}
		if !ok {
			clearBit(valid, i)
			nulls++
			continue
		}
		if v {
			setBit(out, i)
		}
	}
	if nulls == 0 {
		vbuf.Release()
		vbuf = nil
	}
	return arrDatum(arrowbuf.NewArray(boolType, n, vbuf, buf, nulls), true), nil
}

// strRows computes a STRING result row by row: f appends the row's value to dst and returns
// it, or reports ok=false for NULL.
func strRows(c *ctx, n int, args []datum, hint int, f func(i int, dst []byte) ([]byte, bool, error)) (datum, error) {
	vbuf, valid := writableValidity(c.mem, n, args)
	sb := newStrBuilder(c.mem, n, hint)
	nulls := 0
	for i := 0; i < n; i++ {
		if bitAt(valid, i) {
			d, ok, err := f(i, sb.d)
			if err != nil {
				vbuf.Release()
				sb.release()
				return datum{}, err
			}
			if ok {
				sb.set(d)
			} else {
				clearBit(valid, i)
				nulls++
			}
		} else {
			nulls++
		}
		sb.endRow(i)
	}
	if nulls == 0 {
		vbuf.Release()
		vbuf = nil
	}
	return arrDatum(sb.finish(vbuf), true), nil
}

// strBuilder writes a STRING array's offsets and bytes straight into allocator buffers.
type strBuilder struct {
	offBuf, dataBuf *memory.Buffer
	offs            []int32
	d               []byte // bytes written; cap is the data buffer's capacity
	n               int
}

func newStrBuilder(mem memory.Allocator, n, hint int) *strBuilder {
	offBuf, offs := arrowbuf.AllocFixed[int32](mem, n+1)
	offs[0] = 0
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Reserve(max(hint, 64))
	b := &strBuilder{offBuf: offBuf, dataBuf: dataBuf, offs: offs, n: n}
	b.adopt(0)
	return b
}

// adopt has d be the first l bytes of the data buffer, with its length as capacity: an
// allocator may hand out a slice of more capacity than asked for (a buffer pool's size
// class), and what an append wrote past the buffer's length would be lost when the
// buffer grows, which copies only its length.
func (b *strBuilder) adopt(l int) {
	buf := b.dataBuf.Buf()
	b.d = buf[:l:len(buf)]
}

// grow makes room for k more bytes.
func (b *strBuilder) grow(k int) {
	if cap(b.d)-len(b.d) >= k {
		return
	}
	l := len(b.d)
	b.dataBuf.Reserve(max(2*cap(b.d), l+k))
	b.adopt(l)
}

func (b *strBuilder) appendString(s string) {
	if len(s) > cap(b.d)-len(b.d) {
		b.grow(len(s))
	}
	b.d = append(b.d, s...)
}

// set adopts d, the result of appending to b.d, copying the new bytes into the buffer when
// an append outgrew it.
func (b *strBuilder) set(d []byte) {
	if cap(d) == cap(b.d) && unsafe.SliceData(d) == unsafe.SliceData(b.d) {
		b.d = d
		return
	}
	tail := d[len(b.d):]
	b.grow(len(tail))
	b.d = append(b.d, tail...)
}

func (b *strBuilder) endRow(i int) { b.offs[i+1] = int32(len(b.d)) }

func (b *strBuilder) finish(validity *memory.Buffer) arrow.Array {
	b.dataBuf.ResizeNoShrink(len(b.d))
	data := array.NewData(arrow.BinaryTypes.String, b.n, []*memory.Buffer{validity, b.offBuf, b.dataBuf}, nil, array.UnknownNullCount, 0)
	if validity == nil {
		data.SetNullN(0)
	}
	arr := array.MakeFromData(data)
	data.Release()
	if validity != nil {
		validity.Release()
	}
	b.offBuf.Release()
	b.dataBuf.Release()
	return arr
}

func (b *strBuilder) release() {
	b.offBuf.Release()
	b.dataBuf.Release()
}
