package exec

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// exchange is a task's output to the next stages: it routes each batch to the channels
// of the downstream tasks of every stage it feeds, by that stage's partitioning, and
// broadcasts watermarks, barriers and ends to all of them. A stage feeding several
// (a source shared by the INSERTs of a statement set) sends each of them every batch.
type exchange struct {
	pool   *BufferPool // of the split batches' buffers, which come back as they are released
	routes []route
	self   int

	hashes []uint64

	blocked *int64 // time spent waiting on a full channel (back-pressure), or nil
}

// route is the exchange's way to one downstream stage.
type route struct {
	outs      []outlet // by downstream task; zero where not connected
	partition Partition
	keys      []int
	sel       [][]int32
}

var _ WatermarkOutput = (*exchange)(nil)

// outlet is one input channel of a downstream task: a message goes into ch, then the
// channel's index among the task's inputs into the task's ready queue, which the task
// reads to learn which input has a message (see task.runInputs).
type outlet struct {
	ch    chan message
	ready chan int
	index int
}

func newExchange(mem memory.Allocator, self int) *exchange {
	return &exchange{pool: NewBufferPool(mem, true), self: self}
}

// addRoute connects the exchange to one more downstream stage, whose tasks' channels
// outs are.
func (e *exchange) addRoute(outs []outlet, p Partition, keys []int) {
	e.routes = append(e.routes, route{outs: outs, partition: p, keys: keys, sel: make([][]int32, len(outs))})
}

// Emit sends b downstream; the channels' readers release what they receive.
func (e *exchange) Emit(ctx context.Context, b Batch) error {
	for i := range e.routes {
		if err := e.emit(ctx, &e.routes[i], b); err != nil {
			return err
		}
	}
	return nil
}

func (e *exchange) emit(ctx context.Context, r *route, b Batch) error {
	if r.partition == Forward { // the same task's rows in their order: splits stay
		return e.send(ctx, r.outs[e.self], b)
	}
	b.Splits = nil // indexes of several tasks' splits would mix
	if r.partition == Gather || len(r.outs) == 1 {
		return e.send(ctx, r.outs[0], b)
	}
	n := b.Len()
	e.hashes = HashRows(b.Rec, r.keys, e.hashes[:0])
	for i := range r.sel {
		r.sel[i] = r.sel[i][:0]
	}
	for row := 0; row < n; row++ {
		t := TaskOfKeyGroup(KeyGroup(e.hashes[row]), len(r.outs))
		r.sel[t] = append(r.sel[t], int32(row))
	}
	for t, sel := range r.sel {
		switch len(sel) {
		case 0:
			continue
		case n:
			return e.send(ctx, r.outs[t], b)
		}
		part := Batch{Rec: TakeRecord(e.pool, b.Rec, sel)}
		if b.Kinds != nil {
			part.Kinds = make([]RowKind, len(sel))
			for i, r := range sel {
				part.Kinds[i] = b.Kinds[r]
			}
		}
		if err := e.sendOwned(ctx, r.outs[t], part); err != nil {
			return err
		}
	}
	return nil
}

// send passes a batch the caller keeps: the channel gets its own reference. Kinds are
// copied, since the caller may reuse them; the origin stays behind (see Origin). The
// sender, and every stage it feeds, may read the batch at once: the null counts Arrow
// computes on first use, and then caches, are computed before it goes.
func (e *exchange) send(ctx context.Context, ch outlet, b Batch) error {
	if b.Rec != nil {
		for _, col := range b.Rec.Columns() {
			settleNulls(col)
		}
	}
	b.Retain()
	b.Origin = nil
	if b.Kinds != nil {
		b.Kinds = append([]RowKind(nil), b.Kinds...)
	}
	return e.sendOwned(ctx, ch, b)
}

// settleNulls makes an array and the arrays it holds compute their null counts.
func settleNulls(a arrow.Array) {
	a.NullN()
	switch a := a.(type) {
	case *array.Struct:
		for i := range a.NumField() {
			settleNulls(a.Field(i))
		}
	case array.ListLike:
		settleNulls(a.ListValues())
	case *array.Dictionary:
		settleNulls(a.Dictionary())
	}
}

