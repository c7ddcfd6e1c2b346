package ops

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// temporalJoin is the operator of a plan's TemporalJoin: input 0 is the left (probe)
// side, input 1 the versioned table's changelog. Each key keeps its left rows waiting
// for the watermark (by time, then arrival) and its versions (by version time). When
// the watermark passes a left row's time, the row joins its key's latest version at or
// before that time, unless that version is a deletion; a LEFT join pads it otherwise.
//
// A +I or +U of the versioned side is a version of its key from its time on, replacing
// a version of the same time; a -D ends the key's versions at its time; a -U is skipped,
// as the +U after it replaces it. Once the watermark passes a version's time, versions
// before the latest one at or before the watermark can match no waiting row and are
// dropped. A left row at or before the watermark when it arrives joins at once, with the
// versions kept.
type temporalJoin struct {
	n           *planner.TemporalJoin
	lw, rw      int // left and right widths
	lkeys       []int
	rkeys       []int
	ltime       int
	rtime       int
	outer       bool
	residual    expr.Predicate
	residualSQL string
	pairs       *array.RecordBuilder
	pairAdd     []func(value)
	mem         memory.Allocator
	out         exec.Output
	changes     *changes

	keys      map[string]*tjKey
	pending   timeHeap[*tjKey] // every key's waiting left rows, earliest first
	seq       int64            // arrival number of the next row
	watermark int64

	state     *KeyedState
	dirty     []*tjKey
	lastBytes int64
	lastKeys  int64

	hashes  []uint64
	keyBuf  []byte
	scratch []value
	fired   []tjFired
	touched []*tjKey
}

// tjKey is one key's waiting left rows and versions.
type tjKey struct {
	enc      string
	kg       uint16
	left     []*tjRow // by time, then arrival
	versions []*tjRow // by time
	dirty    bool
	touched  bool
}

// tjRow is a left row or a version: its time, arrival number and values; a deletion
// is a version that ends its key's previous ones.
type tjRow struct {
	t       int64
	seq     int64
	deleted bool
	vals    []value
}

// tjFired is a left row the watermark passed, with the version it joins (nil: none).
type tjFired struct {
	left    []value
	version *tjRow
}

var (
	_ exec.Operator         = (*temporalJoin)(nil)
	_ exec.WatermarkHandler = (*temporalJoin)(nil)
	_ exec.Closer           = (*temporalJoin)(nil)
)

// NewTemporalJoin returns the operator for a plan's TemporalJoin node; ks is where it
// keeps its checkpointed state (nil without checkpoints).
func NewTemporalJoin(mem memory.Allocator, env *expr.Env, n *planner.TemporalJoin, out exec.Output, ks *KeyedState) (exec.Operator, error) {
	left, right := n.Left.Schema(), n.Right.Schema()
	j := &temporalJoin{n: n, lw: len(left), rw: len(right), lkeys: n.LeftKeys, rkeys: n.RightKeys, ltime: n.LeftTime, rtime: n.RightTime,
		outer: n.Kind == "LEFT", mem: mem, out: out, keys: map[string]*tjKey{}, watermark: exec.MinWatermark, state: ks}
	if n.Residual != nil {
		pred, err := expr.CompilePredicate(n.Residual, mem, env)
		if err != nil {
			return nil, err
		}
		both := append(append(planner.Schema(nil), left...), right...)
		j.residual, j.residualSQL = pred, planner.ExprSQL(n.Residual, both)
		j.pairs = array.NewRecordBuilder(mem, exec.ArrowSchema(both))
		for _, f := range j.pairs.Fields() {
			j.pairAdd = append(j.pairAdd, appender(f))
		}
	}
	j.changes = newChanges(mem, n.Schema())
	j.scratch = make([]value, max(j.lw, j.rw))
	return j, nil
}

