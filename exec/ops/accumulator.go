package ops

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// accumulator holds one aggregate's state for every group, indexed by group id.
type accumulator interface {
	grow(groups int)
	// update folds in a batch: row i belongs to group groups[i] (skipped when negative),
	// with sign signs[i] (+1 insert, -1 retraction; nil means all inserts), and its
	// argument is col[i] (col is nil for COUNT(*)).
	update(groups []int32, signs []int8, col arrow.Array) error
	result(g int32) value
	reset(g int32)
	// save appends group g's state to dst; load restores what save wrote.
	save(dst []byte, g int32) []byte
	load(d *decoder, g int32)
	// merge folds group src into group dst, as if dst had seen src's rows too.
	merge(dst, src int32)
}

// rowAdder is an accumulator that takes one value at a time; forEachRow drives it.
type rowAdder interface {
	add(g int32, v value, sign int64)
}

// forEachRow feeds every row of a batch to acc.add: the general, slower path.
func forEachRow(acc rowAdder, groups []int32, signs []int8, col arrow.Array) error {
	read, err := reader(col)
	if err != nil {
		return err
	}
	for i, g := range groups {
		if g < 0 {
			continue
		}
		sign := int64(1)
		if signs != nil {
			sign = int64(signs[i])
		}
		acc.add(g, read(i), sign)
	}
	return nil
}

// newAccumulator returns the accumulator of call; retracting tells whether the input
// can retract rows, which MIN and MAX must then remember all values for.
func newAccumulator(call planner.AggCall, in planner.Schema, retracting bool) accumulator {
	var argType planner.Type
	if call.Arg >= 0 {
		argType = in[call.Arg].Type
	}
	var acc accumulator
	switch call.Fn {
	case planner.AggCount:
		acc = &count{star: call.Arg < 0}
	case planner.AggSum, planner.AggAvg:
		acc = &sum{in: argType, out: call.T, avg: call.Fn == planner.AggAvg}
	case planner.AggMin, planner.AggMax:
		lessFn := less(exec.ArrowType(argType).ID())
		if call.Fn == planner.AggMax {
			lt := lessFn
			lessFn = func(a, b value) bool { return lt(b, a) }
		}
		if retracting {
			acc = &extremeMultiset{less: lessFn}
		} else {
			acc = &extreme{less: lessFn}
		}
		return acc // DISTINCT changes nothing for MIN and MAX
	case planner.AggVarPop, planner.AggVarSamp, planner.AggStddevPop, planner.AggStddevSamp:
		acc = newVariance(call.Fn)
	case planner.AggFirstValue, planner.AggLastValue, planner.AggListAgg:
		switch {
		case retracting:
			acc = &valueList{fn: call.Fn, sep: call.Separator}
		case call.Fn == planner.AggListAgg:
			acc = &listAgg{sep: call.Separator}
		default:
			acc = &firstLast{last: call.Fn == planner.AggLastValue}
		}
	case planner.AggArrayAgg:
		acc = &valueList{fn: call.Fn, keepNulls: call.KeepNulls}
	case planner.AggJSONArray:
		acc = &valueList{fn: call.Fn, keepNulls: call.KeepNulls, json: jsonWriter(argType)}
	case planner.AggCollect:
		acc = &multiset{less: less(exec.ArrowType(argType).ID())}
	case planner.AggJSONObject:
		return &jsonObject{keepNulls: call.KeepNulls, write: jsonWriter(in[call.More[0]].Type)}
	}
	if call.Distinct {
		switch argType.Kind {
		case planner.TinyInt, planner.SmallInt, planner.Int, planner.BigInt, planner.Date, planner.Timestamp, planner.TimestampLTZ:
			if len(call.More) == 0 {
				return &distinctInts{inner: acc}
			}
		}
		acc = &distinct{inner: acc}
	}
	return acc
}

// count is COUNT(*) or COUNT(x).
type count struct {
	star bool
	n    []int64
}

func (c *count) grow(g int) { c.n = growTo(c.n, g) }