func (e *exchange) sendOwned(ctx context.Context, ch outlet, b Batch) error {
	if err := e.put(ctx, ch, message{batch: b}); err != nil {
		b.Release()
		return err
	}
	return nil
}

// put sends m to o, blocking while its channel is full (back-pressure, which only then
// costs a clock reading), and tells the task that it has a message. The ready queue has
// room for every message the task's input channels can hold, so telling never blocks
// for long.
func (e *exchange) put(ctx context.Context, o outlet, m message) error {
	select { // without waiting first: a select on one channel locks only that one
	case o.ch <- m:
	default:
		start := time.Now()
		select {
		case o.ch <- m:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if e.blocked != nil {
			*e.blocked += int64(time.Since(start))
		}
	}
	select {
	case o.ready <- o.index:
		return nil
	default:
		select {
		case o.ready <- o.index:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// EmitWatermark sends a watermark to every downstream task, after the batches before it.
func (e *exchange) EmitWatermark(ctx context.Context, wm int64) error {
	return e.broadcast(ctx, message{watermark: wm, isWatermark: true})
}

// broadcast sends a barrier, a watermark or an end to every downstream task.
func (e *exchange) broadcast(ctx context.Context, m message) error {
	for _, r := range e.routes {
		for _, o := range r.outs {
			if o.ch == nil {
				continue
			}
			if err := e.put(ctx, o, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// KeyGroup maps a key's hash to its key group.
func KeyGroup(hash uint64) int { return int(hash % MaxParallelism) }

// TaskOfKeyGroup returns the task that owns key group kg among parallelism tasks, as
// Flink assigns contiguous ranges of key groups.
func TaskOfKeyGroup(kg, parallelism int) int { return kg * parallelism / MaxParallelism }

// HashRows appends the hash of the key columns of every row of rec to out. The hash is
// stable across processes: keyed state is stored by the key group it gives.
func HashRows(rec arrow.Record, keys []int, out []uint64) []uint64 {
	base := len(out)
	n := int(rec.NumRows())
	// Room for all n at once: appended one at a time, the hashes of a window's batch of
	// millions of rows (q5's, at the final watermark) doubled their way there in fresh
	// memory, 0.86 s of q5's 12 s of CPU.
	out = slices.Grow(out, n)[:base+n]
	clear(out[base:])
	out2 := out
	out = out[base:]
	for _, k := range keys {
		col := rec.Column(k)
		switch c := col.(type) {
		case *array.Int64:
			for i, v := range c.Int64Values() {
				out[i] = mix(out[i], uint64(v))
			}
		case *array.Int32:
			for i, v := range c.Int32Values() {
				out[i] = mix(out[i], uint64(v))
			}
		case *array.Timestamp:
			for i, v := range c.TimestampValues() {
				out[i] = mix(out[i], uint64(v))
			}
		case *array.Date32:
			for i, v := range c.Date32Values() {
				out[i] = mix(out[i], uint64(v))
			}
		case *array.Time32:
			for i, v := range c.Time32Values() {
				out[i] = mix(out[i], uint64(v))
			}
		case *array.Float64:
			for i, v := range c.Float64Values() {
				out[i] = mix(out[i], math.Float64bits(v))
			}
		case *array.String:
			for i := 0; i < n; i++ {
				out[i] = mix(out[i], fnv1a(c.Value(i)))
			}
		default:
			for i := 0; i < n; i++ {
				out[i] = mix(out[i], fnv1a(col.ValueStr(i)))
			}
		}
		if col.NullN() > 0 {
			for i := 0; i < n; i++ {
				if col.IsNull(i) {
					out[i] = mix(out[i]^0x9e3779b97f4a7c15, 0)
				}
			}
		}
	}
	return out2
}

// fnv1a is the 64-bit FNV-1a hash of s.
func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix folds v into h (a 64-bit finalizer, so that sequential keys spread evenly).
func mix(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb3fe1a85ec53
	h ^= h >> 33
	return h
}

// KeyGroupRange returns the key groups [first, last] that task owns among parallelism
// tasks: those TaskOfKeyGroup assigns to it.
func KeyGroupRange(task, parallelism int) (first, last int) {
	first = (task*MaxParallelism + parallelism - 1) / parallelism
	last = ((task+1)*MaxParallelism+parallelism-1)/parallelism - 1
	return first, last
}
