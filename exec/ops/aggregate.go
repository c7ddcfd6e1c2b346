package ops

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// aggregate is the updating group aggregate. It folds a whole batch into its groups
// before emitting, so one batch yields at most one change per group: +I for a new group,
// -U/+U when its result changed, -D when its last row was retracted.
type aggregate struct {
	keyCols []int
	argCols []int // per aggregate; -1 for COUNT(*)
	accs    []accumulator
	out     exec.Output
	builder *array.RecordBuilder

	groups  groupIndex
	rows    []int64 // live input rows per group
	keys    []value // nKeys per group
	free    []int32
	stamp   []uint64 // batch number that last touched the group
	batchNo uint64

	touched    []int32
	wasLive    []bool
	before     []value // results of touched groups before the batch, nAggs per group
	readers    []func(int) value
	keyBuf     []byte
	keyScratch []value
}

var _ exec.Operator = (*aggregate)(nil)

// NewAggregate returns the operator for a plan's Aggregate node.
func NewAggregate(mem memory.Allocator, n *planner.Aggregate, out exec.Output) exec.Operator {
	in := n.Input.Schema()
	a := &aggregate{keyCols: n.Keys, out: out, builder: array.NewRecordBuilder(mem, exec.ArrowSchema(n.Schema()))}
	for _, call := range n.Aggs {
		var argType planner.Type
		if call.Arg >= 0 {
			argType = in[call.Arg].Type
		}
		a.argCols = append(a.argCols, call.Arg)
		a.accs = append(a.accs, newAccumulator(call, argType, n.Input.Updating()))
	}
	a.groups = newGroupIndex(n.Keys, in)
	return a
}

func (a *aggregate) Process(ctx context.Context, _ int, b exec.Batch) error {
	rows := b.Len()
	if rows == 0 {
		return nil
	}
	a.batchNo++
	a.touched, a.wasLive, a.before = a.touched[:0], a.wasLive[:0], a.before[:0]
	keyReaders, err := readers(b.Rec, a.keyCols, a.readers[:0])
	if err != nil {
		return err
	}
	argReaders, err := readers(b.Rec, a.argCols, nil)
	if err != nil {
		return err
	}
	for row := 0; row < rows; row++ {
		sign := int64(1)
		if b.Kind(row).IsRetraction() {
			sign = -1
		}
		g, ok := a.group(keyReaders, row, sign > 0)
		if !ok {
			continue // a retraction of a group we never saw: nothing to undo
		}
		a.touch(g)
		a.rows[g] += sign
		for i, acc := range a.accs {
			var v value
			if r := argReaders[i]; r != nil {
				v = r(row)
			}
			acc.add(g, v, sign)
		}
	}
	return a.emit(ctx)
}

