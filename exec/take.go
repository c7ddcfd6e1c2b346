package exec

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
)

// Take returns a new array holding arr's values at sel, in order (owned by the caller).
// A run of consecutive indices is a zero-copy slice; fixed-width values are gathered with a
// typed loop, strings as offsets plus one copy of the bytes of each run, structs, lists and maps by
// taking their children. Indices must be in range. It supports the Null, Boolean,
// fixed-width, String, Binary, Struct, List and Map layouts (every type exec.ArrowType
// produces) and panics on others.
func Take(mem memory.Allocator, arr arrow.Array, sel []int32) arrow.Array {
	n := len(sel)
	if n > 0 && contiguous(sel) {
		return array.NewSlice(arr, int64(sel[0]), int64(sel[0])+int64(n))
	}
	dt := arr.DataType()
	switch dt.ID() {
	case arrow.NULL:
		return array.NewNull(n)
	case arrow.BOOL:
		return takeBool(mem, arr, sel)
	case arrow.STRING, arrow.BINARY:
		return takeBinary(mem, arr, sel)
	case arrow.STRUCT:
		return takeStruct(mem, arr.(*array.Struct), sel)
	case arrow.LIST, arrow.MAP:
		return takeList(mem, arr.(array.ListLike), sel)
	}
	fw, ok := dt.(arrow.FixedWidthDataType)
	if !ok {
		panic(fmt.Sprintf("exec.Take: unsupported type %s", dt))
	}
	vbuf := takeValidity(mem, arr, sel)
	var buf *memory.Buffer
	switch fw.BitWidth() {
	case 8:
		buf = takeFixed[uint8](mem, arr, sel)
	case 16:
		buf = takeFixed[uint16](mem, arr, sel)
	case 32:
		buf = takeFixed[uint32](mem, arr, sel)
	case 64:
		buf = takeFixed[uint64](mem, arr, sel)
	case 128:
		buf = takeFixed[[2]uint64](mem, arr, sel)
	case 256:
		buf = takeFixed[[4]uint64](mem, arr, sel)
	default:
		panic(fmt.Sprintf("exec.Take: unsupported type %s", dt))
	}
	return arrowbuf.NewArray(dt, n, vbuf, buf, array.UnknownNullCount)
}

// TakeRecord applies Take to every column.
func TakeRecord(mem memory.Allocator, rec arrow.Record, sel []int32) arrow.Record {
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		cols[i] = Take(mem, rec.Column(i), sel)
	}
	out := array.NewRecord(rec.Schema(), cols, int64(len(sel)))
	for _, c := range cols {
		c.Release()
	}
	return out
}

func contiguous(sel []int32) bool {
	first := sel[0]
	if int(sel[len(sel)-1]-first) != len(sel)-1 {
		return false
	}
	for i, v := range sel {
		if v != first+int32(i) {
			return false
		}
	}
	return true
}

func takeFixed[T any](mem memory.Allocator, arr arrow.Array, sel []int32) *memory.Buffer {
	src := arrowbuf.Values[T](arr)
	buf, out := arrowbuf.AllocFixed[T](mem, len(sel))
	out = out[:len(sel)]
	for i, j := range sel {
		out[i] = src[j]
	}
	return buf
}

// takeValidity gathers the validity bits at sel, or returns nil when arr has no nulls.
func takeValidity(mem memory.Allocator, arr arrow.Array, sel []int32) *memory.Buffer {
	bm, off := arrowbuf.Validity(arr)
	if bm == nil {
		return nil
	}
	buf, out := arrowbuf.AllocBits(mem, len(sel))
	gatherBits(out, bm, off, sel)
	return buf
}

// gatherBits sets bit i of out to bit off+sel[i] of src (out zeroed).
func gatherBits(out, src []byte, off int, sel []int32) {
	n := len(sel)
	for base := 0; base < n; base += 8 {
		var w byte
		for j, k := range sel[base:min(base+8, n)] {
			p := off + int(k)
			w |= (src[p>>3] >> (p & 7) & 1) << j
		}
		out[base>>3] = w
	}
}

