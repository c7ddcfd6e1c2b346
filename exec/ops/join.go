package ops

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// join is the operator of a plan's Join node: a two-input operator whose input 0 is the
// left side and input 1 the right. It keeps each side's rows by key, in memory and in
// the checkpoint's keyed state. A row that arrives is matched against the other side's
// rows of its key, and stored for the other side's rows to come.
//
// A regular join handles retractions and outer joins as Flink's streaming join does:
// each stored row counts its matches, so that an outer row is padded with NULLs while it
// has none, and the padded row is retracted when its first match arrives. Interval and
// window joins read insert-only input; a stored row expires when the watermark says no
// row of the other side can match it any more, and an outer row that never matched is
// emitted padded then.
type join struct {
	n           *planner.Join
	mode        joinMode
	sides       [2]*joinSide
	residual    expr.Predicate       // nil: every pair of equal keys matches
	residualSQL string               // the residual condition as SQL, for errors
	pairs       *array.RecordBuilder // of the pairs' columns that the residual reads
	pairCols    []int                // those columns, of the left's then the right's
	pairAdd     []func(value)
	out         exec.Output
	changes     *changes

	watermark int64
	late      int64 // window join rows whose window had closed
	ttl       int64 // regular join: ms a key's rows live without access; 0: forever
	lastSweep int64
	now       func() int64 // processing time, ms

	state     *KeyedState
	dirty     []dirtyRow // rows changed since the last checkpoint, each once
	lostDirty int        // of them, rows removed that no checkpoint held
	legacy    [][]byte   // restored keys of the earlier format, which rows replace
	spare     spareDelta // the last checkpoint's encoding, back from its write
	nextID    uint64     // the id of the next row stored
	lastBytes int64
	lastKeys  int64

	hashes  []uint64
	cands   [][]*joinRow
	expired []*joinKey // scratch of ProcessWatermark
	encoded []byte     // scratch of encode
	values  []value    // scratch of decoded
	rows    rowScratch // the rows of the batch being processed
	keyBuf  []byte     // their keys, encoded one after another
	keyEnds []int      // where each row's key ends in keyBuf
}

type joinMode int

const (
	regularJoin joinMode = iota
	intervalJoin
	windowJoin
)

// joinSide is one input's stored rows.
type joinSide struct {
	index   int // 0 left, 1 right
	keyCols []int
	timeCol int // interval and window joins: the event time or window_end column
	width   int
	outer   bool
	keys    keyIndex
	expiry  rowHeap   // interval and window joins: stored rows by expiry
	arena   *rowArena // where its rows are stored, when it never removes one
}

// key returns the key enc, added without rows if it is new (enc copied: it may be a
// slice of a batch's keys).
func (s *joinSide) key(enc string, kg uint16) *joinKey {
	if k := s.keys.get(enc); k != nil {
		return k
	}
	k := &joinKey{enc: strings.Clone(enc), kg: kg}
	s.keys.put(k)
	return k
}

// joinKey holds a side's rows of one key, oldest first.
type joinKey struct {
	enc    string
	kg     uint16
	rows   []*joinRow
	access int64 // regular join: processing time of the last access, for the TTL
	// expiring: how many of its rows the watermark being processed expired (see
	// ProcessWatermark), which it then removes all at once.
	expiring int
}

// dirtyRow is a row of a side that changed since the last checkpoint.
type dirtyRow struct {
	side int
	row  *joinRow
}

// joinRow is a stored row: its values, how many copies of it it stands for (one, but
// state an earlier version wrote may fold equal rows), and how many rows of the other
// side it matches (for padding).
type joinRow struct {
	// enc is its values as keyed state encodes them: one allocation without pointers
	// (the collector need not scan it), a fraction of the values' size.
	enc    string
	count  int64
	assoc  int64
	time   int64 // interval and window joins: its event time or window_end
	expire int64 // the watermark at which it expires
	key    *joinKey
	id     uint64 // its key's rows are in the order of their ids
	// removed: no longer among its key's rows, or about to leave them; dirty: listed
	// in join.dirty; stored: a checkpoint holds it.
	removed, dirty, stored bool
}