func (c *count) update(groups []int32, signs []int8, col arrow.Array) error {
	n := c.n
	countRow := func(i int) bool { return true }
	if !c.star && col.NullN() > 0 {
		countRow = col.IsValid
	}
	for i, g := range groups {
		if g < 0 || !countRow(i) {
			continue
		}
		if signs == nil {
			n[g]++
		} else {
			n[g] += int64(signs[i])
		}
	}
	return nil
}
func (c *count) add(g int32, v value, sign int64) {
	if c.star || !v.null {
		c.n[g] += sign
	}
}
func (c *count) result(g int32) value { return value{i: c.n[g]} }
func (c *count) merge(dst, src int32) { c.n[dst] += c.n[src] }
func (c *count) reset(g int32)        { c.n[g] = 0 }

// sum is SUM(x) or AVG(x) over INT, BIGINT, DOUBLE or DECIMAL.
type sum struct {
	in, out planner.Type
	avg     bool
	ints    []int64
	floats  []float64
	decs    []decimal128.Num
	n       []int64 // non-null values
}

func (s *sum) grow(g int) {
	s.n = growTo(s.n, g)
	switch s.in.Kind {
	case planner.Double:
		s.floats = growTo(s.floats, g)
	case planner.Decimal:
		s.decs = growTo(s.decs, g)
	default:
		s.ints = growTo(s.ints, g)
	}
}

func (s *sum) update(groups []int32, signs []int8, col arrow.Array) error {
	if col.NullN() == 0 {
		switch c := col.(type) {
		case *array.Int64:
			return sumInts(s.ints, s.n, groups, signs, c.Int64Values())
		case *array.Int32:
			return sumInts(s.ints, s.n, groups, signs, c.Int32Values())
		case *array.Float64:
			vals := c.Float64Values()
			for i, g := range groups {
				if g < 0 {
					continue
				}
				if signs == nil || signs[i] > 0 {
					s.floats[g] += vals[i]
					s.n[g]++
				} else {
					s.floats[g] -= vals[i]
					s.n[g]--
				}
			}
			return nil
		}
	}
	return forEachRow(s, groups, signs, col)
}

func sumInts[T int32 | int64](sums, n []int64, groups []int32, signs []int8, vals []T) error {
	for i, g := range groups {
		if g < 0 {
			continue
		}
		if signs == nil || signs[i] > 0 {
			sums[g] += int64(vals[i])
			n[g]++
		} else {
			sums[g] -= int64(vals[i])
			n[g]--
		}
	}
	return nil
}

func (s *sum) add(g int32, v value, sign int64) {
	if v.null {
		return
	}
	s.n[g] += sign
	switch s.in.Kind {
	case planner.Double:
		s.floats[g] += float64(sign) * v.f
	case planner.Decimal:
		if sign > 0 {
			s.decs[g] = s.decs[g].Add(v.d)
		} else {
			s.decs[g] = s.decs[g].Sub(v.d)
		}
	default:
		s.ints[g] += sign * v.i
	}
}

func (s *sum) result(g int32) value {
	n := s.n[g]
	if n == 0 {
		return value{null: true}
	}
	switch s.in.Kind {
	case planner.Double:
		if s.avg {
			return value{f: s.floats[g] / float64(n)}
		}
		return value{f: s.floats[g]}
	case planner.Decimal:
		d, _ := s.decs[g].Rescale(int32(s.in.Scale), int32(s.out.Scale))
		if s.avg {
			q, _ := s.decs[g].IncreaseScaleBy(int32(s.out.Scale-s.in.Scale) + 1).Div(decimal128.FromI64(n))
			d = roundLastDigit(q)
		}
		return value{d: d}
	}
	if s.avg {
		return value{f: float64(s.ints[g]) / float64(n)}
	}
	return value{i: s.ints[g]}
}

func (s *sum) merge(dst, src int32) {
	s.n[dst] += s.n[src]
	switch s.in.Kind {
	case planner.Double:
		s.floats[dst] += s.floats[src]
	case planner.Decimal:
		s.decs[dst] = s.decs[dst].Add(s.decs[src])
	default:
		s.ints[dst] += s.ints[src]
	}
}

// roundLastDigit drops one extra digit of scale, rounding half away from zero.
func roundLastDigit(n decimal128.Num) decimal128.Num {
	return n.ReduceScaleBy(1, true)
}

func (s *sum) reset(g int32) {
	s.n[g] = 0
	switch s.in.Kind {
	case planner.Double:
		s.floats[g] = 0
	case planner.Decimal:
		s.decs[g] = decimal128.Num{}
	default:
		s.ints[g] = 0
	}
}

// extreme is MIN or MAX over an insert-only input: less says which value wins.
type extreme struct {
	less func(a, b value) bool
	best []value
	has  []bool
}

