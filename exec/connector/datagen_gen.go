package connector

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/streamsql/streamsql/planner"
)

// The value generators of the datagen source, one type a kind of column.

// randomInt draws integers uniformly from [min, min+span-1]; span 0 is the full range.
type randomInt struct {
	rng  *rand.Rand
	z    nulls
	min  int64
	span uint64
	i64  []int64
	i32  []int32
}

func (g *randomInt) next() int64 {
	if g.span == 0 {
		return int64(g.rng.Uint64())
	}
	return g.min + int64(g.rng.Uint64N(g.span))
}

func (g *randomInt) append(b array.Builder, _ int64, n int, _ baseTimes) {
	valid := g.z.fill(n)
	switch b := b.(type) {
	case *array.Int64Builder:
		g.i64 = resize(g.i64, n)
		for i := range g.i64 {
			g.i64[i] = g.next()
		}
		b.AppendValues(g.i64, valid)
	case *array.Int32Builder:
		g.i32 = resize(g.i32, n)
		for i := range g.i32 {
			g.i32[i] = int32(g.next())
		}
		b.AppendValues(g.i32, valid)
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

type randomDecimal struct {
	randomInt
	vals []decimal128.Num
}

func (g *randomDecimal) append(b array.Builder, _ int64, n int, _ baseTimes) {
	valid := g.z.fill(n)
	g.vals = resize(g.vals, n)
	for i := range g.vals {
		g.vals[i] = decimal128.FromI64(g.next())
	}
	b.(*array.Decimal128Builder).AppendValues(g.vals, valid)
}

type randomDouble struct {
	rng      *rand.Rand
	z        nulls
	min, max float64
	vals     []float64
}

func (g *randomDouble) append(b array.Builder, _ int64, n int, _ baseTimes) {
	valid := g.z.fill(n)
	g.vals = resize(g.vals, n)
	span := g.max - g.min
	for i := range g.vals {
		r := g.rng.Float64()
		if math.IsInf(span, 0) {
			g.vals[i] = r*g.max + (1-r)*g.min
		} else {
			g.vals[i] = g.min + r*span
		}
	}
	b.(*array.Float64Builder).AppendValues(g.vals, valid)
}

type randomBool struct {
	rng   *rand.Rand
	z     nulls
	bits  uint64 // unused random bits, carried across batches
	nbits int
	vals  []bool
}

func (g *randomBool) append(b array.Builder, _ int64, n int, _ baseTimes) {
	valid := g.z.fill(n)
	g.vals = resize(g.vals, n)
	for i := range g.vals {
		if g.nbits == 0 {
			g.bits, g.nbits = g.rng.Uint64(), 64
		}
		g.vals[i] = g.bits&1 == 1
		g.bits >>= 1
		g.nbits--
	}
	b.(*array.BooleanBuilder).AppendValues(g.vals, valid)
}

// randomString draws strings of lowercase hex digits, as Flink's datagen does.
type randomString struct {
	rng    *rand.Rand
	z      nulls
	length int
	buf    []byte
}

const hexDigits = "0123456789abcdef"

func (g *randomString) append(b array.Builder, _ int64, n int, _ baseTimes) {
	valid := g.z.fill(n)
	sb := b.(*array.StringBuilder)
	sb.Reserve(n)
	sb.ReserveData(n * g.length)
	g.buf = resize(g.buf, g.length)
	for i := 0; i < n; i++ {
		for j := 0; j < g.length; j += 16 {
			r := g.rng.Uint64()
			for k := j; k < j+16 && k < g.length; k++ {
				g.buf[k] = hexDigits[r&15]
				r >>= 4
			}
		}
		if valid != nil && !valid[i] {
			sb.AppendNull()
			continue
		}
		sb.BinaryBuilder.Append(g.buf)
	}
}

// randomTime draws timestamps (or dates) up to maxPast milliseconds before the base.
type randomTime struct {
	rng     *rand.Rand
	z       nulls
	kind    planner.Kind
	maxPast int64
	ts      []arrow.Timestamp
	dates   []arrow.Date32
}

func (g *randomTime) past() int64 {
	if g.maxPast <= 0 {
		return 0
	}
	return g.rng.Int64N(g.maxPast + 1)
}

func (g *randomTime) append(b array.Builder, _ int64, n int, base baseTimes) {
	valid := g.z.fill(n)
	switch g.kind {
	case planner.Date:
		g.dates = resize(g.dates, n)
		for i := range g.dates {
			g.dates[i] = arrow.Date32(base.days - g.past()/86400000)
		}
		b.(*array.Date32Builder).AppendValues(g.dates, valid)
	default:
		at := base.wall
		if g.kind == planner.TimestampLTZ {
			at = base.instant
		}
		g.ts = resize(g.ts, n)
		for i := range g.ts {
			g.ts[i] = arrow.Timestamp(at - g.past())
		}
		b.(*array.TimestampBuilder).AppendValues(g.ts, valid)
	}
}

// sequence produces start, start+1, ..., end: the value of the row at position pos is
// start+pos, so a restored position continues the sequence.
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

func newSequence(o *options, c planner.Column, prefix string, z nulls) (fieldGen, int64, error) {
	switch c.Type.Kind {
	case planner.Int, planner.BigInt, planner.Double, planner.Decimal, planner.String:
	default:
		return nil, 0, o.err("datagen field %s of type %s cannot be a sequence (sequences are INT, BIGINT, DOUBLE, DECIMAL or STRING)", c.Name, c.Type.Nullable())
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if c.Type.Kind == planner.Int {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	if c.Type.Kind == planner.Decimal && c.Type.Precision-c.Type.Scale < 19 {
		hi = int64(math.Pow10(c.Type.Precision-c.Type.Scale)) - 1
		lo = -hi
	}
	if _, err := o.required(prefix + "start"); err != nil {
		return nil, 0, o.err("option '%sstart' is required for a sequence", prefix)
	}
	if _, err := o.required(prefix + "end"); err != nil {
		return nil, 0, o.err("option '%send' is required for a sequence", prefix)
	}
	start, err := o.int64Opt(prefix+"start", 0, lo, hi)
	if err != nil {
		return nil, 0, err
	}
	end, err := o.int64Opt(prefix+"end", 0, lo, hi)
	if err != nil {
		return nil, 0, err
	}
	if start > end {
		return nil, 0, o.err("option '%sstart' (%d) is greater than '%send' (%d)", prefix, start, prefix, end)
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

func (g *sequence) append(b array.Builder, pos int64, n int, _ baseTimes) {
	valid := g.z.fill(n)
	first := g.start + pos
	switch b := b.(type) {
	case *array.Int64Builder:
		g.i64 = resize(g.i64, n)
		for i := range g.i64 {
			g.i64[i] = first + int64(i)
		}
		b.AppendValues(g.i64, valid)
	case *array.Int32Builder:
		g.i32 = resize(g.i32, n)
		for i := range g.i32 {
			g.i32[i] = int32(first + int64(i))
		}
		b.AppendValues(g.i32, valid)
	case *array.Float64Builder:
		g.f64 = resize(g.f64, n)
		for i := range g.f64 {
			g.f64[i] = float64(first + int64(i))
		}
		b.AppendValues(g.f64, valid)
	case *array.Decimal128Builder:
		g.dec = resize(g.dec, n)
		for i := range g.dec {
			g.dec[i] = decimal128.FromI64(first + int64(i)).Mul(g.scale)
		}
		b.AppendValues(g.dec, valid)
	case *array.StringBuilder:
		b.Reserve(n)
		for i := 0; i < n; i++ {
			if valid != nil && !valid[i] {
				b.AppendNull()
				continue
			}
			g.str = strconv.AppendInt(g.str[:0], first+int64(i), 10)
			b.BinaryBuilder.Append(g.str)
		}
	}
}
