package connector

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// DatagenReader is the datagen source (Flink's options): random or sequence values for
// each column, paced to 'rows-per-second', bounded by 'number-of-rows' and by the end
// of any sequence.
//
// A random value is a function of the seed, the column's position and the row's global
// index (see datagen_gen.go), so the same seed gives the same rows whatever the batch
// sizes, the number of parallel tasks (see split) or a restore in between; without a
// seed one is drawn at open, and the rows differ on every run. With a seed, timestamps
// and dates count back from the fixed time 2020-01-01 00:00:00; without one they count
// back from the clock at each batch, so a restored reader replays every value but those.
//
// A snapshot is the number of rows this task produced and the seed (see datagenState).
type DatagenReader struct {
	table  string
	split  split
	rb     *array.RecordBuilder
	fields []fieldGen
	batch  int
	limit  int64 // rows this task produces in all; -1 when unbounded
	pos    int64 // rows produced so far
	pace   *tokenBucket
	now    func() time.Time
	loc    *time.Location
	seed   uint64
	seeded bool
	lanes  []lane // the rows left, restored at another parallelism; nil: the split's
}

var (
	_ exec.Reader      = (*DatagenReader)(nil)
	_ exec.Closer      = (*DatagenReader)(nil)
	_ exec.Snapshotter = (*DatagenReader)(nil)
	_ exec.Restorer    = (*DatagenReader)(nil)
)

var datagenKeys = []string{"number-of-rows", "rows-per-second", "seed"}

var datagenFieldKeys = []string{"end", "kind", "length", "max", "max-past", "min", "null-rate", "start"}

// maxBatchBytes bounds the string bytes of a datagen batch.
const maxBatchBytes = 32 << 20

