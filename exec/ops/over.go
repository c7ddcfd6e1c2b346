package ops

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// over is the operator of a plan's OverAggregate. Each row waits, in its partition's
// pending rows, for the watermark to pass its time; then the partitions' ready rows are
// taken in time order and each is emitted with the aggregates of its frame. The
// accumulators are the group aggregate's, one group per partition: a row entering the
// frame is added, a row leaving it retracted. A bounded frame keeps the rows it still
// needs (the Preceding rows before the next one, or those within Preceding ms of the
// last time), an unbounded one only its accumulators. With RANGE, the rows of one time
// (peers) enter together and share their results.
//
// A row at or before the time of the last row its partition emitted is late, as in
// Flink: dropped and counted. A row with a NULL time is in no event time and dropped.
type over struct {
	n         *planner.OverAggregate
	width     int // input columns
	partCols  []int
	timeCol   int
	preceding int64
	bounded   bool

	calls  []overCall
	accs   []accumulator
	adders []rowAdder
	groups int32

	out     exec.Output
	changes *changes

	parts     map[string]*overPart // by encoded partition key
	pending   timeHeap[*overPart]  // every partition's pending rows, earliest first
	seq       int64                // arrival number of the next row
	watermark int64
	late      int64

	state     *KeyedState
	dirty     []*overPart
	lastBytes int64
	lastKeys  int64

	hashes  []uint64
	keyBuf  []byte
	scratch []value
}

// overPart is one partition: its accumulators' group, the rows waiting for the
// watermark (by time, then arrival) and the rows in its frame (oldest first).
type overPart struct {
	enc     string
	kg      uint16
	g       int32
	last    int64 // the time of the last row emitted; math.MinInt64 before any
	pending []*overRow
	frame   []*overRow
	dirty   bool
}

type overRow struct {
	t    int64 // its time
	seq  int64
	vals []value
}

// overCall is where an aggregate call reads its argument, filter and (LAG's) default:
// input columns, -1 for none; and LAG's history, nil for an aggregate.
type overCall struct {
	arg, filter, def int
	lag              *lag
}

var (
	_ exec.Operator         = (*over)(nil)
	_ exec.WatermarkHandler = (*over)(nil)
	_ exec.LateCounter      = (*over)(nil)
	_ exec.Closer           = (*over)(nil)
)

// NewOver returns the operator for a plan's OverAggregate node; ks is where it keeps
// its checkpointed state (nil without checkpoints).
func NewOver(mem memory.Allocator, n *planner.OverAggregate, out exec.Output, ks *KeyedState) (exec.Operator, error) {
	in := n.Input.Schema()
	o := &over{n: n, width: len(in), partCols: n.PartitionBy, timeCol: n.TimeCol, preceding: n.Preceding,
		bounded: !n.Unbounded(), out: out, parts: map[string]*overPart{}, watermark: exec.MinWatermark, state: ks}
	for _, call := range n.Aggs {
		if call.Fn == planner.AggLag {
			if o.bounded || len(call.More) != 1 {
				return nil, fmt.Errorf("LAG needs an unbounded frame and a default column")
			}
			o.calls = append(o.calls, overCall{arg: call.Arg, filter: -1, def: call.More[0], lag: &lag{offset: int(call.Offset)}})
			o.accs, o.adders = append(o.accs, nil), append(o.adders, nil)
			continue
		}
		o.calls = append(o.calls, overCall{arg: call.Arg, filter: call.FilterCol(), def: -1})
		if len(call.More) > 0 {
			return nil, fmt.Errorf("%s over a window takes one argument", call.Fn)
		}
		acc := newAccumulator(call, in, o.bounded)
		adder, ok := acc.(rowAdder)
		if !ok {
			return nil, fmt.Errorf("%s cannot be computed over a window", call.Fn)
		}
		o.accs, o.adders = append(o.accs, acc), append(o.adders, adder)
	}
	o.changes = newChanges(mem, n.Schema())
	o.scratch = make([]value, o.width)
	return o, nil
}

// Process puts a batch's rows into their partitions' pending rows.
func (o *over) Process(_ context.Context, _ int, b exec.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	reads, err := readers(b.Rec, allColumns(o.width), nil)
	if err != nil {
		return err
	}
	o.hashes = exec.HashRows(b.Rec, o.partCols, o.hashes[:0])
	row := o.scratch
	for i := 0; i < n; i++ {
		if b.Kind(i).IsRetraction() {
			return fmt.Errorf("%s reads insert-only input, got a %s row", o, b.Kind(i))
		}
		for c, read := range reads {
			row[c] = read(i)
		}
		t := row[o.timeCol]
		if t.null {
			continue
		}
		p := o.partition(row, uint16(exec.KeyGroup(o.hashes[i])))
		if t.i <= p.last {
			o.late++
			continue
		}
		x := &overRow{t: t.i, seq: o.seq, vals: ownedRow(row)}
		o.seq++
		o.addPending(p, x)
		o.markDirty(p)
	}
	return nil
}

