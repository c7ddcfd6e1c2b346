// Package arrowbuf holds the low-level Arrow buffer helpers that the runtime's kernels
// share: typed views of value buffers, validity bitmaps, arrays built from buffers, and
// writers of columns straight into buffers.
package arrowbuf

import (
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

func Values[T any](a arrow.Array) []T {
	data := a.Data()
	bufs := data.Buffers()
	if len(bufs) < 2 || bufs[1] == nil || data.Len() == 0 {
		return nil
	}
	raw := bufs[1].Bytes()
	var z T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/int(unsafe.Sizeof(z)))
	off := data.Offset()
	return all[off : off+data.Len()]
}

// Validity returns a's validity bitmap and its bit offset, or nil when a has no nulls.
func Validity(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	return a.NullBitmapBytes(), a.Data().Offset()
}

// AllocFixed allocates a value buffer of n Ts from mem.
func AllocFixed[T any](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var z T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(z)))
	if n == 0 {
		return buf, nil
	}
	return buf, unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), n)
}

// AllocBits allocates a zeroed bitmap of n bits from mem.
func AllocBits(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bm := buf.Bytes()
	clear(bm)
	return buf, bm
}

// NewArray wraps buffers in an array of type dt and length n, taking over the caller's
// references to validity and values. nulls may be array.UnknownNullCount.
func NewArray(dt arrow.DataType, n int, validity, values *memory.Buffer, nulls int) arrow.Array {
	return newArray(dt, n, nulls, validity, values)
}

// NewBinaryArray is NewArray for a string or binary type: validity, int32 offsets and
// the bytes, whose references it takes over.
func NewBinaryArray(dt arrow.DataType, n int, validity, offsets, data *memory.Buffer, nulls int) arrow.Array {
	return newArray(dt, n, nulls, validity, offsets, data)
}

func newArray(dt arrow.DataType, n, nulls int, bufs ...*memory.Buffer) arrow.Array {
	if bufs[0] == nil {
		nulls = 0
	}
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	arr := array.MakeFromData(data)
	data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return arr
}