// seededBase is the time that timestamps count back from when a seed is set.
var seededBase = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func openDatagen(spec SourceSpec) (*DatagenReader, error) {
	t := spec.Table
	schema := t.PhysicalSchema()
	sp, err := newSplit(spec)
	if err != nil {
		return nil, err
	}
	isFieldKey := func(k string) bool {
		if !strings.HasPrefix(k, "fields.") {
			return false
		}
		i := strings.LastIndexByte(k, '.')
		return i > len("fields.") && contains(datagenFieldKeys, k[i+1:])
	}
	patterns := make([]string, 0, len(datagenFieldKeys))
	for _, k := range datagenFieldKeys {
		patterns = append(patterns, "fields.#."+k)
	}
	o, err := NewOptions(t, append(append([]string{}, datagenKeys...), patterns...), false, isFieldKey)
	if err != nil {
		return nil, err
	}
	// Every fields.<name>.<key> must name a physical column.
	for _, k := range t.OptionKeys() {
		if isFieldKey(k) {
			name := k[len("fields."):strings.LastIndexByte(k, '.')]
			if fieldIndex(schema, name) < 0 {
				return nil, o.Err("option '%s' names no physical column %s", k, name)
			}
		}
	}
	rps, err := o.Int64("rows-per-second", 10000, 1, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	limit, err := o.Int64("number-of-rows", -1, 0, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	var seed uint64
	_, seeded := t.Option("seed")
	if seeded {
		s, err := o.Int64("seed", 0, math.MinInt64, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		seed = uint64(s)
	} else {
		seed = rand.Uint64()
	}
	d := &DatagenReader{
		table:  t.Name,
		split:  sp,
		seed:   seed,
		batch:  spec.BatchSize,
		limit:  limit,
		now:    spec.Now,
		loc:    spec.Location,
		seeded: seeded,
	}
	for i, c := range schema {
		g, n, err := newFieldGen(o, c, i)
		if err != nil {
			return nil, err
		}
		if n >= 0 && (d.limit < 0 || n < d.limit) {
			d.limit = n // a sequence ends the source when it is exhausted, as in Flink
		}
		d.fields = append(d.fields, g)
	}
	d.limit = sp.rows(d.limit)
	// Keep a batch of long random strings within maxBatchBytes.
	rowBytes := 0
	for _, g := range d.fields {
		if s, ok := g.(*randomString); ok {
			rowBytes += s.length
		}
	}
	if rowBytes > 0 && d.batch*rowBytes > maxBatchBytes {
		d.batch = max(1, maxBatchBytes/rowBytes)
	}
	d.pace = newTokenBucket(float64(rps)/float64(sp.tasks), d.batch, spec.Now)
	d.rb = array.NewRecordBuilder(spec.Mem, exec.ArrowSchema(schema))
	return d, nil
}

func fieldIndex(s planner.Schema, name string) int {
	for i, c := range s {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Position returns the number of rows this task produced so far.
func (d *DatagenReader) Position() int64 { return d.pos }

// Next generates the next batch; see exec.Reader.
func (d *DatagenReader) Next(ctx context.Context) (exec.Batch, error) {
	if d.rb == nil {
		return exec.Batch{}, errClosed
	}
	if err := ctx.Err(); err != nil {
		return exec.Batch{}, err
	}
	if d.lanes != nil {
		return d.nextOfLanes(ctx)
	}
	n := int64(d.batch)
	if d.limit >= 0 {
		if d.limit-d.pos < n {
			n = d.limit - d.pos
		}
		if n <= 0 {
			return exec.Batch{}, io.EOF
		}
	}
	got, err := d.pace.take(ctx, int(n))
	if err != nil || got == 0 {
		return exec.Batch{}, err
	}
	span := rowSpan{seed: d.seed, first: d.split.global(d.pos), step: uint64(d.split.tasks), n: got, base: d.baseTimes()}
	for i, g := range d.fields {
		g.append(d.rb.Field(i), span)
	}
	d.pos += int64(got)
	return exec.Batch{Rec: d.rb.NewRecord(), Origin: exec.SeqOrigin{Table: d.table, First: span.first + 1, Step: span.step}}, nil
}

// nextOfLanes generates the next batch of a reader restored at another parallelism:
// from its first lane with rows left.
func (d *DatagenReader) nextOfLanes(ctx context.Context) (exec.Batch, error) {
	i := slices.IndexFunc(d.lanes, func(l lane) bool { return l.left() > 0 })
	if i < 0 {
		return exec.Batch{}, io.EOF
	}
	got, err := d.pace.take(ctx, int(min(int64(d.batch), d.lanes[i].left())))
	if err != nil || got == 0 {
		return exec.Batch{}, err
	}
	l := &d.lanes[i]
	span := rowSpan{seed: l.Seed, first: l.Next, step: l.Step, n: got, base: d.baseTimes()}
	for c, g := range d.fields {
		g.append(d.rb.Field(c), span)
	}
	l.Next += uint64(got) * l.Step
	d.pos += int64(got)
	return exec.Batch{Rec: d.rb.NewRecord(), Origin: exec.SeqOrigin{Table: d.table, First: span.first + 1, Step: span.step}}, nil
}

// Close frees the builders.
func (d *DatagenReader) Close() error {
	if d.rb != nil {
		d.rb.Release()
		d.rb = nil
	}
	return nil
}

// baseTimes is the time random timestamps and dates count back from, in each encoding.
type baseTimes struct {
	wall    int64 // TIMESTAMP: the wall clock in the session zone, as UTC millis
	instant int64 // TIMESTAMP_LTZ: epoch millis
	days    int64 // DATE: the session zone's date, days since the epoch
}

func (d *DatagenReader) baseTimes() baseTimes {
	var wall time.Time
	if d.seeded {
		wall = seededBase
	} else {
		wall = d.now().In(d.loc)
		wall = time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), time.UTC)
	}
	b := baseTimes{wall: wall.UnixMilli()}
	// The instant whose wall clock in the session zone is wall.
	b.instant = time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), d.loc).UnixMilli()
	b.days = floorDiv(b.wall, 86400000)
	return b
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// fieldGen appends the values of one column for the rows of a span.
type fieldGen interface {
	append(b array.Builder, s rowSpan)
}

func newFieldGen(o *Options, c planner.Column, col int) (fieldGen, int64, error) {
	prefix := "fields." + c.Name + "."
	has := func(k string) bool { _, ok := o.t.Option(prefix + k); return ok }
	kind := "random"
	if v, ok := o.t.Option(prefix + "kind"); ok {
		kind = strings.ToLower(strings.TrimSpace(v))
	}
	z := nulls{col: col}
	if v, ok := o.t.Option(prefix + "null-rate"); ok {
		r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(r >= 0 && r <= 1) {
			return nil, 0, o.Err("option '%snull-rate' must be a number from 0 to 1, got %q", prefix, v)
		}
		if r > 0 && c.Type.NotNull {
			return nil, 0, o.Err("option '%snull-rate' is set, but column %s is NOT NULL", prefix, c.Name)
		}
		z.rate = r
	}
	typ := c.Type.Nullable()
	only := func(kind string, allowed ...string) error {
		for _, k := range datagenFieldKeys {
			if k != "kind" && k != "null-rate" && has(k) && !contains(allowed, k) {
				return o.Err("option '%s%s' does not apply to %s field %s of type %s", prefix, k, kind, c.Name, typ)
			}
		}
		return nil
	}
	switch kind {
	case "sequence":
		if err := only("a sequence", "start", "end"); err != nil {
			return nil, 0, err
		}
		return newSequence(o, c, prefix, z)
	case "random":
	default:
		return nil, 0, o.Err("option '%skind' must be 'random' or 'sequence', got %q", prefix, kind)
	}
	switch c.Type.Kind {
	case planner.Int, planner.BigInt:
		if err := only("a random", "min", "max"); err != nil {
			return nil, 0, err
		}
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if c.Type.Kind == planner.Int {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		min, err := o.Int64(prefix+"min", lo, lo, hi)
		if err != nil {
			return nil, 0, err
		}
		max, err := o.Int64(prefix+"max", hi, lo, hi)
		if err != nil {
			return nil, 0, err
		}
		if min > max {
			return nil, 0, o.Err("option '%smin' (%d) is greater than '%smax' (%d)", prefix, min, prefix, max)
		}
		return &randomInt{z: z, min: min, span: uint64(max) - uint64(min) + 1}, -1, nil
	case planner.Double:
		if err := only("a random", "min", "max"); err != nil {
			return nil, 0, err
		}
		min, err := floatOpt(o, prefix+"min", -math.MaxFloat64)
		if err != nil {
			return nil, 0, err
		}
		max, err := floatOpt(o, prefix+"max", math.MaxFloat64)
		if err != nil {
			return nil, 0, err
		}
		if min > max {
			return nil, 0, o.Err("option '%smin' (%v) is greater than '%smax' (%v)", prefix, min, prefix, max)
		}
		return &randomDouble{z: z, min: min, max: max}, -1, nil
	case planner.Decimal:
		if err := only("a random", "min", "max"); err != nil {
			return nil, 0, err
		}
		// Unscaled values are drawn as int64: DECIMAL(p, s) with p > 18 gets at most
		// 18 digits unless min and max say otherwise within int64.
		lim := int64(math.MaxInt64)
		if c.Type.Precision <= 18 {
			lim = int64(math.Pow10(c.Type.Precision)) - 1
		}
		min, err := decimalOpt(o, prefix+"min", c.Type, -lim)
		if err != nil {
			return nil, 0, err
		}
		max, err := decimalOpt(o, prefix+"max", c.Type, lim)
		if err != nil {
			return nil, 0, err
		}
		if min > max {
			return nil, 0, o.Err("option '%smin' is greater than '%smax'", prefix, prefix)
		}
		return &randomDecimal{randomInt: randomInt{z: z, min: min, span: uint64(max) - uint64(min) + 1}}, -1, nil
	case planner.Boolean:
		if err := only("a random"); err != nil {
			return nil, 0, err
		}
		return &randomBool{z: z}, -1, nil
	case planner.String:
		if err := only("a random", "length"); err != nil {
			return nil, 0, err
		}
		n, err := o.Int64(prefix+"length", 100, 0, 1<<20)
		if err != nil {
			return nil, 0, err
		}
		return &randomString{z: z, length: int(n)}, -1, nil
	case planner.Timestamp, planner.TimestampLTZ, planner.Date, planner.Time:
		if err := only("a random", "max-past"); err != nil {
			return nil, 0, err
		}
		past, err := o.Duration(prefix+"max-past", 0)
		if err != nil {
			return nil, 0, err
		}
		g := &randomTime{z: z, kind: c.Type.Kind, maxPast: past.Milliseconds(), prec: c.Type.Precision}
		if c.Type.Kind == planner.Time {
			g.unit, g.keep = planner.TimeUnitMillis(c.Type), 1
			for k := planner.TimeDigits(c.Type); k < 3; k++ {
				g.keep *= 10
			}
		}
		return g, -1, nil
	}
	return nil, 0, o.Err("datagen cannot generate column %s of type %s", c.Name, typ)
}

func floatOpt(o *Options, key string, def float64) (float64, error) {
	v, ok := o.t.Option(key)
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, o.Err("option '%s' must be a finite number, got %q", key, v)
	}
	return f, nil
}

// decimalOpt reads a decimal option as an unscaled int64 of the column's scale.
func decimalOpt(o *Options, key string, t planner.Type, def int64) (int64, error) {
	v, ok := o.t.Option(key)
	if !ok {
		return def, nil
	}
	n, err := format.ParseDecimal(strings.TrimSpace(v), t.Precision, t.Scale)
	if err != nil {
		return 0, o.Err("option '%s': %v", key, err)
	}
	hi, lo := n.HighBits(), n.LowBits()
	if !(hi == 0 && lo <= math.MaxInt64) && !(hi == -1 && lo > math.MaxInt64) {
		return 0, o.Err("option '%s' is too large for datagen (at most 18 digits)", key)
	}
	return int64(lo), nil
}
