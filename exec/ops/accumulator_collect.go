package ops

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// A structured result (ARRAY_AGG's array, COLLECT's map) travels as a value whose s holds
// its elements, each encoded by appendValueBytes (a map's as key, count pairs); the
// appenders of list and map builders decode it. So results stay comparable values.

// multiset is COLLECT: the multiset of the non-NULL values, kept as counts, written as a
// MAP from each value to its count, in value order.
type multiset struct {
	less   func(a, b value) bool
	counts []map[value]int64
	buf    []byte
}

func (c *multiset) grow(g int) { c.counts = growTo(c.counts, g) }
func (c *multiset) update(groups []int32, signs []int8, col arrow.Array) error {
	return forEachRow(c, groups, signs, col)
}
func (c *multiset) add(g int32, v value, sign int64) {
	if v.null {
		return
	}
	m := c.counts[g]
	if m == nil {
		m = map[value]int64{}
		c.counts[g] = m
	}
	v = owned(v) // see distinct.add
	if m[v] += sign; m[v] <= 0 {
		delete(m, v)
	}
}
func (c *multiset) result(g int32) value {
	m := c.counts[g]
	if len(m) == 0 {
		return value{null: true}
	}
	keys := make([]value, 0, len(m))
	for v := range m {
		keys = append(keys, v)
	}
	slices.SortFunc(keys, func(a, b value) int {
		switch {
		case c.less(a, b):
			return -1
		case c.less(b, a):
			return 1
		}
		return 0
	})
	buf := c.buf[:0]
	for _, k := range keys {
		buf = appendValueBytes(buf, k)
		buf = appendValueBytes(buf, value{i: m[k]})
	}
	c.buf = buf
	return value{s: string(buf)}
}
func (c *multiset) reset(g int32) { c.counts[g] = nil }
func (c *multiset) merge(dst, src int32) {
	for v, n := range c.counts[src] {
		c.add(dst, v, n)
	}
}
func (c *multiset) save(dst []byte, g int32) []byte { return appendCounts(dst, c.counts[g]) }
func (c *multiset) load(d *decoder, g int32)        { c.counts[g] = d.counts() }

// encodedList is the s of an ARRAY result holding vals.
func encodedList(vals []value) value {
	var buf []byte
	for _, v := range vals {
		buf = appendValueBytes(buf, v)
	}
	return value{s: string(buf)}
}

// listAppender appends encoded ARRAY results to a list builder.
func listAppender(b *array.ListBuilder) func(value) {
	elem := appender(b.ValueBuilder())
	return func(v value) {
		if v.null {
			b.AppendNull()
			return
		}
		b.Append(true)
		d := &decoder{buf: []byte(v.s)}
		for len(d.buf) > 0 && d.err == nil {
			elem(d.value())
		}
	}
}

// mapAppender appends encoded MAP results (key, value pairs) to a map builder.
func mapAppender(b *array.MapBuilder) func(value) {
	key, item := appender(b.KeyBuilder()), appender(b.ItemBuilder())
	return func(v value) {
		if v.null {
			b.AppendNull()
			return
		}
		b.Append(true)
		d := &decoder{buf: []byte(v.s)}
		for len(d.buf) > 0 && d.err == nil {
			key(d.value())
			item(d.value())
		}
	}
}

// jsonWriter writes values of one SQL type as JSON: numbers and booleans bare, strings
// quoted (the planner casts other types to STRING).
func jsonWriter(t planner.Type) func(dst []byte, v value) []byte {
	return func(dst []byte, v value) []byte {
		switch {
		case v.null:
			return append(dst, "null"...)
		case t.Kind == planner.Boolean:
			return strconv.AppendBool(dst, v.i != 0)
		case t.Kind == planner.Double || t.Kind == planner.Float:
			return format.AppendDouble(dst, v.f)
		case t.Kind == planner.Decimal:
			return append(dst, v.d.ToString(int32(t.Scale))...)
		case t.IsNumeric():
			return strconv.AppendInt(dst, v.i, 10)
		}
		return appendJSONString(dst, v.s)
	}
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20:
			dst = fmt.Appendf(dst, "\\u%04x", r)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

// jsonObject is JSON_OBJECTAGG: each group's entries by key, written sorted by key. A
// key may occur once in a group (Flink fails such a job too); a retraction removes its
// key's entry.
type jsonObject struct {
	keepNulls bool
	write     func([]byte, value) []byte
	entries   []map[string]string // key -> the value's JSON
	buf       []byte
}

var _ pairUpdater = (*jsonObject)(nil)

// pairUpdater is an accumulator of two arguments, each row's taken together.
type pairUpdater interface {
	updatePairs(groups []int32, signs []int8, a, b arrow.Array) error
}

func (o *jsonObject) grow(g int) { o.entries = growTo(o.entries, g) }
func (o *jsonObject) update(groups []int32, signs []int8, col arrow.Array) error {
	return fmt.Errorf("JSON_OBJECTAGG takes a key and a value")
}
func (o *jsonObject) updatePairs(groups []int32, signs []int8, keys, vals arrow.Array) error {
	readKey, err := reader(keys)
	if err != nil {
		return err
	}
	readVal, err := reader(vals)
	if err != nil {
		return err
	}
	for i, g := range groups {
		if g < 0 {
			continue
		}
		k, v := readKey(i), readVal(i)
		if k.null {
			return fmt.Errorf("JSON_OBJECTAGG: a key is NULL")
		}
		if v.null && !o.keepNulls {
			continue
		}
		o.buf = o.write(o.buf[:0], v)
		m := o.entries[g]
		if signs != nil && signs[i] < 0 {
			if m[k.s] == string(o.buf) {
				delete(m, k.s)
			}
			continue
		}
		if m == nil {
			m = map[string]string{}
			o.entries[g] = m
		}
		if _, dup := m[k.s]; dup {
			return fmt.Errorf("JSON_OBJECTAGG: the key %q occurs twice in a group", k.s)
		}
		m[strings.Clone(k.s)] = string(o.buf)
	}
	return nil
}
func (o *jsonObject) result(g int32) value {
	m := o.entries[g]
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf := append(o.buf[:0], '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		buf = append(buf, m[k]...)
	}
	buf = append(buf, '}')
	o.buf = buf
	return value{s: string(buf)}
}
func (o *jsonObject) reset(g int32) { o.entries[g] = nil }
func (o *jsonObject) merge(dst, src int32) {
	for k, v := range o.entries[src] {
		if o.entries[dst] == nil {
			o.entries[dst] = map[string]string{}
		}
		o.entries[dst][k] = v
	}
}
func (o *jsonObject) save(dst []byte, g int32) []byte {
	m := o.entries[g]
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = binary.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		dst = appendValueBytes(dst, value{s: k})
		dst = appendValueBytes(dst, value{s: m[k]})
	}
	return dst
}
func (o *jsonObject) load(d *decoder, g int32) {
	n, k := binary.Uvarint(d.buf)
	if k <= 0 || n > uint64(len(d.buf)-k) {
		d.fail()
		return
	}
	d.buf = d.buf[k:]
	m := make(map[string]string, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		key := d.value()
		m[key.s] = d.value().s
	}
	o.entries[g] = m
}
