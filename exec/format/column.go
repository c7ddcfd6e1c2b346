package format

import (
	"encoding/binary"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// colWriter writes a column of a fixed-width or string type straight into the Arrow
// buffers of the next batch: values (a string column's int32 offsets), a string's
// bytes, and a validity bitmap from the first NULL on. An Arrow builder's bookkeeping
// per value (a validity bit for every value, an offsets builder) was a fifth of
// decoding a csv record.
type colWriter struct {
	mem    memory.Allocator
	dtype  arrow.DataType
	width  int            // bytes a value; 0 for strings
	values *memory.Buffer // the values, or a string column's offsets
	data   *memory.Buffer // a string column's bytes
	valid  *memory.Buffer // nil while no value is NULL
	nulls  int
}

// newColWriter returns the writer of a column of kind k, or nil when k has none.
func newColWriter(mem memory.Allocator, k planner.Kind, dtype arrow.DataType) *colWriter {
	w := &colWriter{mem: mem, dtype: dtype}
	switch k {
	case planner.BigInt, planner.Double, planner.Timestamp, planner.TimestampLTZ:
		w.width = 8
	case planner.Int, planner.Date:
		w.width = 4
	case planner.String, planner.Binary:
	default:
		return nil
	}
	w.reset(64, 0)
	return w
}

// reset starts a batch with room for rows values and dataLen string bytes.
func (w *colWriter) reset(rows, dataLen int) {
	w.values = memory.NewResizableBuffer(w.mem)
	if w.width == 0 {
		w.values.Reserve((rows + 1) * 4)
		binary.LittleEndian.PutUint32(w.values.Buf(), 0)
		w.data = memory.NewResizableBuffer(w.mem)
		w.data.Reserve(max(dataLen, 64))
	} else {
		w.values.Reserve(rows * w.width)
	}
	w.valid, w.nulls = nil, 0
}

// room makes room for the value of row (counted from 0).
func (w *colWriter) room(row int) {
	need := (row + 1) * w.width
	if w.width == 0 {
		need = (row + 2) * 4
	}
	if need > w.values.Cap() {
		w.values.Reserve(max(need, 2*w.values.Cap()))
	}
	if w.valid != nil && row/8 >= w.valid.Cap() {
		w.valid.Reserve(max(row/8+1, 2*w.valid.Cap()))
	}
}

// setValid records whether row holds a value, once the column has a bitmap.
func (w *colWriter) setValid(row int, ok bool) {
	if w.valid == nil {
		return
	}
	bits := w.valid.Buf()
	if ok {
		bits[row/8] |= 1 << (row % 8)
	} else {
		bits[row/8] &^= 1 << (row % 8)
	}
}

func (w *colWriter) putInt64(row int, v int64) {
	w.room(row)
	binary.LittleEndian.PutUint64(w.values.Buf()[row*8:], uint64(v))
	w.setValid(row, true)
}

func (w *colWriter) putInt32(row int, v int32) {
	w.room(row)
	binary.LittleEndian.PutUint32(w.values.Buf()[row*4:], uint32(v))
	w.setValid(row, true)
}

func (w *colWriter) putBytes(row int, s []byte) {
	w.room(row)
	offs := w.values.Buf()
	start := int(binary.LittleEndian.Uint32(offs[row*4:]))
	end := start + len(s)
	if end > w.data.Cap() {
		w.data.Reserve(max(end, 2*w.data.Cap()))
	}
	copy(w.data.Buf()[start:], s)
	binary.LittleEndian.PutUint32(offs[(row+1)*4:], uint32(end))
	w.setValid(row, true)
}

func (w *colWriter) putNull(row int) {
	if w.valid == nil {
		// The rows before were all values.
		w.valid = memory.NewResizableBuffer(w.mem)
		w.valid.Reserve(max(row/8+1, w.values.Cap()/max(w.width, 4)/8+1))
		bits := w.valid.Buf()
		for i := range bits[:row/8+1] {
			bits[i] = 0xff
		}
	}
	w.room(row)
	w.setValid(row, false)
	w.nulls++
	if w.width == 0 {
		offs := w.values.Buf()
		copy(offs[(row+1)*4:], offs[row*4:row*4+4])
	} else {
		clear(w.values.Buf()[row*w.width : (row+1)*w.width])
	}
}

// finish returns the rows written as an array the caller owns and starts the next
// batch, sized as this one.
func (w *colWriter) finish(rows int) arrow.Array {
	if w.valid != nil {
		w.valid.ResizeNoShrink((rows + 7) / 8)
	}
	if w.width != 0 {
		w.values.ResizeNoShrink(rows * w.width)
		arr := arrowbuf.NewArray(w.dtype, rows, w.valid, w.values, w.nulls)
		w.reset(rows, 0)
		return arr
	}
	dataLen := int(binary.LittleEndian.Uint32(w.values.Buf()[rows*4:]))
	w.values.ResizeNoShrink((rows + 1) * 4)
	w.data.ResizeNoShrink(dataLen)
	arr := arrowbuf.NewBinaryArray(w.dtype, rows, w.valid, w.values, w.data, w.nulls)
	w.reset(rows, dataLen)
	return arr
}

// releaseBuffers releases the batch being written (the decoder is done).
func (w *colWriter) releaseBuffers() {
	for _, b := range []*memory.Buffer{w.valid, w.values, w.data} {
		if b != nil {
			b.Release()
		}
	}
	w.valid, w.values, w.data = nil, nil, nil
}
