package ops

import "encoding/binary"

// lag is LAG(x, offset, default) over an unbounded frame, per accumulator group: the
// values of x of the group's last offset+1 rows, oldest first, and the default of its
// latest row. Its result is the value offset rows before the latest row, or that row's
// default when the group has not seen so many.
type lag struct {
	offset int
	hist   [][]value
	def    []value
}

func (l *lag) grow(g int) { l.hist, l.def = growTo(l.hist, g), growTo(l.def, g) }

// push adds a row's value and default.
func (l *lag) push(g int32, v, def value) {
	h := append(l.hist[g], v)
	if len(h) > l.offset+1 {
		copy(h, h[1:])
		h[len(h)-1] = value{}
		h = h[:len(h)-1]
	}
	l.hist[g], l.def[g] = h, def
}

func (l *lag) result(g int32) value {
	if h := l.hist[g]; len(h) == l.offset+1 {
		return h[0]
	}
	return l.def[g]
}

func (l *lag) save(dst []byte, g int32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(l.hist[g])))
	for _, v := range l.hist[g] {
		dst = appendValueBytes(dst, v)
	}
	return appendValueBytes(dst, l.def[g])
}

func (l *lag) load(d *decoder, g int32) {
	n, size := binary.Uvarint(d.buf)
	if size <= 0 || n > uint64(l.offset+1) {
		d.fail()
		return
	}
	d.buf = d.buf[size:]
	h := make([]value, 0, n)
	for range n {
		h = append(h, d.value())
	}
	l.hist[g], l.def[g] = h, d.value()
}