func (e *extreme) grow(g int) { e.best, e.has = growTo(e.best, g), growTo(e.has, g) }
func (e *extreme) update(groups []int32, signs []int8, col arrow.Array) error {
	return forEachRow(e, groups, signs, col)
}
func (e *extreme) add(g int32, v value, _ int64) {
	if v.null {
		return
	}
	if !e.has[g] || e.less(v, e.best[g]) {
		e.best[g], e.has[g] = owned(v), true
	}
}
func (e *extreme) result(g int32) value {
	if !e.has[g] {
		return value{null: true}
	}
	return e.best[g]
}
func (e *extreme) reset(g int32) { e.best[g], e.has[g] = value{}, false }
func (e *extreme) merge(dst, src int32) {
	if e.has[src] {
		e.add(dst, e.best[src], 1)
	}
}

// extremeMultiset is MIN or MAX over an input with retractions: it counts every value
// so that retracting the current best finds the next one.
type extremeMultiset struct {
	less   func(a, b value) bool
	values []map[value]int64
	best   []value
	stale  []bool
}

func (e *extremeMultiset) grow(g int) {
	e.values, e.best, e.stale = growTo(e.values, g), growTo(e.best, g), growTo(e.stale, g)
}

func (e *extremeMultiset) update(groups []int32, signs []int8, col arrow.Array) error {
	return forEachRow(e, groups, signs, col)
}

func (e *extremeMultiset) add(g int32, v value, sign int64) {
	if v.null {
		return
	}
	m := e.values[g]
	if m == nil {
		m = map[value]int64{}
		e.values[g] = m
	}
	v = owned(v) // see distinct.add
	if m[v] += sign; m[v] <= 0 {
		delete(m, v)
		if v == e.best[g] {
			e.stale[g] = true
		}
	} else if len(m) == 1 || e.less(v, e.best[g]) {
		e.best[g] = v
	}
}

func (e *extremeMultiset) result(g int32) value {
	m := e.values[g]
	if len(m) == 0 {
		return value{null: true}
	}
	if e.stale[g] {
		first := true
		for v := range m {
			if first || e.less(v, e.best[g]) {
				e.best[g], first = v, false
			}
		}
		e.stale[g] = false
	}
	return e.best[g]
}

func (e *extremeMultiset) reset(g int32) { e.values[g], e.best[g], e.stale[g] = nil, value{}, false }
func (e *extremeMultiset) merge(dst, src int32) {
	for v, n := range e.values[src] {
		e.add(dst, v, n)
	}
}

// distinct feeds its inner accumulator each distinct value once.
type distinct struct {
	inner accumulator
	seen  []map[value]int64
}

func (d *distinct) grow(g int) { d.seen = growTo(d.seen, g); d.inner.grow(g) }

func (d *distinct) update(groups []int32, signs []int8, col arrow.Array) error {
	return forEachRow(d, groups, signs, col)
}

func (d *distinct) add(g int32, v value, sign int64) {
	if v.null {
		return
	}
	m := d.seen[g]
	if m == nil {
		m = map[value]int64{}
		d.seen[g] = m
	}
	// Owned also when the key is there: a Go map's assignment to a key it holds
	// replaces the key with the one given, whose string may be of a batch's buffers,
	// which go back to their source's pool when the batch is released.
	v = owned(v)
	before := m[v]
	after := before + sign
	if after <= 0 {
		delete(m, v)
	} else {
		m[v] = after
	}
	if before <= 0 && after > 0 {
		d.inner.(rowAdder).add(g, v, 1)
	} else if before > 0 && after <= 0 {
		d.inner.(rowAdder).add(g, v, -1)
	}
}

func (d *distinct) result(g int32) value { return d.inner.result(g) }
func (d *distinct) reset(g int32)        { d.seen[g] = nil; d.inner.reset(g) }
func (d *distinct) merge(dst, src int32) {
	for v, n := range d.seen[src] {
		d.add(dst, v, n)
	}
}

// distinctInts is distinct over an integer-like argument: its sets are keyed by the
// integer, a seventh of a value's size and quicker to hash (COUNT(DISTINCT bidder)). Its
// state is distinct's.
type distinctInts struct {
	inner accumulator
	seen  []map[int64]int64
	// share, when set, holds the set instead of seen, as member slot (see shareDistinct).
	share *distinctShare
	slot  int
}

