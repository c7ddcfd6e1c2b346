package ops

import (
	"context"
	"slices"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// aggregate is the updating group aggregate. It folds a mini-batch of input (at least a
// whole batch) into its groups before emitting, so one batch yields at most one change
// per group: +I for a new group, -U/+U when its result changed, -D when its last row was
// retracted.
type aggregate struct {
	keyCols  []int
	hashCols []int // the key columns that decide a group's key group
	calls    []planner.AggCall
	accs     []accumulator
	// stateOrder is the order the accumulators' state is stored in (see
	// planner.AggStateOrder): reordered calls find their state again.
	stateOrder []int
	out        exec.Output
	builder    *array.RecordBuilder
	appenders  []func(value) // per output column

	groups groupIndex
	rows   []int64 // live input rows per group
	keys   groupKeys
	free   []int32
	stamp  []uint64 // the emission that last touched the group
	kgs    []uint16 // key group per group

	state *KeyedState // nil: no checkpoints
	cache Cache
	mem   memory.Allocator

	// A window aggregate (window >= 0: the key that is window_end) holds its groups until
	// the watermark passes their window's end, then emits each once, final.
	window    int
	watermark int64
	late      int64             // rows dropped because their window had fired
	lateOut   exec.Output       // where late rows go, if they are routed to a table
	emitCtl   *emitControl      // nil: each window emits once, when it fires
	lateCols  []int             // the input columns they carry there
	byEnd     map[int64][]int32 // open groups by window end; nil until built
	// A sliced HOP window aggregate keeps a group per slide-long slice (its window_start
	// and window_end keys hold the slice's) and merges slices into windows as they fire,
	// finding each window's groups in an index of their own (windowGroups), emptied once
	// the window has fired.
	slide, size  int64
	startKey     int
	windowGroups groupIndex
	// A SESSION window aggregate merges the overlapping sessions of each key (sessions
	// holds each partition key's live groups; nil until built); its window_time key, if
	// it has one (timeKey >= 0), follows the session's end.
	session   bool
	sessions  map[string][]int32
	timeKey   int
	spill     spill
	dirtyFlag []bool // changed since the last checkpoint
	stored    []bool // its key may be in the store: a checkpoint wrote it, or it was read back
	dirty     []int32
	dropped   [][]byte     // state keys of groups deleted since the last checkpoint
	scratch   deltaScratch // SnapshotAsync's encoding of the changed groups
	spare     spareDelta   // the last checkpoint's encoding, back from its write
	lastBytes int64        // written by the last snapshot
	lastKeys  int64
	batchNo   uint64

	pending int     // input rows folded in since the last emission
	touched []int32 // groups changed since the last emission, in order
	wasLive []bool
	before  []value // results of touched groups before they changed, nAggs per group
	results []value // scratch for one group's results

	kinds      []exec.RowKind
	signs      []int8
	filtered   []int32 // groups of the rows a call's FILTER lets through, -1 for the others
	tupleBuf   []byte
	hashes     []uint64
	groupBuf   []int32
	keyReaders []func(int) value
	intCols    [][]int64 // assignGroups' scratch
	keyScratch []value
	keyBuf     []byte
}

var (
	_ exec.Operator = (*aggregate)(nil)
	_ exec.Flusher  = (*aggregate)(nil)
	_ exec.Finisher = (*aggregate)(nil)
)

// NewAggregate returns the operator for a plan's Aggregate node; ks is where it keeps
// its checkpointed state (nil without checkpoints), cache how many groups stay in memory.
func NewAggregate(mem memory.Allocator, n *planner.Aggregate, out exec.Output, ks *KeyedState, cache Cache) exec.Operator {
	in := n.Input.Schema()
	a := &aggregate{keyCols: n.Keys, hashCols: n.PartitionKeys(), out: out, state: ks, cache: cache, mem: mem, window: -1, timeKey: -1, watermark: exec.MinWatermark,
		builder: array.NewRecordBuilder(mem, exec.ArrowSchema(n.Schema()))}
	if n.Window != nil {
		a.window = n.WindowEnd
		a.cache.MaxGroups = 0 // windows fire from memory
		a.startKey = n.WindowStart
		if n.Sliced() {
			a.slide, a.size = n.Window.Slide, n.Window.Size
			a.windowGroups = newGroupIndex(n.Keys, in)
		}
		a.session, a.timeKey = n.Window.Kind == "SESSION", n.WindowTimeKey()
		if n.Emit.On() {
			a.emitCtl = newEmitControl(n.Emit)
		}
	}
	a.stateOrder = planner.AggStateOrder(n)
	for _, call := range n.Aggs {
		a.calls = append(a.calls, call)
		a.accs = append(a.accs, newAccumulator(call, in, n.Input.Updating()))
	}
	shareDistinct(a.accs, a.calls)
	for _, f := range a.builder.Fields() {
		a.appenders = append(a.appenders, appender(f))
	}
	a.groups = newGroupIndex(n.Keys, in)
	a.keys = newGroupKeys(n.Keys, in)
	a.batchNo = 1
	return a
}

// miniBatchRows is how many input rows the aggregate folds in at most before it emits.
// Its task flushes it sooner: whenever the input is idle, and at least every flush
// interval, so latency stays low; state held back is bounded by the number of groups.
const miniBatchRows = 256 << 10

func (a *aggregate) Process(ctx context.Context, _ int, b exec.Batch) error {
	if a.window >= 0 {
		return a.processWindowed(ctx, b)
	}
	rows := b.Len()
	if rows == 0 {
		return nil
	}
	a.signs = a.signs[:0]
	if b.Kinds != nil {
		for _, k := range b.Kinds {
			a.signs = append(a.signs, rowSign(k))
		}
	}
	signs := a.signs
	if b.Kinds == nil {
		signs = nil
	}
	groups, err := a.assignGroups(b.Rec, signs)
	if err != nil {
		return err
	}
	for i, g := range groups {
		if g < 0 {
			continue
		}
		a.touch(g)
		if signs == nil {
			a.rows[g]++
		} else {
			a.rows[g] += int64(signs[i])
		}
	}
	if err := a.updateAccs(b.Rec, groups, signs); err != nil {
		return err
	}
	if a.pending += rows; a.pending >= miniBatchRows {
		return a.Flush(ctx)
	}
	return nil
}

// Flush emits the changes folded in since the last emission, then makes room in the
// cache if it is full. A window aggregate emits on watermarks only.
func (a *aggregate) Flush(ctx context.Context) error {
	if a.emitCtl != nil {
		return a.flushWindows(ctx)
	}
	if a.window >= 0 {
		return nil
	}
	if err := a.emit(ctx); err != nil {
		return err
	}
	return a.evictIfFull()
}

// Finish emits what remains at the end of input.
func (a *aggregate) Finish(ctx context.Context) error { return a.emit(ctx) }

func rowSign(k exec.RowKind) int8 {
	if k.IsRetraction() {
		return -1
	}
	return 1
}

// assignGroups returns the group of every row, creating groups for inserted rows; a
// retraction of a group that does not exist gets -1 (there is nothing to undo).
func (a *aggregate) assignGroups(rec arrow.Record, signs []int8) ([]int32, error) {
	a.hashes = a.hashes[:0]
	if err := a.loadSpilled(rec); err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	groups := growTo(a.groupBuf[:0], n)
	a.groupBuf = groups
	if idx, ok := a.groups.(*intIndex); ok {
		if col, ok := rec.Column(a.keyCols[0]).(*array.Int64); ok && col.NullN() == 0 {
			key := []value{{}}
			for i, k := range col.Int64Values() {
				g, found := idx.m[k]
				if !found {
					g = -1
					if signs == nil || signs[i] > 0 {
						key[0].i = k
						g = a.newGroup(key, nil, a.keyGroup(rec, i))
					}
				}
				groups[i] = g
			}
			return groups, nil
		}
	}
	if idx, ok := a.groups.(*intsIndex); ok {
		if cols, ok := int64Columns(rec, a.keyCols, a.intCols[:0]); ok {
			a.intCols = cols
			key := slices.Grow(a.keyScratch[:0], len(cols))[:len(cols)]
			a.keyScratch = key
			for i := range n {
				var k intsKey
				for c, v := range cols {
					k.v[c] = v[i]
				}
				g, found := idx.m[k]
				if !found {
					g = -1
					if signs == nil || signs[i] > 0 {
						for c := range cols {
							key[c] = value{i: k.v[c]}
						}
						g = a.newGroup(key, nil, a.keyGroup(rec, i))
					}
				}
				groups[i] = g
			}
			return groups, nil
		}
	}
	keyReaders, err := readers(rec, a.keyCols, a.keyReaders[:0])
	if err != nil {
		return nil, err
	}
	a.keyReaders = keyReaders
	for i := 0; i < n; i++ {
		key := a.keyScratch[:0]
		for _, r := range keyReaders {
			key = append(key, r(i))
		}
		a.keyScratch = key
		g, found := a.groups.find(key, &a.keyBuf)
		if !found {
			g = -1
			if signs == nil || signs[i] > 0 {
				g = a.newGroup(key, a.keyBuf, a.keyGroup(rec, i))
			}
		}
		groups[i] = g
	}
	return groups, nil
}

// int64Columns appends the values of rec's columns cols to out if each is a BIGINT or a
// TIMESTAMP without NULLs: group keys read straight from the buffers (q5's auction and
// window).
func int64Columns(rec arrow.Record, cols []int, out [][]int64) ([][]int64, bool) {
	for _, c := range cols {
		switch col := rec.Column(c).(type) {
		case *array.Int64:
			if col.NullN() > 0 {
				return nil, false
			}
			out = append(out, col.Int64Values())
		case *array.Timestamp:
			if col.NullN() > 0 {
				return nil, false
			}
			v := col.TimestampValues() // arrow.Timestamp is an int64
			out = append(out, unsafe.Slice((*int64)(unsafe.SliceData(v)), len(v)))
		default:
			return nil, false
		}
	}
	return out, true
}

func readers(rec arrow.Record, cols []int, out []func(int) value) ([]func(int) value, error) {
	for _, c := range cols {
		r, err := reader(rec.Column(c))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// keyGroup returns the key group of row i of rec, hashing the batch's keys once.
func (a *aggregate) keyGroup(rec arrow.Record, i int) uint16 {
	if len(a.hashes) == 0 {
		a.hashes = exec.HashRows(rec, a.hashCols, a.hashes)
	}
	return uint16(exec.KeyGroup(a.hashes[i]))
}

// newGroup creates a group for key (encoded is its bytesIndex form, if any) in key
// group kg.
func (a *aggregate) newGroup(key []value, encoded []byte, kg uint16) int32 {
	g := a.allocGroup(key, kg)
	a.groups.insert(key, encoded, g)
	return g
}

// allocGroup makes room for a group of key, in no index yet.
func (a *aggregate) allocGroup(key []value, kg uint16) int32 {
	var g int32
	if n := len(a.free); n > 0 {
		g, a.free = a.free[n-1], a.free[:n-1]
	} else {
		g = int32(len(a.rows))
		a.rows = append(a.rows, 0)
		a.stamp = append(a.stamp, 0)
		a.kgs = append(a.kgs, 0)
		a.dirtyFlag = append(a.dirtyFlag, false)
		a.stored = append(a.stored, false)
		a.keys.grow()
		for _, acc := range a.accs {
			acc.grow(int(g) + 1)
		}
	}
	a.keys.set(g, key)
	a.kgs[g] = kg
	a.stored[g] = false
	return g
}

// touch records a group's results before the batch changes it.
func (a *aggregate) touch(g int32) {
	if a.stamp[g] == a.batchNo {
		return
	}
	a.stamp[g] = a.batchNo
	a.touched = append(a.touched, g)
	if !a.dirtyFlag[g] {
		a.dirtyFlag[g] = true
		a.dirty = append(a.dirty, g)
	}
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
	if len(a.touched) == 0 {
		return nil
	}
	defer func() {
		a.batchNo++
		a.pending = 0
		a.touched, a.wasLive, a.before = a.touched[:0], a.wasLive[:0], a.before[:0]
	}()
	kinds := a.kinds[:0]
	for _, f := range a.builder.Fields() {
		f.Reserve(2 * len(a.touched))
	}
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
	a.kinds = kinds
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
		a.appenders[k](a.keys.value(g, k))
	}
	for j, v := range results {
		a.appenders[nk+j](v)
	}
}

// markDirty lists group g for the next checkpoint.
func (a *aggregate) markDirty(g int32) {
	if !a.dirtyFlag[g] {
		a.dirtyFlag[g] = true
		a.dirty = append(a.dirty, g)
	}
}

// drop forgets a group and, if a checkpoint may hold it, records its deletion for the
// next one. (A window that opens and fires between two checkpoints writes nothing.)
func (a *aggregate) drop(g int32) {
	if a.state != nil && a.stored[g] {
		a.dropped = append(a.dropped, a.stateKey(g))
	}
	a.forget(g)
}

func (a *aggregate) Close() error {
	a.builder.Release()
	if a.spill.scratch != nil {
		return a.spill.scratch.Close()
	}
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
// up to three integers for as many such keys (a window's auction, window_start and
// window_end), by encoded bytes otherwise.
type groupIndex interface {
	find(key []value, buf *[]byte) (int32, bool)
	insert(key []value, encoded []byte, g int32)
	remove(key []value)
	reset() // removes every key
}

func newGroupIndex(keys []int, in planner.Schema) groupIndex {
	ints := intKeys(keys, in)
	switch {
	case ints && len(keys) == 1:
		return &intIndex{m: map[int64]int32{}, null: -1}
	case ints && len(keys) <= len(intsKey{}.v):
		return &intsIndex{m: map[intsKey]int32{}}
	}
	return &bytesIndex{m: map[string]int32{}}
}

// intsKey is a key of up to three integers, which NULLs mark in a bit each.
type intsKey struct {
	v     [3]int64
	nulls uint8
}

func intsKeyOf(key []value) intsKey {
	var k intsKey
	for i, v := range key {
		if v.null {
			k.nulls |= 1 << i
		} else {
			k.v[i] = v.i
		}
	}
	return k
}

type intsIndex struct{ m map[intsKey]int32 }

func (x *intsIndex) find(key []value, _ *[]byte) (int32, bool) {
	g, ok := x.m[intsKeyOf(key)]
	return g, ok
}

func (x *intsIndex) insert(key []value, _ []byte, g int32) { x.m[intsKeyOf(key)] = g }

func (x *intsIndex) remove(key []value) { delete(x.m, intsKeyOf(key)) }

func (x *intsIndex) reset() { clear(x.m) }

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

func (x *intIndex) reset() { clear(x.m); x.null = -1 }

type bytesIndex struct {
	m map[string]int32
}

// encodeKey appends the grouping key's values, each self-delimiting (appendValueBytes),
// so equal keys and only equal keys encode the same.
func encodeKey(buf []byte, key []value) []byte {
	for _, v := range key {
		buf = appendValueBytes(buf, v)
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

func (x *bytesIndex) reset() { clear(x.m) }

// updateAccs folds a batch into every call's accumulator: row i belongs to group
// groups[i] with sign signs[i]. A call with a FILTER sees only the rows whose condition is
// TRUE; COUNT(DISTINCT a, b, ...) sees each row's arguments as one value.
func (a *aggregate) updateAccs(rec arrow.Record, groups []int32, signs []int8) error {
	for i, acc := range a.accs {
		call := a.calls[i]
		if d, ok := acc.(*distinctInts); ok && d.share != nil {
			if d.slot == 0 { // the first member updates them all
				if err := d.share.update(rec, rec.Column(call.Arg), groups, signs); err != nil {
					return err
				}
			}
			continue
		}
		gs := groups
		if f := call.FilterCol(); f >= 0 {
			gs = filterGroups(growTo(a.filtered[:0], len(groups)), groups, rec.Column(f))
			a.filtered = gs
		}
		if p, ok := acc.(pairUpdater); ok {
			if err := p.updatePairs(gs, signs, rec.Column(call.Arg), rec.Column(call.More[0])); err != nil {
				return err
			}
			continue
		}
		if len(call.More) > 0 {
			if err := a.updateTuples(acc.(rowAdder), call, rec, gs, signs); err != nil {
				return err
			}
			continue
		}
		var col arrow.Array
		if call.Arg >= 0 {
			col = rec.Column(call.Arg)
		}
		if err := acc.update(gs, signs, col); err != nil {
			return err
		}
	}
	return nil
}

// filterGroups writes groups into dst, with -1 for every row whose cond is not TRUE.
func filterGroups(dst, groups []int32, cond arrow.Array) []int32 {
	c, ok := cond.(*array.Boolean)
	for i, g := range groups {
		if !ok || c.IsNull(i) || !c.Value(i) {
			g = -1
		}
		dst[i] = g
	}
	return dst
}

// updateTuples feeds acc each row's arguments encoded as one value, NULL when any is
// NULL (such a row is not counted, as in Flink).
func (a *aggregate) updateTuples(acc rowAdder, call planner.AggCall, rec arrow.Record, groups []int32, signs []int8) error {
	read, err := readers(rec, append([]int{call.Arg}, call.More...), nil)
	if err != nil {
		return err
	}
	for i, g := range groups {
		if g < 0 {
			continue
		}
		buf, null := a.tupleBuf[:0], false
		for _, r := range read {
			v := r(i)
			null = null || v.null
			buf = appendValueBytes(buf, v)
		}
		a.tupleBuf = buf
		sign := int64(1)
		if signs != nil {
			sign = int64(signs[i])
		}
		if null {
			acc.add(g, value{null: true}, sign)
		} else {
			acc.add(g, value{s: string(buf)}, sign)
		}
	}
	return nil
}