// partition returns the partition of row, made if it is new.
func (o *over) partition(row []value, kg uint16) *overPart {
	o.keyBuf = o.keyBuf[:0]
	for _, c := range o.partCols {
		o.keyBuf = appendValueBytes(o.keyBuf, row[c])
	}
	if p := o.parts[string(o.keyBuf)]; p != nil {
		return p
	}
	p := o.newPart(string(o.keyBuf), kg)
	o.parts[p.enc] = p
	return p
}

// addPending puts x among p's pending rows, after those of its time or earlier.
func (o *over) addPending(p *overPart, x *overRow) {
	if k := len(p.pending); k == 0 || p.pending[k-1].t <= x.t {
		p.pending = append(p.pending, x)
	} else {
		at := sort.Search(k, func(i int) bool { return p.pending[i].t > x.t })
		p.pending = slices.Insert(p.pending, at, x)
	}
	o.pending.push(timed[*overPart]{t: x.t, seq: x.seq, p: p})
}

// newPart makes a partition with a fresh accumulator group.
func (o *over) newPart(enc string, kg uint16) *overPart {
	p := &overPart{enc: enc, kg: kg, g: o.groups, last: math.MinInt64}
	o.groups++
	for k, acc := range o.accs {
		if l := o.calls[k].lag; l != nil {
			l.grow(int(o.groups))
		} else {
			acc.grow(int(o.groups))
		}
	}
	return p
}

// overBatchRows bounds the rows of one output batch.
const overBatchRows = 4096

// ProcessWatermark emits the rows the watermark passed, in time order (by arrival for
// equal times), each with its frame's aggregates, and passes the watermark on.
func (o *over) ProcessWatermark(ctx context.Context, wm int64) error {
	o.watermark = max(o.watermark, wm)
	for len(o.pending) > 0 && o.pending[0].t <= o.watermark {
		e := o.pending.pop()
		p := e.p
		if !o.n.Rows && e.t <= p.last {
			continue // a peer of a row that fired with the rows of its time
		}
		k := 1
		if !o.n.Rows {
			for k < len(p.pending) && p.pending[k].t == e.t {
				k++
			}
		}
		o.fire(p, p.pending[:k])
		p.pending = dropFront(p.pending, k)
		o.markDirty(p)
		if len(o.changes.kinds) >= overBatchRows {
			// A watermark that passes many rows (the end of input) emits them in batches.
			if err := o.changes.emit(ctx, o.out); err != nil {
				return err
			}
		}
	}
	if err := o.changes.emit(ctx, o.out); err != nil {
		return err
	}
	return o.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
}

// fire brings rows, the next of p's pending rows to enter its frame (one, or the rows
// of one time for RANGE), into the frame and emits them with its aggregates.
func (o *over) fire(p *overPart, rows []*overRow) {
	t := rows[0].t
	if o.bounded && !o.n.Rows {
		gone := 0
		for gone < len(p.frame) && p.frame[gone].t < t-o.preceding {
			o.apply(p, p.frame[gone], -1)
			gone++
		}
		p.frame = dropFront(p.frame, gone)
	}
	for _, x := range rows {
		o.apply(p, x, 1)
	}
	for _, x := range rows {
		for c, v := range x.vals {
			o.changes.col[c](v)
		}
		for k, acc := range o.accs {
			if l := o.calls[k].lag; l != nil {
				o.changes.col[o.width+k](l.result(p.g))
			} else {
				o.changes.col[o.width+k](acc.result(p.g))
			}
		}
		o.changes.row(exec.Insert)
	}
	if o.bounded {
		p.frame = append(p.frame, rows...)
		if o.n.Rows && int64(len(p.frame)) > o.preceding {
			// The next row's frame holds the Preceding rows before it.
			o.apply(p, p.frame[0], -1)
			p.frame = dropFront(p.frame, 1)
		}
	}
	p.last = t
}

// dropFront removes the first n rows of rows, letting go of them.
func dropFront(rows []*overRow, n int) []*overRow {
	if n == 0 {
		return rows
	}
	clear(rows[:n])
	rows = rows[n:]
	if len(rows) == 0 {
		return nil
	}
	return rows
}

// apply adds (sign 1) or retracts (-1) a row in its partition's accumulators.
func (o *over) apply(p *overPart, x *overRow, sign int64) {
	for k, call := range o.calls {
		if call.lag != nil {
			call.lag.push(p.g, x.vals[call.arg], x.vals[call.def])
			continue
		}
		if f := call.filter; f >= 0 && (x.vals[f].null || x.vals[f].i == 0) {
			continue
		}
		var v value
		if call.arg >= 0 {
			v = x.vals[call.arg]
		}
		o.adders[k].add(p.g, v, sign)
	}
}

// LateRows counts the rows dropped for arriving at or before the time of the last row
// their partition emitted.
func (o *over) LateRows() int64 { return o.late }

// Close releases the builder.
func (o *over) Close() error {
	o.changes.release()
	return nil
}

func (o *over) String() string { return fmt.Sprintf("over(%s)", o.n.Describe()) }