func takeBool(mem memory.Allocator, arr arrow.Array, sel []int32) arrow.Array {
	vbuf := takeValidity(mem, arr, sel)
	buf, out := arrowbuf.AllocBits(mem, len(sel))
	data := arr.Data()
	gatherBits(out, data.Buffers()[1].Bytes(), data.Offset(), sel)
	return arrowbuf.NewArray(arr.DataType(), len(sel), vbuf, buf, array.UnknownNullCount)
}

func takeBinary(mem memory.Allocator, arr arrow.Array, sel []int32) arrow.Array {
	n := len(sel)
	vbuf := takeValidity(mem, arr, sel)
	data := arr.Data()
	offBuf, offs := arrowbuf.AllocFixed[int32](mem, n+1)
	var src []int32
	var bytes []byte
	if arr.Len() > 0 {
		raw := data.Buffers()[1].Bytes()
		full := arrow.Int32Traits.CastFromBytes(raw)
		src = full[data.Offset() : data.Offset()+arr.Len()+1]
		if b := data.Buffers()[2]; b != nil {
			bytes = b.Bytes()
		}
	}
	total := 0
	for _, j := range sel {
		total += int(src[j+1] - src[j])
	}
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	dst := dataBuf.Bytes()
	// A run of consecutive indices (a filter keeps runs: the bids between persons and
	// auctions) is one copy of its bytes and a shift of its offsets.
	pos := int32(0)
	offs[0] = 0
	for i := 0; i < n; {
		k := i + 1
		for k < n && sel[k] == sel[k-1]+1 {
			k++
		}
		j := sel[i]
		a, b := src[j], src[j+int32(k-i)]
		copy(dst[pos:], bytes[a:b])
		shift := pos - a
		for m, jm := range sel[i:k] {
			offs[i+m+1] = src[jm+1] + shift
		}
		pos += b - a
		i = k
	}
	return arrowbuf.NewBinaryArray(arr.DataType(), n, vbuf, offBuf, dataBuf, array.UnknownNullCount)
}

// takeStruct takes every field at sel (a field array is already sliced to the struct's
// offset) under the struct's gathered validity.
func takeStruct(mem memory.Allocator, arr *array.Struct, sel []int32) arrow.Array {
	vbuf := takeValidity(mem, arr, sel)
	children := make([]arrow.ArrayData, arr.NumField())
	for i := range children {
		child := Take(mem, arr.Field(i), sel)
		children[i] = child.Data()
		defer child.Release()
	}
	return newNested(arr.DataType(), len(sel), []*memory.Buffer{vbuf}, children)
}

// takeList gathers the offsets at sel into new ones and takes the elements they span.
func takeList(mem memory.Allocator, arr array.ListLike, sel []int32) arrow.Array {
	n := len(sel)
	vbuf := takeValidity(mem, arr, sel)
	offBuf, offs := arrowbuf.AllocFixed[int32](mem, n+1)
	var elems []int32
	offs[0] = 0
	for i, j := range sel {
		start, end := arr.ValueOffsets(int(j))
		for k := start; k < end; k++ {
			elems = append(elems, int32(k))
		}
		offs[i+1] = int32(len(elems))
	}
	values := Take(mem, arr.ListValues(), elems)
	defer values.Release()
	return newNested(arr.DataType(), n, []*memory.Buffer{vbuf, offBuf}, []arrow.ArrayData{values.Data()})
}

// newNested makes an array of dt from buffers and children it takes over (buffers) or
// shares (children), releasing its own references to the buffers.
func newNested(dt arrow.DataType, n int, bufs []*memory.Buffer, children []arrow.ArrayData) arrow.Array {
	data := array.NewData(dt, n, bufs, children, array.UnknownNullCount, 0)
	if bufs[0] == nil {
		data.SetNullN(0)
	}
	out := array.MakeFromData(data)
	data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return out
}
