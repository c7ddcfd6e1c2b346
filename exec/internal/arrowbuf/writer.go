package arrowbuf

import (
	"encoding/binary"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Writer writes a column of a fixed-width or string type straight into the Arrow
// buffers of the next batch, row by row: values (a string column's int32 offsets), a
// string's bytes, and a validity bitmap from the first NULL on. An Arrow builder's
// bookkeeping per value (a validity bit for every value, an offsets builder) was a fifth
// of decoding a csv record, and its buffers, grown from nothing for every batch, were
// zeroed and copied at each doubling.
type Writer struct {
	mem    memory.Allocator
	dtype  arrow.DataType
	width  int            // bytes a value; 0 for strings
	values *memory.Buffer // the values, or a string column's offsets
	data   *memory.Buffer // a string column's bytes
	valid  *memory.Buffer // nil while no value is NULL
	nulls  int
}

// NewWriter returns a writer of values width bytes wide (4 or 8), or of strings or
// binaries of type dtype when width is 0.
func NewWriter(mem memory.Allocator, dtype arrow.DataType, width int) *Writer {
	w := &Writer{mem: mem, dtype: dtype, width: width}
	w.reset(64, 0)
	return w
}

// Width is the bytes of a value; 0 for strings.
func (w *Writer) Width() int { return w.width }

// reset starts a batch with room for rows values and dataLen string bytes.
func (w *Writer) reset(rows, dataLen int) {
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
func (w *Writer) room(row int) {
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
func (w *Writer) setValid(row int, ok bool) {
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

func (w *Writer) PutInt64(row int, v int64) {
	w.room(row)
	binary.LittleEndian.PutUint64(w.values.Buf()[row*8:], uint64(v))
	w.setValid(row, true)
}

func (w *Writer) PutInt32(row int, v int32) {
	w.room(row)
	binary.LittleEndian.PutUint32(w.values.Buf()[row*4:], uint32(v))
	w.setValid(row, true)
}

// PutBytes writes a string or binary value.
func (w *Writer) PutBytes(row int, s []byte) { putBytes(w, row, s) }

// PutString writes a string value.
func (w *Writer) PutString(row int, s string) { putBytes(w, row, s) }

func putBytes[T string | []byte](w *Writer, row int, s T) {
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

func (w *Writer) PutNull(row int) {
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

// Finish returns the rows written as an array the caller owns and starts the next
// batch, sized as this one.
func (w *Writer) Finish(rows int) arrow.Array {
	if w.valid != nil {
		w.valid.ResizeNoShrink((rows + 7) / 8)
	}
	if w.width != 0 {
		w.values.ResizeNoShrink(rows * w.width)
		arr := NewArray(w.dtype, rows, w.valid, w.values, w.nulls)
		w.reset(rows, 0)
		return arr
	}
	dataLen := int(binary.LittleEndian.Uint32(w.values.Buf()[rows*4:]))
	w.values.ResizeNoShrink((rows + 1) * 4)
	w.data.ResizeNoShrink(dataLen)
	arr := NewBinaryArray(w.dtype, rows, w.valid, w.values, w.data, w.nulls)
	w.reset(rows, dataLen)
	return arr
}

// Release releases the batch being written (its owner is done).
func (w *Writer) Release() {
	for _, b := range []*memory.Buffer{w.valid, w.values, w.data} {
		if b != nil {
			b.Release()
		}
	}
	w.valid, w.values, w.data = nil, nil, nil
}
