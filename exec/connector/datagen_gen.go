package connector

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/streamsql/streamsql/planner"
)

// The value generators of the datagen source, one type a kind of column.
//
// Random values are counter-based: word k of column c for the row with global index g
// is mix(key(seed, c, k) + g·γ), SplitMix64's output at position g, so each row's
// values are a pure function of (seed, column, row) — a restored or parallel reader
// produces the very rows an uninterrupted single reader would — while a batch is still
// generated column by column in a tight loop. Stream k = 0 decides NULLs, so the values
// drawn do not depend on the null rate.

// golden is γ, SplitMix64's increment: 2^64 divided by the golden ratio, odd.
const golden = 0x9e3779b97f4a7c15

// mix is SplitMix64's finalizer, a bijection of 64-bit words.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func splitmix64(x uint64) uint64 { return mix(x + golden) }

// rowSpan is what a batch generates: n rows with global indexes first, first+step, ...
type rowSpan struct {
	seed        uint64
	first, step uint64
	n           int
	base        baseTimes
}

// words returns stream k of column col over the rows of the span.
func (s rowSpan) words(col, k int) words {
	key := splitmix64(splitmix64(s.seed) ^ uint64(col)<<32 ^ uint64(k))
	return words{state: key + s.first*golden, inc: s.step * golden}
}

// words yields one random word a row.
type words struct{ state, inc uint64 }

func (w *words) next() uint64 {
	z := mix(w.state)
	w.state += w.inc
	return z
}

// below maps a random word to [0, n) by multiply-shift (its bias, at most n/2^64, is
// negligible).
func below(w, n uint64) uint64 {
	hi, _ := bits.Mul64(w, n)
	return hi
}

// unit maps a random word to [0, 1).
func unit(w uint64) float64 { return float64(w>>11) * 0x1p-53 }

// nulls decides which rows of column col are NULL.
type nulls struct {
	col   int
	rate  float64
	valid []bool
}