func (d *distinctInts) grow(g int) {
	if d.share != nil {
		d.share.seen = growTo(d.share.seen, g)
	} else {
		d.seen = growTo(d.seen, g)
	}
	d.inner.grow(g)
}

func (d *distinctInts) update(groups []int32, signs []int8, col arrow.Array) error {
	return forEachRow(d, groups, signs, col)
}

func (d *distinctInts) add(g int32, v value, sign int64) {
	if v.null {
		return
	}
	if d.share != nil {
		d.share.add(g, v, sign, 1<<d.slot)
		return
	}
	m := d.seen[g]
	if m == nil {
		m = map[int64]int64{}
		d.seen[g] = m
	}
	before := m[v.i]
	after := before + sign
	if after <= 0 {
		delete(m, v.i)
	} else {
		m[v.i] = after
	}
	if before <= 0 && after > 0 {
		d.inner.(rowAdder).add(g, v, 1)
	} else if before > 0 && after <= 0 {
		d.inner.(rowAdder).add(g, v, -1)
	}
}

func (d *distinctInts) result(g int32) value { return d.inner.result(g) }

func (d *distinctInts) reset(g int32) {
	if d.share != nil {
		d.share.clearSlot(g, d.slot)
	} else {
		d.seen[g] = nil
	}
	d.inner.reset(g)
}

func (d *distinctInts) merge(dst, src int32) {
	if d.share != nil {
		d.sharedMerge(dst, src)
		return
	}
	for v, n := range d.seen[src] {
		d.add(dst, value{i: v}, n)
	}
}

func (d *distinctInts) save(dst []byte, g int32) []byte {
	if d.share != nil {
		return d.inner.save(d.sharedSave(dst, g), g)
	}
	dst = binary.AppendUvarint(dst, uint64(len(d.seen[g])))
	for v, n := range d.seen[g] {
		dst = appendValueBytes(dst, value{i: v})
		dst = binary.AppendVarint(dst, n)
	}
	return d.inner.save(dst, g)
}

func (d *distinctInts) load(dec *decoder, g int32) {
	if d.share != nil {
		d.sharedLoad(dec, g)
		d.inner.load(dec, g)
		return
	}
	d.seen[g] = nil
	if counts := dec.counts(); len(counts) > 0 {
		m := make(map[int64]int64, len(counts))
		for v, n := range counts {
			m[v.i] = n
		}
		d.seen[g] = m
	}
	d.inner.load(dec, g)
}

func growTo[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		return s[:n]
	}
	out := make([]T, n, max(n, 2*cap(s)))
	copy(out, s)
	return out
}

func (c *count) save(dst []byte, g int32) []byte { return binary.AppendVarint(dst, c.n[g]) }
func (c *count) load(d *decoder, g int32)        { c.n[g] = d.varint() }

func (s *sum) save(dst []byte, g int32) []byte {
	dst = binary.AppendVarint(dst, s.n[g])
	switch s.in.Kind {
	case planner.Double:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(s.floats[g]))
	case planner.Decimal:
		return appendValueBytes(dst, value{d: s.decs[g]})
	}
	return binary.AppendVarint(dst, s.ints[g])
}

func (s *sum) load(d *decoder, g int32) {
	s.n[g] = d.varint()
	switch s.in.Kind {
	case planner.Double:
		s.floats[g] = math.Float64frombits(d.uint64())
	case planner.Decimal:
		s.decs[g] = d.value().d
	default:
		s.ints[g] = d.varint()
	}
}

func (e *extreme) save(dst []byte, g int32) []byte {
	if !e.has[g] {
		return appendValueBytes(dst, value{null: true})
	}
	return appendValueBytes(dst, e.best[g])
}

func (e *extreme) load(d *decoder, g int32) {
	v := d.value()
	e.best[g], e.has[g] = v, !v.null
	if v.null {
		e.best[g] = value{}
	}
}

func (e *extremeMultiset) save(dst []byte, g int32) []byte { return appendCounts(dst, e.values[g]) }
func (e *extremeMultiset) load(d *decoder, g int32) {
	e.values[g], e.stale[g] = d.counts(), true
}

func (d *distinct) save(dst []byte, g int32) []byte {
	return d.inner.save(appendCounts(dst, d.seen[g]), g)
}

func (d *distinct) load(dec *decoder, g int32) {
	d.seen[g] = dec.counts()
	d.inner.load(dec, g)
}