func readers(rec arrow.Record, cols []int, out []func(int) value) ([]func(int) value, error) {
	for _, c := range cols {
		if c < 0 {
			out = append(out, nil)
			continue
		}
		r, err := reader(rec.Column(c))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// group returns the group of row, creating it when create is set.
func (a *aggregate) group(keyReaders []func(int) value, row int, create bool) (int32, bool) {
	key := a.keyScratch[:0]
	for _, r := range keyReaders {
		key = append(key, r(row))
	}
	a.keyScratch = key
	a.keyBuf = a.keyBuf[:0]
	g, ok := a.groups.find(key, &a.keyBuf)
	if ok || !create {
		return g, ok
	}
	if n := len(a.free); n > 0 {
		g, a.free = a.free[n-1], a.free[:n-1]
	} else {
		g = int32(len(a.rows))
		a.rows = append(a.rows, 0)
		a.stamp = append(a.stamp, 0)
		a.keys = append(a.keys, make([]value, len(a.keyCols))...)
		for _, acc := range a.accs {
			acc.grow(int(g) + 1)
		}
	}
	copy(a.keys[int(g)*len(a.keyCols):], key)
	a.groups.insert(key, a.keyBuf, g)
	return g, true
}

// touch records a group's results before the batch changes it.
func (a *aggregate) touch(g int32) {
	if a.stamp[g] == a.batchNo {
		return
	}
	a.stamp[g] = a.batchNo
	a.touched = append(a.touched, g)
	live := a.rows[g] > 0
	a.wasLive = append(a.wasLive, live)
	for _, acc := range a.accs {
		if live {
			a.before = append(a.before, acc.result(g))
		} else {
			a.before = append(a.before, value{})
		}
	}
}

func (a *aggregate) emit(ctx context.Context) error {
	var kinds []exec.RowKind
	nAggs := len(a.accs)
	after := make([]value, nAggs)
	for i, g := range a.touched {
		before := a.before[i*nAggs : (i+1)*nAggs]
		live := a.rows[g] > 0
		if live {
			for j, acc := range a.accs {
				after[j] = acc.result(g)
			}
		}
		switch {
		case !a.wasLive[i] && live:
			a.appendRow(g, after)
			kinds = append(kinds, exec.Insert)
		case a.wasLive[i] && live:
			if equalValues(before, after) {
				continue
			}
			a.appendRow(g, before)
			a.appendRow(g, after)
			kinds = append(kinds, exec.UpdateBefore, exec.UpdateAfter)
		case a.wasLive[i] && !live:
			a.appendRow(g, before)
			kinds = append(kinds, exec.Delete)
			a.drop(g)
		default:
			a.drop(g)
		}
	}
	rec := a.builder.NewRecord()
	defer rec.Release()
	if len(kinds) == 0 {
		return nil
	}
	return a.out.Emit(ctx, exec.Batch{Rec: rec, Kinds: kinds})
}

func (a *aggregate) appendRow(g int32, results []value) {
	nk := len(a.keyCols)
	for k := 0; k < nk; k++ {
		appendValue(a.builder.Field(k), a.keys[int(g)*nk+k])
	}
	for j, v := range results {
		appendValue(a.builder.Field(nk+j), v)
	}
}

// drop forgets an empty group.
func (a *aggregate) drop(g int32) {
	nk := len(a.keyCols)
	a.groups.remove(a.keys[int(g)*nk : (int(g)+1)*nk])
	for _, acc := range a.accs {
		acc.reset(g)
	}
	a.rows[g] = 0
	a.free = append(a.free, g)
}

func (a *aggregate) Close() error {
	a.builder.Release()
	return nil
}

func equalValues(a, b []value) bool {
	for i := range a {
		if a[i] != b[i] && !(a[i].f != a[i].f && b[i].f != b[i].f) { // NaN equals NaN here
			return false
		}
	}
	return true
}

// groupIndex maps grouping keys to group ids: by integer for one integer-like key, by
// encoded bytes otherwise.
type groupIndex interface {
	find(key []value, buf *[]byte) (int32, bool)
	insert(key []value, encoded []byte, g int32)
	remove(key []value)
}

func newGroupIndex(keys []int, in planner.Schema) groupIndex {
	if len(keys) == 1 {
		switch in[keys[0]].Type.Kind {
		case planner.Int, planner.BigInt, planner.Boolean, planner.Date, planner.Timestamp, planner.TimestampLTZ, planner.IntervalDayTime:
			return &intIndex{m: map[int64]int32{}, null: -1}
		}
	}
	return &bytesIndex{m: map[string]int32{}}
}

type intIndex struct {
	m    map[int64]int32
	null int32
}

func (x *intIndex) find(key []value, _ *[]byte) (int32, bool) {
	if key[0].null {
		return x.null, x.null >= 0
	}
	g, ok := x.m[key[0].i]
	return g, ok
}

func (x *intIndex) insert(key []value, _ []byte, g int32) {
	if key[0].null {
		x.null = g
		return
	}
	x.m[key[0].i] = g
}

func (x *intIndex) remove(key []value) {
	if key[0].null {
		x.null = -1
		return
	}
	delete(x.m, key[0].i)
}

type bytesIndex struct {
	m map[string]int32
}

func encodeKey(buf []byte, key []value) []byte {
	for _, v := range key {
		if v.null {
			buf = append(buf, 0)
			continue
		}
		buf = append(buf, 1)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v.i))
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.f))
		buf = binary.LittleEndian.AppendUint64(buf, v.d.LowBits())
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v.d.HighBits()))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v.s)))
		buf = append(buf, v.s...)
	}
	return buf
}

func (x *bytesIndex) find(key []value, buf *[]byte) (int32, bool) {
	*buf = encodeKey((*buf)[:0], key)
	g, ok := x.m[string(*buf)]
	return g, ok
}

func (x *bytesIndex) insert(_ []value, encoded []byte, g int32) { x.m[string(encoded)] = g }

func (x *bytesIndex) remove(key []value) { delete(x.m, string(encodeKey(nil, key))) }