// Process buffers a batch's left rows for the watermark, or adds its versions.
func (j *temporalJoin) Process(ctx context.Context, in int, b exec.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	width, keyCols, timeCol := j.lw, j.lkeys, j.ltime
	if in == 1 {
		width, keyCols, timeCol = j.rw, j.rkeys, j.rtime
	}
	reads, err := readers(b.Rec, allColumns(width), nil)
	if err != nil {
		return err
	}
	j.hashes = exec.HashRows(b.Rec, keyCols, j.hashes[:0])
	row := j.scratch[:width]
	j.fired = j.fired[:0]
	for i := 0; i < n; i++ {
		kind := b.Kind(i)
		if in == 0 && kind.IsRetraction() {
			return fmt.Errorf("%s reads an insert-only left side, got a %s row", j, kind)
		}
		if in == 1 && kind == exec.UpdateBefore {
			continue // the +U after it replaces the version
		}
		for c, read := range reads {
			row[c] = read(i)
		}
		untimed, null := row[timeCol].null, false
		j.keyBuf = j.keyBuf[:0]
		for _, c := range keyCols {
			null = null || row[c].null
			j.keyBuf = appendValueBytes(j.keyBuf, row[c])
		}
		if in == 1 {
			if !null && !untimed { // a version without a key or a time is no version of anything
				j.addVersion(j.key(uint16(exec.KeyGroup(j.hashes[i]))), &tjRow{t: row[timeCol].i, seq: j.seq, deleted: kind == exec.Delete, vals: ownedRow(row)})
				j.seq++
			}
			continue
		}
		switch {
		case null && !j.outer:
			// A NULL key matches no version.
		case untimed:
			// A NULL time is in no event time: joined with nothing, at once.
			if j.outer {
				j.fired = append(j.fired, tjFired{left: ownedRow(row)})
			}
		case row[timeCol].i <= j.watermark:
			// Late: the versions it needs may be gone; it joins those kept, at once.
			k := j.keys[string(j.keyBuf)]
			var v *tjRow
			if k != nil {
				v = k.at(row[timeCol].i)
			}
			j.fired = append(j.fired, tjFired{left: ownedRow(row), version: v})
		default:
			// A LEFT join's row with a NULL key waits like the others, under a key that
			// no version has, so that it comes out in time order too.
			k := j.key(uint16(exec.KeyGroup(j.hashes[i])))
			x := &tjRow{t: row[timeCol].i, seq: j.seq, vals: ownedRow(row)}
			j.seq++
			k.addLeft(x)
			j.pending.push(timed[*tjKey]{t: x.t, seq: x.seq, p: k})
			j.markDirty(k)
		}
	}
	if len(j.fired) == 0 {
		return nil
	}
	return j.emitFired(ctx)
}

// key returns the key in keyBuf, made if it is new.
func (j *temporalJoin) key(kg uint16) *tjKey {
	if k := j.keys[string(j.keyBuf)]; k != nil {
		return k
	}
	k := &tjKey{enc: string(j.keyBuf), kg: kg}
	j.keys[k.enc] = k
	return k
}

// addVersion puts v among k's versions, replacing one of its time, and drops the
// versions it makes useless.
func (j *temporalJoin) addVersion(k *tjKey, v *tjRow) {
	at := sort.Search(len(k.versions), func(i int) bool { return k.versions[i].t >= v.t })
	if at < len(k.versions) && k.versions[at].t == v.t {
		k.versions[at] = v
	} else {
		k.versions = slices.Insert(k.versions, at, v)
	}
	j.prune(k)
	j.markDirty(k)
	if len(k.left) == 0 && len(k.versions) == 0 {
		delete(j.keys, k.enc)
	}
}

// addLeft puts x among k's waiting rows, after those of its time or earlier.
func (k *tjKey) addLeft(x *tjRow) {
	if n := len(k.left); n == 0 || k.left[n-1].t <= x.t {
		k.left = append(k.left, x)
		return
	}
	at := sort.Search(len(k.left), func(i int) bool { return k.left[i].t > x.t })
	k.left = slices.Insert(k.left, at, x)
}

// at returns the version valid at time t: the latest at or before t, nil if there is
// none or it is a deletion.
func (k *tjKey) at(t int64) *tjRow {
	i := sort.Search(len(k.versions), func(i int) bool { return k.versions[i].t > t }) - 1
	if i < 0 || k.versions[i].deleted {
		return nil
	}
	return k.versions[i]
}

// prune drops the versions of k that no row waiting or to come can join: those before
// the latest one at or before the watermark, and that one too if it is a deletion.
func (j *temporalJoin) prune(k *tjKey) {
	last := sort.Search(len(k.versions), func(i int) bool { return k.versions[i].t > j.watermark }) - 1
	if last > 0 {
		clear(k.versions[:last])
		k.versions = k.versions[last:]
	}
	if len(k.versions) > 0 && k.versions[0].deleted && k.versions[0].t <= j.watermark {
		k.versions[0] = nil
		k.versions = k.versions[1:]
	}
	if len(k.versions) == 0 {
		k.versions = nil
	}
}