// fill returns the validity of the span's rows, or nil when none can be NULL.
func (z *nulls) fill(s rowSpan) []bool {
	if z.rate <= 0 {
		return nil
	}
	z.valid = resize(z.valid, s.n)
	w := s.words(z.col, 0)
	for i := range z.valid {
		z.valid[i] = unit(w.next()) >= z.rate
	}
	return z.valid
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// randomInt draws integers uniformly from [min, min+span-1]; span 0 is the full range.
type randomInt struct {
	z    nulls
	min  int64
	span uint64
	i64  []int64
	i32  []int32
}

func (g *randomInt) value(w uint64) int64 {
	if g.span == 0 {
		return int64(w)
	}
	return g.min + int64(below(w, g.span))
}

func (g *randomInt) append(b array.Builder, s rowSpan) {
	valid := g.z.fill(s)
	w := s.words(g.z.col, 1)
	switch b := b.(type) {
	case *array.Int64Builder:
		g.i64 = resize(g.i64, s.n)
		for i := range g.i64 {
			g.i64[i] = g.value(w.next())
		}
		b.AppendValues(g.i64, valid)
	case *array.Int32Builder:
		g.i32 = resize(g.i32, s.n)
		for i := range g.i32 {
			g.i32[i] = int32(g.value(w.next()))
		}
		b.AppendValues(g.i32, valid)
	}
}

type randomDecimal struct {
	randomInt
	vals []decimal128.Num
}

func (g *randomDecimal) append(b array.Builder, s rowSpan) {
	valid := g.z.fill(s)
	w := s.words(g.z.col, 1)
	g.vals = resize(g.vals, s.n)
	for i := range g.vals {
		g.vals[i] = decimal128.FromI64(g.value(w.next()))
	}
	b.(*array.Decimal128Builder).AppendValues(g.vals, valid)
}

type randomDouble struct {
	z        nulls
	min, max float64
	vals     []float64
}

func (g *randomDouble) append(b array.Builder, s rowSpan) {
	valid := g.z.fill(s)
	w := s.words(g.z.col, 1)
	g.vals = resize(g.vals, s.n)
	if span := g.max - g.min; !math.IsInf(span, 0) {
		for i := range g.vals {
			g.vals[i] = g.min + unit(w.next())*span
		}
	} else {
		for i := range g.vals {
			r := unit(w.next())
			g.vals[i] = r*g.max + (1-r)*g.min
		}
	}
	b.(*array.Float64Builder).AppendValues(g.vals, valid)
}

type randomBool struct {
	z    nulls
	vals []bool
}

func (g *randomBool) append(b array.Builder, s rowSpan) {
	valid := g.z.fill(s)
	w := s.words(g.z.col, 1)
	g.vals = resize(g.vals, s.n)
	for i := range g.vals {
		g.vals[i] = w.next()>>63 == 1
	}
	b.(*array.BooleanBuilder).AppendValues(g.vals, valid)
}

// randomString draws strings of lowercase hex digits, as Flink's datagen does; word
// stream 1+j gives digits 16j to 16j+15.
type randomString struct {
	z      nulls
	length int
	words  []words
	buf    []byte
}

const hexDigits = "0123456789abcdef"

func (g *randomString) append(b array.Builder, s rowSpan) {
	valid := g.z.fill(s)
	sb := b.(*array.StringBuilder)
	sb.Reserve(s.n)
	sb.ReserveData(s.n * g.length)
	g.words = resize(g.words, (g.length+15)/16)
	for j := range g.words {
		g.words[j] = s.words(g.z.col, 1+j)
	}
	g.buf = resize(g.buf, g.length)
	for i := 0; i < s.n; i++ {
		for j := range g.words {
			r := g.words[j].next()
			for k := j * 16; k < min(j*16+16, g.length); k++ {
				g.buf[k] = hexDigits[r&15]
				r >>= 4
			}
		}
		if valid != nil && !valid[i] {
			sb.AppendNull()
			continue
		}
		sb.UnsafeAppend(g.buf)
	}
}

// randomTime draws timestamps (or dates, or times of day) up to maxPast milliseconds
// before the base.
type randomTime struct {
	z          nulls
	kind       planner.Kind
	maxPast    int64
	unit, keep int64 // TIME: milliseconds per stored unit; the fraction kept, in ms
	prec       int   // TIMESTAMP(p), TIMESTAMP_LTZ(p): p, the fraction digits kept
	ts         []arrow.Timestamp
	dates      []arrow.Date32
	times      []arrow.Time32
}

func (g *randomTime) past(w uint64) int64 {
	if g.maxPast <= 0 {
		return 0
	}
	return int64(below(w, uint64(g.maxPast)+1))
}

func (g *randomTime) append(b array.Builder, s rowSpan) {
	valid := g.z.fill(s)
	w := s.words(g.z.col, 1)
	switch g.kind {
	case planner.Date:
		g.dates = resize(g.dates, s.n)
		for i := range g.dates {
			g.dates[i] = arrow.Date32(s.base.days - g.past(w.next())/86400000)
		}
		b.(*array.Date32Builder).AppendValues(g.dates, valid)
	case planner.Time: // the base's wall clock time of day, as Flink's current time
		g.times = resize(g.times, s.n)
		for i := range g.times {
			ms := s.base.wall - g.past(w.next())
			ms = (ms%86400000 + 86400000) % 86400000
			g.times[i] = arrow.Time32((ms - ms%g.keep) / g.unit)
		}
		b.(*array.Time32Builder).AppendValues(g.times, valid)
	default:
		at := s.base.wall
		if g.kind == planner.TimestampLTZ {
			at = s.base.instant
		}
		g.ts = resize(g.ts, s.n)
		for i := range g.ts {
			g.ts[i] = arrow.Timestamp(planner.TruncateMillis(at-g.past(w.next()), g.prec))
		}
		b.(*array.TimestampBuilder).AppendValues(g.ts, valid)
	}
}

// sequence produces start, start+1, ..., end: the value of the row with global index g
// is start+g, so a restored or parallel reader continues or interleaves the sequence.
type sequence struct {
	z     nulls
	kind  planner.Kind
	start int64
	scale decimal128.Num // DECIMAL: 10^scale
	i64   []int64
	i32   []int32
	f64   []float64
	dec   []decimal128.Num
	str   []byte
}

func newSequence(o *Options, c planner.Column, prefix string, z nulls) (fieldGen, int64, error) {
	switch c.Type.Kind {
	case planner.Int, planner.BigInt, planner.Double, planner.Decimal, planner.String:
	default:
		return nil, 0, o.Err("datagen field %s of type %s cannot be a sequence (sequences are INT, BIGINT, DOUBLE, DECIMAL or STRING)", c.Name, c.Type.Nullable())
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if c.Type.Kind == planner.Int {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	if c.Type.Kind == planner.Decimal && c.Type.Precision-c.Type.Scale < 19 {
		hi = int64(math.Pow10(c.Type.Precision-c.Type.Scale)) - 1
		lo = -hi
	}
	if _, err := o.Required(prefix + "start"); err != nil {
		return nil, 0, o.Err("option '%sstart' is required for a sequence", prefix)
	}
	if _, err := o.Required(prefix + "end"); err != nil {
		return nil, 0, o.Err("option '%send' is required for a sequence", prefix)
	}
	start, err := o.Int64(prefix+"start", 0, lo, hi)
	if err != nil {
		return nil, 0, err
	}
	end, err := o.Int64(prefix+"end", 0, lo, hi)
	if err != nil {
		return nil, 0, err
	}
	if start > end {
		return nil, 0, o.Err("option '%sstart' (%d) is greater than '%send' (%d)", prefix, start, prefix, end)
	}
	count := int64(uint64(end) - uint64(start) + 1)
	if count <= 0 { // the full int64 range: more rows than can be counted
		count = math.MaxInt64
	}
	g := &sequence{z: z, kind: c.Type.Kind, start: start}
	if c.Type.Kind == planner.Decimal {
		g.scale = decimal128.GetScaleMultiplier(c.Type.Scale)
	}
	return g, count, nil
}

func (g *sequence) append(b array.Builder, s rowSpan) {
	valid := g.z.fill(s)
	n, first, step := s.n, g.start+int64(s.first), int64(s.step)
	switch b := b.(type) {
	case *array.Int64Builder:
		g.i64 = resize(g.i64, n)
		for i := range g.i64 {
			g.i64[i] = first + int64(i)*step
		}
		b.AppendValues(g.i64, valid)
	case *array.Int32Builder:
		g.i32 = resize(g.i32, n)
		for i := range g.i32 {
			g.i32[i] = int32(first + int64(i)*step)
		}
		b.AppendValues(g.i32, valid)
	case *array.Float64Builder:
		g.f64 = resize(g.f64, n)
		for i := range g.f64 {
			g.f64[i] = float64(first + int64(i)*step)
		}
		b.AppendValues(g.f64, valid)
	case *array.Decimal128Builder:
		g.dec = resize(g.dec, n)
		for i := range g.dec {
			g.dec[i] = decimal128.FromI64(first + int64(i)*step).Mul(g.scale)
		}
		b.AppendValues(g.dec, valid)
	case *array.StringBuilder:
		b.Reserve(n)
		for i := 0; i < n; i++ {
			if valid != nil && !valid[i] {
				b.AppendNull()
				continue
			}
			g.str = strconv.AppendInt(g.str[:0], first+int64(i)*step, 10)
			b.BinaryBuilder.Append(g.str)
		}
	}
}