// JoinOptions configures a join operator.
type JoinOptions struct {
	State *KeyedState   // nil without checkpoints
	TTL   time.Duration // a regular join's 'table.exec.state.ttl'; 0 keeps state forever
	Now   func() time.Time
}

// NewJoin returns the operator for a plan's Join node.
func NewJoin(mem memory.Allocator, env *expr.Env, n *planner.Join, out exec.Output, opts JoinOptions) (exec.Operator, error) {
	j := &join{n: n, out: out, state: opts.State, watermark: exec.MinWatermark,
		ttl: opts.TTL.Milliseconds(), changes: newChanges(mem, n.Schema())}
	switch {
	case n.Interval != nil:
		j.mode = intervalJoin
	case n.Window != nil:
		j.mode = windowJoin
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	j.now = func() int64 { return now().UnixMilli() }
	j.lastSweep = j.now()
	left, right := n.Left.Schema(), n.Right.Schema()
	j.sides[0] = &joinSide{index: 0, keyCols: n.LeftKeys, timeCol: n.LeftTime, width: len(left), outer: n.Outer(0), keys: newKeyIndex()}
	j.sides[1] = &joinSide{index: 1, keyCols: n.RightKeys, timeCol: n.RightTime, width: len(right), outer: n.Outer(1), keys: newKeyIndex()}
	for i, in := range []planner.Node{n.Left, n.Right} {
		if j.mode == regularJoin && j.ttl <= 0 && !in.Updating() || j.mode == intervalJoin {
			j.sides[i].arena = &rowArena{}
		}
	}
	if n.Residual != nil {
		joined := append(append(planner.Schema(nil), left...), right...)
		// The pairs are built of the columns the residual reads alone (one at least,
		// so that a batch of pairs has its rows).
		narrow, cols := planner.Narrowed(n.Residual)
		if len(cols) == 0 {
			cols = []int{0}
		}
		// The pairs and the residual's arrays come from the pool of the join's
		// output, each batch's buffers taking the last one's: grown from nothing in
		// fresh memory for every batch, they were 4% of q9's CPU.
		pred, err := expr.CompilePredicate(narrow, j.changes.pool, env)
		if err != nil {
			j.changes.release()
			return nil, err
		}
		j.residual, j.pairCols = pred, cols
		j.residualSQL = planner.ExprSQL(n.Residual, joined)
		var schema planner.Schema
		for _, c := range cols {
			schema = append(schema, joined[c])
		}
		j.pairs = array.NewRecordBuilder(j.changes.pool, exec.ArrowSchema(schema))
		for _, f := range j.pairs.Fields() {
			j.pairAdd = append(j.pairAdd, appender(f))
		}
	}
	return j, nil
}

var (
	_ exec.Operator         = (*join)(nil)
	_ exec.WatermarkHandler = (*join)(nil)
	_ exec.Flusher          = (*join)(nil)
	_ exec.LateCounter      = (*join)(nil)
)

// Process matches a batch of one side against the other side's stored rows.
func (j *join) Process(ctx context.Context, in int, b exec.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	s, o := j.sides[in], j.sides[1-in]
	rows, err := j.rows.read(b.Rec, s.width)
	if err != nil {
		return err
	}
	j.hashes = exec.HashRows(b.Rec, s.keyCols, j.hashes[:0])
	now := j.now()
	encs := make([]string, n)
	keyed := make([]bool, n) // false: a NULL key, which matches nothing and is never stored
	skip := make([]bool, n)  // a window join's late row
	// The batch's keys are encoded into one string, which encs slice; a key that is
	// stored takes a copy of its own (joinSide.key).
	j.keyBuf, j.keyEnds = j.keyBuf[:0], j.keyEnds[:0]
	for i, vals := range rows {
		null := false
		for _, c := range s.keyCols {
			null = null || vals[c].null
			j.keyBuf = appendValueBytes(j.keyBuf, vals[c])
		}
		switch {
		case j.mode == windowJoin && vals[s.timeCol].i <= j.watermark:
			j.late++
			skip[i] = true
		case null || (j.mode != regularJoin && vals[s.timeCol].null):
			// It matches nothing: padded at once if outer, never stored.
		default:
			keyed[i] = true
		}
		j.keyEnds = append(j.keyEnds, len(j.keyBuf))
	}
	keys := string(j.keyBuf)
	j.cands = j.cands[:0]
	for i, vals := range rows {
		var cands []*joinRow
		if keyed[i] {
			start := 0
			if i > 0 {
				start = j.keyEnds[i-1]
			}
			encs[i] = keys[start:j.keyEnds[i]]
			if k := o.keys.get(encs[i]); k != nil {
				k.access = now
				cands = j.inRange(in, vals, k.rows)
			}
		}
		j.cands = append(j.cands, cands)
	}
	if err := j.filterResidual(in, rows); err != nil {
		return err
	}
	for i, vals := range rows {
		if skip[i] {
			continue
		}
		if j.n.Semi() && j.mode == windowJoin {
			j.windowSemi(s, o, vals, encs[i], keyed[i], uint16(exec.KeyGroup(j.hashes[i])), j.cands[i])
		} else if j.n.Semi() {
			j.semi(s, o, vals, encs[i], keyed[i], uint16(exec.KeyGroup(j.hashes[i])), b.Kind(i), j.cands[i], now)
		} else if j.mode == regularJoin {
			j.regular(s, o, vals, encs[i], keyed[i], uint16(exec.KeyGroup(j.hashes[i])), b.Kind(i), j.cands[i], now)
		} else {
			j.timed(s, o, vals, encs[i], keyed[i], uint16(exec.KeyGroup(j.hashes[i])), j.cands[i])
		}
	}
	if j.n.Scalar != "" && in == 1 {
		for i := range rows {
			if rows := j.storedRows(s, encs[i]); keyed[i] && rows > 1 {
				j.changes.discard()
				return &exec.EvalError{Op: "Join", Expr: j.n.Scalar, Err: fmt.Errorf("a scalar subquery produced %d rows, but may produce at most one%s", rows, j.scalarFor())}
			}
		}
	}
	return j.emit(ctx)
}

// storedRows counts the rows side s holds of the key enc.
func (j *join) storedRows(s *joinSide, enc string) int64 {
	n := int64(0)
	if k := s.keys.get(enc); k != nil {
		for _, r := range k.rows {
			n += r.count
		}
	}
	return n
}

// scalarFor says which outer rows a correlated scalar subquery's rows were for.
func (j *join) scalarFor() string {
	if len(j.n.LeftKeys) == 0 {
		return ""
	}
	return " for an outer row"
}

// readRows reads every row of rec as values.
func readRows(rec arrow.Record, width int) ([][]value, error) {
	var r rowScratch
	return r.read(rec, width)
}

// rowScratch holds the rows that read returns, reused by the next call: an operator
// that keeps no row past its batch need not allocate a batch's values for each.
type rowScratch struct {
	flat []value
	rows [][]value
}

// read reads every row of rec as values, valid until the next call.
func (r *rowScratch) read(rec arrow.Record, width int) ([][]value, error) {
	readers, err := readers(rec, allColumns(width), nil)
	if err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	// Every value is overwritten: a larger batch needs new room, not a copy of the old.
	if cap(r.flat) < n*width {
		r.flat = make([]value, n*width)
	}
	if cap(r.rows) < n {
		r.rows = make([][]value, n)
	}
	r.flat, r.rows = r.flat[:n*width], r.rows[:n]
	flat, rows := r.flat, r.rows
	for i := range rows {
		row := flat[i*width : (i+1)*width : (i+1)*width]
		for c, read := range readers {
			row[c] = read(i)
		}
		rows[i] = row
	}
	return rows, nil
}

func allColumns(n int) []int {
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	return cols
}

// keyOf returns a row's key values, and whether one is NULL (such a key equals none).
func keyOf(vals []value, cols []int) ([]value, bool) {
	key := make([]value, len(cols))
	null := false
	for i, c := range cols {
		key[i] = vals[c]
		null = null || key[i].null
	}
	return key, null
}

// inRange returns the stored rows of the other side that an interval join's row may
// match by time; for other joins, all of them.
func (j *join) inRange(in int, vals []value, stored []*joinRow) []*joinRow {
	if j.mode != intervalJoin {
		if j.residual == nil {
			// Read only: a batch changes the stored rows of its own side alone.
			return stored
		}
		return append([]*joinRow(nil), stored...) // filterResidual keeps some
	}
	t, iv := vals[j.sides[in].timeCol].i, j.n.Interval
	lo, hi := minusBound(t, iv.Upper), minusBound(t, iv.Lower) // right times a left row matches
	if in == 1 {
		lo, hi = plusBound(t, iv.Lower), plusBound(t, iv.Upper) // left times a right row matches
	}
	var out []*joinRow
	for _, r := range stored {
		if r.time >= lo && r.time <= hi {
			out = append(out, r)
		}
	}
	return out
}

// plusBound is t + an interval's bound, and minusBound t - the bound, the unbounded
// ends (math.MinInt64 and math.MaxInt64) staying unbounded.
func plusBound(t, bound int64) int64 {
	switch bound {
	case math.MinInt64, math.MaxInt64:
		return bound
	}
	return t + bound
}

func minusBound(t, bound int64) int64 {
	switch bound {
	case math.MinInt64:
		return math.MaxInt64
	case math.MaxInt64:
		return math.MinInt64
	}
	return t - bound
}

// filterResidual keeps the candidates for which the join's residual condition is TRUE,
// evaluating it over all candidate pairs of the batch at once.
func (j *join) filterResidual(in int, rows [][]value) error {
	if j.residual == nil {
		return nil
	}
	n := 0
	for _, cands := range j.cands {
		n += len(cands)
	}
	j.pairs.Reserve(n)
	for i, cands := range j.cands {
		for _, r := range cands {
			left, right := rows[i], j.decoded(r)
			if in == 1 {
				left, right = right, left
			}
			for c, col := range j.pairCols {
				if col < len(left) {
					j.pairAdd[c](left[col])
				} else {
					j.pairAdd[c](right[col-len(left)])
				}
			}
		}
	}
	rec := j.pairs.NewRecord()
	defer rec.Release()
	sel, err := j.residual.Select(rec, nil)
	if err != nil {
		return evalError(j.changes.pool, "Join", j.residualSQL, exec.Batch{Rec: rec}, err, func(rec arrow.Record) error {
			_, err := j.residual.Select(rec, nil)
			return err
		})
	}
	pair := int32(0)
	for i, cands := range j.cands {
		kept := cands[:0]
		for _, r := range cands {
			for len(sel) > 0 && sel[0] < pair {
				sel = sel[1:]
			}
			if len(sel) > 0 && sel[0] == pair {
				kept = append(kept, r)
			}
			pair++
		}
		j.cands[i] = kept
	}
	return nil
}

// regular applies one row of a regular join: an insert (+I, +U) or retraction (-U, -D)
// of vals on side s, whose matches on side o are cands. A join without keys has the
// empty enc for every row; keyed is false for a NULL key.
func (j *join) regular(s, o *joinSide, vals []value, enc string, keyed bool, kg uint16, kind exec.RowKind, cands []*joinRow, now int64) {
	retract := kind.IsRetraction()
	matched := int64(0)
	for _, r := range cands {
		other := j.decoded(r)
		if !retract && o.outer && r.assoc == 0 {
			j.padded(o, other, exec.Delete, r.count) // r's padded rows give way to the match
		}
		j.pair(s.index, vals, other, kind, r.count)
		if retract {
			r.assoc--
			if o.outer && r.assoc == 0 {
				j.padded(o, other, exec.Insert, r.count)
			}
		} else {
			r.assoc++
		}
		if o.outer {
			j.markRow(o, r) // its padding depends on its matches
		}
		matched += r.count
	}
	if matched == 0 && s.outer {
		j.padded(s, vals, kind, 1)
	}
	j.store(s, vals, enc, keyed, kg, retract, matched, now)
}

// semi applies one row of a semi or anti join. A left row is stored with the number of
// right rows it matches, and passes while that number is above zero (SEMI) or zero
// (ANTI), with its own row kind; a right row moves the numbers of the left rows it
// matches, and a left row whose number leaves or reaches zero is inserted or deleted.
func (j *join) semi(s, o *joinSide, vals []value, enc string, keyed bool, kg uint16, kind exec.RowKind, cands []*joinRow, now int64) {
	retract := kind.IsRetraction()
	anti := j.n.Kind == "ANTI"
	if s.index == 0 {
		matched := int64(0)
		for _, r := range cands {
			matched += r.count
		}
		if (matched > 0) != anti {
			j.left(vals, kind, 1)
		}
		j.store(s, vals, enc, keyed, kg, retract, matched, now)
		return
	}
	for _, r := range cands {
		switch {
		case !retract:
			r.assoc++
			if r.assoc == 1 {
				j.left(j.decoded(r), map[bool]exec.RowKind{false: exec.Insert, true: exec.Delete}[anti], r.count)
			}
		case r.assoc > 0:
			r.assoc--
			if r.assoc == 0 {
				j.left(j.decoded(r), map[bool]exec.RowKind{false: exec.Delete, true: exec.Insert}[anti], r.count)
			}
		}
		j.markRow(o, r)
	}
	j.store(s, vals, enc, keyed, kg, retract, 0, now)
}

// store adds a row to side s's state, or removes one (retract); matched is the number
// of the other side's rows it matches. A join without keys has the empty enc for every
// row; keyed is false for a NULL key.
func (j *join) store(s *joinSide, vals []value, enc string, keyed bool, kg uint16, retract bool, matched int64, now int64) {
	if !keyed {
		return // a NULL key is never stored: it cannot match
	}
	if retract && s.keys.get(enc) == nil {
		return // already gone (expired by the TTL)
	}
	k := s.key(enc, kg)
	k.access = now
	if !retract {
		// Equal rows need no folding: they match the same rows, so either may go
		// first. Searching for one would make a key of many rows quadratic.
		r := j.newRow(s, vals)
		r.count, r.assoc, r.key, r.id = 1, matched, k, j.newID()
		k.rows = append(k.rows, r)
		j.markRow(s, r)
		return
	}
	// From the newest: an update retracts the row its key's last change inserted. A
	// retraction repeats the row it takes back, so its encoding is the same; only
	// values equal but encoded apart (-0 and 0, NaNs) need each row decoded.
	row := j.encodeScratch(vals)
	i := len(k.rows) - 1
	for i >= 0 && k.rows[i].enc != string(row) {
		i--
	}
	if i < 0 {
		i = slices.IndexFunc(k.rows, func(r *joinRow) bool { return equalValues(j.decoded(r), vals) })
	}
	if i >= 0 {
		if r := k.rows[i]; r.count > 1 {
			r.count--
			j.markRow(s, r)
		} else {
			k.rows = slices.Delete(k.rows, i, i+1)
			j.removeRow(s, r)
		}
	}
	j.dropIfEmpty(s, k)
}

// timed applies an inserted row of an interval or window join: it is joined with its
// matches now, and stored until the watermark passes its expiry.
func (j *join) timed(s, o *joinSide, vals []value, enc string, keyed bool, kg uint16, cands []*joinRow) {
	for _, r := range cands {
		j.pair(s.index, vals, j.decoded(r), exec.Insert, 1)
		r.assoc++
		if o.outer {
			j.markRow(o, r) // its padding depends on its matches
		}
	}
	if !j.timedStore(s, vals, enc, keyed, kg, int64(len(cands))) && s.outer && len(cands) == 0 {
		j.padded(s, vals, exec.Insert, 1) // it can match nothing more
	}
}

// windowSemi applies an inserted row of a window semi or anti join. A left row that
// has a match passes at once (SEMI) or never (ANTI), and is not kept; one without is
// kept until its window closes, to pass on its first match (SEMI) or, if none came, when
// the window closes (ANTI). A right row is kept until its window closes.
func (j *join) windowSemi(s, o *joinSide, vals []value, enc string, keyed bool, kg uint16, cands []*joinRow) {
	anti := j.n.Kind == "ANTI"
	if s.index == 1 {
		for _, r := range cands {
			if r.assoc == 0 && !anti {
				j.left(j.decoded(r), exec.Insert, 1)
			}
			r.assoc++
			j.markRow(o, r)
		}
		j.timedStore(s, vals, enc, keyed, kg, 0)
		return
	}
	switch {
	case len(cands) > 0:
		if !anti {
			j.left(vals, exec.Insert, 1)
		}
	case !keyed || vals[s.timeCol].null || j.expiry(0, vals[s.timeCol].i) <= j.watermark:
		if anti { // it can match nothing
			j.left(vals, exec.Insert, 1)
		}
	default:
		j.timedStore(s, vals, enc, keyed, kg, 0)
	}
}

// timedStore keeps a row of an interval or window join until its expiry, and reports
// whether it did: a row without a key or time, or one already expired, is not kept.
func (j *join) timedStore(s *joinSide, vals []value, enc string, keyed bool, kg uint16, assoc int64) bool {
	if !keyed || vals[s.timeCol].null {
		return false
	}
	t := vals[s.timeCol].i
	expire := j.expiry(s.index, t)
	if expire <= j.watermark {
		return false
	}
	k := s.key(enc, kg)
	row := j.newRow(s, vals)
	row.count, row.assoc, row.time, row.expire, row.key, row.id = 1, assoc, t, expire, k, j.newID()
	k.rows = append(k.rows, row)
	if expire != never {
		s.expiry.push(row)
	}
	j.markRow(s, row)
	return true
}

// never is the expiry of a row that is kept for good.
const never = math.MaxInt64

// newRow returns a new row of side s holding vals, from the side's arena if it has one.
func (j *join) newRow(s *joinSide, vals []value) *joinRow {
	if s.arena == nil {
		return &joinRow{enc: j.encode(vals)}
	}
	r := s.arena.row()
	r.enc = s.arena.text(j.encodeScratch(vals))
	return r
}

// expiry is the watermark from which no row of the other side can match a row of side
// in at event time t: later rows of that side are late. A left row matches right rows
// up to t - Lower, a right row left rows up to t + Upper, and a window's rows meet
// until the window closes at its end t. A side the interval keeps never expires.
func (j *join) expiry(in int, t int64) int64 {
	switch {
	case j.mode == windowJoin:
		return t
	case j.n.Interval.Kept[in]:
		return never
	case in == 0:
		return t - j.n.Interval.Lower
	}
	return t + j.n.Interval.Upper
}

// ProcessWatermark expires the rows of interval and window joins that can match
// nothing more, emitting outer rows that never matched, then passes the watermark on.
func (j *join) ProcessWatermark(ctx context.Context, wm int64) error {
	j.watermark = max(j.watermark, wm)
	if j.mode != regularJoin {
		for _, s := range j.sides {
			if wm == exec.MaxWatermark && !s.outer && !(j.n.Kind == "ANTI" && s.index == 0) {
				j.expireAll(s)
				continue
			}
			// A key's expired rows go in one pass over its rows: a window join's key
			// may be the window alone, holding every row of the window.
			j.expired = j.expired[:0]
			for s.expiry.len() > 0 && s.expiry.first() <= j.watermark {
				r := s.expiry.pop()
				switch {
				case s.outer && r.assoc == 0:
					j.padded(s, j.decoded(r), exec.Insert, 1)
				case j.n.Kind == "ANTI" && s.index == 0 && r.assoc == 0:
					j.left(j.decoded(r), exec.Insert, 1)
				}
				j.removeRow(s, r)
				if k := r.key; k.expiring == 0 {
					j.expired = append(j.expired, k)
				}
				r.key.expiring++
			}
			for _, k := range j.expired {
				k.rows = dropExpired(k.rows, k.expiring)
				k.expiring = 0
				j.dropIfEmpty(s, k)
			}
			clear(j.expired)
		}
		if err := j.emit(ctx); err != nil {
			return err
		}
	}
	return j.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
}

// dropExpired removes from a key's rows the n that expired. Rows expire about in the
// order they came, so those are near the front: only the rows up to the last of them
// are read, and the rest moved up as they are. (Reading every row of the key at each
// watermark was quadratic: q7's prices hold many bids each, a watermark expires a few.)
func dropExpired(rows []*joinRow, n int) []*joinRow {
	kept, i := 0, 0
	for ; n > 0 && i < len(rows); i++ {
		if rows[i].removed {
			n--
			continue
		}
		rows[kept] = rows[i]
		kept++
	}
	if kept == 0 { // the oldest expired: slice them off
		clear(rows[:i]) // they hold rows the collector may free
		return rows[i:]
	}
	kept += copy(rows[kept:], rows[i:])
	clear(rows[kept:])
	return rows[:kept]
}

// expireAll expires every row of side s that can expire, at the final watermark, when
// none is emitted for it: all at once, not one heap pop at a time (a sixth of q7's
// CPU). Such a side either expires all its rows or keeps them all (see expiry).
func (j *join) expireAll(s *joinSide) {
	if s.expiry.len() == 0 {
		return
	}
	s.expiry.rows(func(r *joinRow) { j.removeRow(s, r) })
	s.expiry = rowHeap{}
	s.keys = newKeyIndex()
}

// Flush drops the keys of a regular join that the TTL let expire, at most every quarter
// of the TTL. Like Flink's state TTL it retracts nothing: their rows just stop matching.
func (j *join) Flush(context.Context) error {
	now := j.now()
	if j.ttl <= 0 || now-j.lastSweep < max(j.ttl/4, 100) {
		return nil
	}
	j.lastSweep = now
	for _, s := range j.sides {
		for k := range s.keys.all() {
			if now-k.access >= j.ttl {
				s.keys.remove(k.enc)
				for _, r := range k.rows {
					j.removeRow(s, r)
				}
			}
		}
	}
	return nil
}

// LateRows counts the rows a window join dropped because their window had closed.
func (j *join) LateRows() int64 { return j.late }

// pair adds copies of the joined row of vals (on side in) and other.
func (j *join) pair(in int, vals, other []value, kind exec.RowKind, copies int64) {
	left, right := vals, other
	if in == 1 {
		left, right = other, vals
	}
	col := j.changes.col
	for ; copies > 0; copies-- {
		for c, v := range left {
			col[c](v)
		}
		for c, v := range right {
			col[len(left)+c](v)
		}
		j.changes.row(kind)
	}
}

// left adds copies of a left row alone: a semi or anti join's output.
func (j *join) left(vals []value, kind exec.RowKind, copies int64) {
	col := j.changes.col
	for ; copies > 0; copies-- {
		for c, v := range vals {
			col[c](v)
		}
		j.changes.row(kind)
	}
}

// padded adds copies of a row of side s joined with NULLs.
func (j *join) padded(s *joinSide, vals []value, kind exec.RowKind, copies int64) {
	other, col := j.sides[1-s.index].width, j.changes.col
	for ; copies > 0; copies-- {
		at := 0
		if s.index == 1 {
			for c := 0; c < other; c++ {
				col[c](value{null: true})
			}
			at = other
		}
		for c, v := range vals {
			col[at+c](v)
		}
		if s.index == 0 {
			for c := 0; c < other; c++ {
				col[len(vals)+c](value{null: true})
			}
		}
		j.changes.row(kind)
	}
}

// encode returns vals encoded for a joinRow.
func (j *join) encode(vals []value) string { return string(j.encodeScratch(vals)) }

// encodeScratch encodes vals into scratch space, valid until the next call.
func (j *join) encodeScratch(vals []value) []byte {
	j.encoded = j.encoded[:0]
	for _, v := range vals {
		j.encoded = appendValueBytes(j.encoded, v)
	}
	return j.encoded
}

// decoded returns r's values, valid until the next call: its strings are slices of
// r.enc, so decoding allocates nothing.
func (j *join) decoded(r *joinRow) []value {
	j.values = decodeRow(r.enc, j.values[:0])
	return j.values
}

// emit sends the rows built so far.
func (j *join) emit(ctx context.Context) error { return j.changes.emit(ctx, j.out) }

// newID returns the id of a row to store.
func (j *join) newID() uint64 {
	j.nextID++
	return j.nextID
}

// markRow lists a row of side s as changed since the last checkpoint.
func (j *join) markRow(s *joinSide, r *joinRow) {
	if j.state != nil && !r.dirty {
		r.dirty = true
		j.dirty = append(j.dirty, dirtyRow{s.index, r})
	}
}

// removeRow marks r as leaving its key's rows, which the caller takes it out of. One
// no checkpoint holds leaves the dirty list too, once such rows are half of it:
// windows store and expire many rows between two checkpoints, and the list would hold
// them all until the next.
func (j *join) removeRow(s *joinSide, r *joinRow) {
	r.removed = true
	if r.stored {
		j.markRow(s, r) // the next checkpoint deletes it
		return
	}
	if r.dirty {
		j.lostDirty++
		if j.lostDirty > 1024 && 2*j.lostDirty > len(j.dirty) {
			j.dirty = slices.DeleteFunc(j.dirty, func(d dirtyRow) bool { return d.row.removed && !d.row.stored })
			j.lostDirty = 0
		}
	}
}

// dropIfEmpty forgets a key without rows.
func (j *join) dropIfEmpty(s *joinSide, k *joinKey) {
	if len(k.rows) == 0 && s.keys.get(k.enc) == k {
		s.keys.remove(k.enc)
	}
}

// Close releases the builders.
func (j *join) Close() error {
	if j.pairs != nil {
		j.pairs.Release()
	}
	j.changes.release()
	return nil
}

// rowHeap orders stored rows by expiry, earliest first. Each entry holds its row's
// expiry, so that ordering reads no row (a cache miss each: 6% of q5's CPU). The
// entries are kept in chunks, so the heap grows without copying them: q7's holds
// millions, and each doubling of one slice copied them all, with a write barrier for
// each row while the collector marked (4% of q7's CPU).
type rowHeap struct {
	chunks [][]expiring // each of heapChunk entries
	n      int
}

type expiring struct {
	expire int64
	row    *joinRow
}

const (
	heapChunkShift = 12
	heapChunk      = 1 << heapChunkShift
)

func (h *rowHeap) len() int { return h.n }

func (h *rowHeap) at(i int) *expiring {
	return &h.chunks[i>>heapChunkShift][i&(heapChunk-1)]
}

// first is the earliest expiry; the heap must not be empty.
func (h *rowHeap) first() int64 { return h.chunks[0][0].expire }

func (h *rowHeap) push(r *joinRow) {
	if h.n == len(h.chunks)*heapChunk {
		h.chunks = append(h.chunks, make([]expiring, heapChunk))
	}
	i := h.n
	h.n++
	*h.at(i) = expiring{r.expire, r}
	for i > 0 {
		up := (i - 1) / 2
		a, b := h.at(up), h.at(i)
		if a.expire <= b.expire {
			break
		}
		*a, *b = *b, *a
		i = up
	}
}

// pop removes and returns the row of the earliest expiry.
func (h *rowHeap) pop() *joinRow {
	top := h.at(0)
	r := top.row
	h.n--
	last := h.at(h.n)
	*top, *last = *last, expiring{}
	for i := 0; ; {
		least, l := i, 2*i+1
		if l < h.n && h.at(l).expire < h.at(least).expire {
			least = l
		}
		if l+1 < h.n && h.at(l+1).expire < h.at(least).expire {
			least = l + 1
		}
		if least == i {
			break
		}
		a, b := h.at(i), h.at(least)
		*a, *b = *b, *a
		i = least
	}
	// Keep one empty chunk beyond the last in use, for the next pushes.
	if c := len(h.chunks); c >= 2 && h.n <= (c-2)*heapChunk {
		h.chunks[c-1] = nil
		h.chunks = h.chunks[:c-1]
	}
	return r
}

// rows calls fn with every row of the heap, in no order.
func (h *rowHeap) rows(fn func(*joinRow)) {
	for i := range h.n {
		fn(h.at(i).row)
	}
}

func (j *join) String() string { return fmt.Sprintf("join(%s)", j.n.Kind) }