// temporalBatchRows bounds the rows of one output batch.
const temporalBatchRows = 4096

// ProcessWatermark joins the left rows the watermark passed, in time order (by arrival
// for equal times), drops the versions no row can join any more, and passes the
// watermark on.
func (j *temporalJoin) ProcessWatermark(ctx context.Context, wm int64) error {
	if wm <= j.watermark {
		return j.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
	}
	j.watermark = wm
	for len(j.pending) > 0 && j.pending[0].t <= j.watermark {
		j.fired = j.fired[:0]
		for len(j.pending) > 0 && j.pending[0].t <= j.watermark && len(j.fired) < temporalBatchRows {
			k := j.pending.pop().p
			x := k.left[0]
			k.left[0] = nil
			k.left = k.left[1:]
			if len(k.left) == 0 {
				k.left = nil
			}
			j.fired = append(j.fired, tjFired{left: x.vals, version: k.at(x.t)})
			if !k.touched {
				k.touched = true
				j.touched = append(j.touched, k)
			}
		}
		if err := j.emitFired(ctx); err != nil {
			return err
		}
	}
	for _, k := range j.touched {
		k.touched = false
		j.prune(k)
		j.markDirty(k)
		if len(k.left) == 0 && len(k.versions) == 0 && j.keys[k.enc] == k {
			delete(j.keys, k.enc)
		}
	}
	clear(j.touched)
	j.touched = j.touched[:0]
	return j.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
}

// emitFired emits the rows of j.fired: each joined with its version if the residual
// condition holds for the pair, else padded (LEFT) or dropped.
func (j *temporalJoin) emitFired(ctx context.Context) error {
	if err := j.filterResidual(); err != nil {
		return err
	}
	col := j.changes.col
	for _, f := range j.fired {
		if f.version == nil && !j.outer {
			continue
		}
		for c, v := range f.left {
			col[c](v)
		}
		for c := 0; c < j.rw; c++ {
			if f.version == nil {
				col[j.lw+c](value{null: true})
			} else {
				col[j.lw+c](f.version.vals[c])
			}
		}
		j.changes.row(exec.Insert)
	}
	clear(j.fired)
	j.fired = j.fired[:0]
	return j.changes.emit(ctx, j.out)
}

// filterResidual clears the version of each fired row whose pair fails the residual
// condition, evaluating it over all pairs at once.
func (j *temporalJoin) filterResidual() error {
	if j.residual == nil {
		return nil
	}
	pairs := 0
	for _, f := range j.fired {
		if f.version == nil {
			continue
		}
		for c, v := range f.left {
			j.pairAdd[c](v)
		}
		for c, v := range f.version.vals {
			j.pairAdd[j.lw+c](v)
		}
		pairs++
	}
	if pairs == 0 {
		return nil
	}
	rec := j.pairs.NewRecord()
	defer rec.Release()
	sel, err := j.residual.Select(rec, nil)
	if err != nil {
		return evalError(j.mem, "TemporalJoin", j.residualSQL, exec.Batch{Rec: rec}, err, func(rec arrow.Record) error {
			_, err := j.residual.Select(rec, nil)
			return err
		})
	}
	pair := int32(0)
	for i := range j.fired {
		if j.fired[i].version == nil {
			continue
		}
		for len(sel) > 0 && sel[0] < pair {
			sel = sel[1:]
		}
		if len(sel) == 0 || sel[0] != pair {
			j.fired[i].version = nil
		}
		pair++
	}
	return nil
}

func (j *temporalJoin) markDirty(k *tjKey) {
	if j.state != nil && !k.dirty {
		k.dirty = true
		j.dirty = append(j.dirty, k)
	}
}

// stateRows counts the waiting left rows and the versions held.
func (j *temporalJoin) stateRows() (left, versions int) {
	for _, k := range j.keys {
		left += len(k.left)
		versions += len(k.versions)
	}
	return left, versions
}

// Close releases the builders.
func (j *temporalJoin) Close() error {
	j.changes.release()
	if j.pairs != nil {
		j.pairs.Release()
	}
	return nil
}

func (j *temporalJoin) String() string { return fmt.Sprintf("temporal join(%s)", j.n.Kind) }
