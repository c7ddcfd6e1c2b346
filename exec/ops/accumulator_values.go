package ops

import (
	"encoding/binary"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/planner"
)

// firstLast is FIRST_VALUE or LAST_VALUE over an insert-only input: the first or the
// latest non-NULL value in arrival order, as Flink's (which skips NULLs too).
type firstLast struct {
	last bool
	val  []value
	has  []bool
}

func (f *firstLast) grow(g int) { f.val, f.has = growTo(f.val, g), growTo(f.has, g) }
func (f *firstLast) update(groups []int32, signs []int8, col arrow.Array) error {
	return forEachRow(f, groups, signs, col)
}
func (f *firstLast) add(g int32, v value, _ int64) {
	if v.null || (f.has[g] && !f.last) {
		return
	}
	f.val[g], f.has[g] = owned(v), true
}
func (f *firstLast) result(g int32) value {
	if !f.has[g] {
		return value{null: true}
	}
	return f.val[g]
}
func (f *firstLast) reset(g int32) { f.val[g], f.has[g] = value{}, false }

// merge folds a later group into an earlier one: windows merge their slices, and
// sessions the later into the earlier, in time order.
func (f *firstLast) merge(dst, src int32) {
	if f.has[src] && (f.last || !f.has[dst]) {
		f.val[dst], f.has[dst] = f.val[src], true
	}
}
func (f *firstLast) save(dst []byte, g int32) []byte {
	if !f.has[g] {
		return appendValueBytes(dst, value{null: true})
	}
	return appendValueBytes(dst, f.val[g])
}
func (f *firstLast) load(d *decoder, g int32) {
	v := d.value()
	f.val[g], f.has[g] = v, !v.null
	if v.null {
		f.val[g] = value{}
	}
}

// listAgg is LISTAGG over an insert-only input: the non-NULL values in arrival order,
// joined by the separator as they come.
type listAgg struct {
	sep    string
	joined [][]byte
	has    []bool
}

func (l *listAgg) grow(g int) { l.joined, l.has = growTo(l.joined, g), growTo(l.has, g) }
func (l *listAgg) update(groups []int32, signs []int8, col arrow.Array) error {
	return forEachRow(l, groups, signs, col)
}
func (l *listAgg) add(g int32, v value, _ int64) {
	if v.null {
		return
	}
	if l.has[g] {
		l.joined[g] = append(l.joined[g], l.sep...)
	}
	l.joined[g] = append(l.joined[g], v.s...)
	l.has[g] = true
}
func (l *listAgg) result(g int32) value {
	if !l.has[g] {
		return value{null: true}
	}
	return value{s: string(l.joined[g])}
}
func (l *listAgg) reset(g int32) { l.joined[g], l.has[g] = nil, false }
func (l *listAgg) merge(dst, src int32) {
	if l.has[src] {
		l.add(dst, value{s: string(l.joined[src])}, 1)
	}
}
func (l *listAgg) save(dst []byte, g int32) []byte {
	if !l.has[g] {
		return appendValueBytes(dst, value{null: true})
	}
	return appendValueBytes(dst, value{s: string(l.joined[g])})
}
func (l *listAgg) load(d *decoder, g int32) {
	v := d.value()
	l.joined[g], l.has[g] = nil, !v.null
	if !v.null {
		l.joined[g] = []byte(v.s)
	}
}

// valueList is FIRST_VALUE, LAST_VALUE or LISTAGG over an input with retractions: like
// Flink's retracting versions it keeps every non-NULL value in arrival order, and a
// retraction removes the oldest occurrence of its value.
//
// It is also ARRAY_AGG and JSON_ARRAYAGG (which keep their values whether the input
// retracts or not): keepNulls keeps NULL values as elements, and json writes an element
// of JSON_ARRAYAGG.
type valueList struct {
	fn        planner.AggFunc
	sep       string
	keepNulls bool
	json      func([]byte, value) []byte
	vals      [][]value
}

func (l *valueList) grow(g int) { l.vals = growTo(l.vals, g) }
func (l *valueList) update(groups []int32, signs []int8, col arrow.Array) error {
	return forEachRow(l, groups, signs, col)
}
func (l *valueList) add(g int32, v value, sign int64) {
	if v.null && !l.keepNulls {
		return
	}
	for ; sign > 0; sign-- {
		l.vals[g] = append(l.vals[g], owned(v))
	}
	for ; sign < 0; sign++ {
		list := l.vals[g]
		for i, x := range list {
			if x == v {
				l.vals[g] = append(list[:i], list[i+1:]...)
				break
			}
		}
	}
}
func (l *valueList) result(g int32) value {
	list := l.vals[g]
	if l.fn == planner.AggJSONArray {
		buf := []byte{'['}
		for i, v := range list {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = l.json(buf, v)
		}
		return value{s: string(append(buf, ']'))}
	}
	if len(list) == 0 {
		return value{null: true}
	}
	switch l.fn {
	case planner.AggArrayAgg:
		return encodedList(list)
	case planner.AggFirstValue:
		return list[0]
	case planner.AggLastValue:
		return list[len(list)-1]
	}
	var b strings.Builder
	for i, v := range list {
		if i > 0 {
			b.WriteString(l.sep)
		}
		b.WriteString(v.s)
	}
	return value{s: b.String()}
}
func (l *valueList) reset(g int32)        { l.vals[g] = nil }
func (l *valueList) merge(dst, src int32) { l.vals[dst] = append(l.vals[dst], l.vals[src]...) }
func (l *valueList) save(dst []byte, g int32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(l.vals[g])))
	for _, v := range l.vals[g] {
		dst = appendValueBytes(dst, v)
	}
	return dst
}
func (l *valueList) load(d *decoder, g int32) {
	n, k := binary.Uvarint(d.buf)
	if k <= 0 || n > uint64(len(d.buf)-k) { // each value takes at least a byte
		d.fail()
		return
	}
	d.buf = d.buf[k:]
	list := make([]value, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		list = append(list, d.value())
	}
	l.vals[g] = list
}
