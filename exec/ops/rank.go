package ops

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// rank is the operator of a plan's Rank node. It keeps the rows of each partition in
// rank order, in memory and in the checkpoint's keyed state, and runs in one of three
// ways:
//   - Top-N (and keeping the last row, a Top-1): after each batch it compares each
//     changed partition's rows numbered Start to End with those before the batch, and
//     emits the difference: with the row number, per number (+I, -U/+U, -D); without,
//     the rows that left (-D) and entered (+I), or -U/+U for a deduplication that keeps
//     the last row. With insert-only input it keeps End rows per partition; with
//     updating input all of them, so that a retraction lets the next row in.
//   - keep-first deduplication on event time: a key's earliest row is emitted once the
//     watermark passes its time; rows of the key after that are ignored, and those
//     earlier than the emitted one are late (dropped and counted).
//   - window Top-N: each window's End best rows are kept until the watermark passes the
//     window's end, then emitted once (+I) and forgotten; a row of a window that already
//     fired is late.
//
// Rows with equal ORDER BY values rank by arrival, earlier first (later first when
// keeping the last row); NULL ranks before any value, descending after.
type rank struct {
	n          *planner.Rank
	mode       rankMode
	partCols   []int
	order      []rankKey
	start, end int  // positions kept, from 0: [start, end)
	keepAll    bool // updating input: keep every row
	lastWins   bool // equal ORDER BY values: the later arrival first
	timeCol    int  // keep-first: the event-time column; window Top-N: window_end
	width      int  // input columns
	rowNumber  bool

	out     exec.Output
	changes *changes

	parts   map[string]*rankPart // by encoded partition key
	seq     int64                // arrival number of the next stored row
	touched []touchedPart        // partitions the current batch changed
	before  []*rankRow           // their ranked rows before the batch
	// dropped are the rows of a Top-N the current batch pushed out or retracted, and
	// free those of earlier batches, whose rows the next stored ones take: q9 replaces
	// an auction's best bid at every better one, and allocating each new row (seventeen
	// values) was a tenth of its CPU.
	dropped, free []*rankRow
	diffKeys      [2][]byte // diffSet's scratch
	stamp         uint64
	batch         uint64 // numbers Process calls, to know which partitions a batch touched

	watermark int64
	late      int64
	byEnd     map[int64][]*rankPart // window Top-N: open windows by end
	pending   map[*rankPart]bool    // keep-first: keys whose row waits for the watermark

	state     *KeyedState
	dirty     []*rankPart  // partitions changed since the last checkpoint, each once
	encoded   deltaScratch // SnapshotAsync's encoding of the changed partitions
	spare     spareDelta   // the last checkpoint's encoding, back from its write
	snapshots int64        // how many SnapshotAsync took
	lastBytes int64
	lastKeys  int64

	hashes  []uint64
	keyBuf  []byte
	scratch []value
	// A Top-N over insert-only input reads a row's partition and ORDER BY columns
	// first, and the rest (rest) only if the row enters the ranks: most rows of a
	// large partition rank past End (q9 keeps the best of about fifteen bids).
	ranking, rest []int
}

type rankMode int

const (
	topN rankMode = iota
	keepFirst
	windowTopN
)

// rankKey is one ORDER BY column.
type rankKey struct {
	col  int
	desc bool
	less func(a, b value) bool
}

// rankPart is one partition's rows, in rank order.
type rankPart struct {
	enc   string
	kg    uint16
	rows  []*rankRow
	end   int64  // window Top-N: the window's end
	done  bool   // keep-first: its row was emitted
	batch uint64 // the last batch that changed it
	dirty bool   // listed in rank.dirty
	snap  int64  // the last snapshot that wrote it (rank.snapshots)
}

type rankRow struct {
	vals []value
	seq  int64  // arrival number: orders the keep-first rows one watermark makes final
	mark uint64 // for diffs
}

// touchedPart is a partition changed by the current batch, and where its ranked rows
// before the batch are in rank.before.
type touchedPart struct {
	p        *rankPart
	from, to int
}

var (
	_ exec.Operator         = (*rank)(nil)
	_ exec.WatermarkHandler = (*rank)(nil)
	_ exec.LateCounter      = (*rank)(nil)
	_ exec.Closer           = (*rank)(nil)
)

// NewRank returns the operator for a plan's Rank node; ks is where it keeps its
// checkpointed state (nil without checkpoints).
func NewRank(mem memory.Allocator, n *planner.Rank, out exec.Output, ks *KeyedState) exec.Operator {
	in := exec.ArrowSchema(n.Input.Schema())
	r := &rank{n: n, partCols: n.PartitionBy, start: int(n.Start - 1), end: int(n.End), keepAll: n.Input.Updating(),
		width: len(in.Fields()), rowNumber: n.RowNumber, out: out, parts: map[string]*rankPart{},
		watermark: exec.MinWatermark, state: ks, changes: newChanges(mem, n.Schema())}
	for _, k := range n.OrderBy {
		r.order = append(r.order, rankKey{col: k.Col, desc: k.Desc, less: less(in.Field(k.Col).Type.ID())})
	}
	switch {
	case n.Window != nil:
		r.mode, r.timeCol, r.byEnd = windowTopN, n.WindowEnd, map[int64][]*rankPart{}
	case n.Dedup() == planner.KeepFirstRow:
		r.mode, r.timeCol, r.pending = keepFirst, n.OrderBy[0].Col, map[*rankPart]bool{}
	case n.Dedup() == planner.KeepLastRow:
		r.lastWins = true
	}
	r.scratch = make([]value, r.width)
	r.ranking = slices.Clone(r.partCols)
	for _, k := range r.order {
		r.ranking = append(r.ranking, k.col)
	}
	for c := range r.width {
		if !slices.Contains(r.ranking, c) {
			r.rest = append(r.rest, c)
		}
	}
	return r
}

// Process ranks a batch's rows into their partitions, then emits what changed.
func (r *rank) Process(ctx context.Context, _ int, b exec.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	reads, err := readers(b.Rec, allColumns(r.width), nil)
	if err != nil {
		return err
	}
	r.hashes = exec.HashRows(b.Rec, r.partCols, r.hashes[:0])
	r.batch++
	row := r.scratch
	readCols := func(i int, cols []int) {
		for _, c := range cols {
			row[c] = reads[c](i)
		}
	}
	for i := 0; i < n; i++ {
		kg := uint16(exec.KeyGroup(r.hashes[i]))
		retract := b.Kind(i).IsRetraction()
		if r.mode == topN && !retract && !r.keepAll {
			readCols(i, r.ranking)
			p := r.partition(row, kg, true)
			if pos := r.position(p, row); pos < r.end {
				readCols(i, r.rest)
				r.insertAt(p, row, pos)
			}
			continue
		}
		for c, read := range reads {
			row[c] = read(i)
		}
		if retract && r.mode != topN {
			return fmt.Errorf("%s reads insert-only input, got a %s row", r, b.Kind(i))
		}
		switch r.mode {
		case topN:
			if retract {
				if p := r.partition(row, kg, false); p != nil {
					r.retract(p, row)
				}
			} else {
				r.insert(r.partition(row, kg, true), row)
			}
		case keepFirst:
			r.first(row, kg)
		case windowTopN:
			if end := row[r.timeCol].i; end <= r.watermark {
				r.late++
				continue
			}
			r.insert(r.partition(row, kg, true), row)
		}
	}
	r.diffTouched()
	return r.emit(ctx)
}

// partition returns the partition of row, creating it if create is set (else nil).
func (r *rank) partition(row []value, kg uint16, create bool) *rankPart {
	r.keyBuf = r.keyBuf[:0]
	for _, c := range r.partCols {
		r.keyBuf = appendValueBytes(r.keyBuf, row[c])
	}
	if p := r.parts[string(r.keyBuf)]; p != nil || !create {
		return p
	}
	p := &rankPart{enc: string(r.keyBuf), kg: kg}
	r.parts[p.enc] = p
	if r.mode == windowTopN {
		p.end = row[r.timeCol].i
		r.byEnd[p.end] = append(r.byEnd[p.end], p)
	}
	return p
}

// compare orders two rows by the ORDER BY columns only.
func (r *rank) compare(a, b []value) int {
	for _, k := range r.order {
		x, y := a[k.col], b[k.col]
		c := 0
		switch {
		case x.null && y.null:
		case x.null:
			c = -1
		case y.null:
			c = 1
		case k.less(x, y):
			c = -1
		case k.less(y, x):
			c = 1
		}
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// insert stores row in p at its rank: after the rows it ties with, or before them when
// the last row wins. Without keepAll, a row past End is not stored and the row pushed
// past End is forgotten.
func (r *rank) insert(p *rankPart, row []value) {
	if pos := r.position(p, row); r.keepAll || pos < r.end {
		r.insertAt(p, row, pos)
	}
}

// position is where row ranks among p's rows (by its ORDER BY columns only).
func (r *rank) position(p *rankPart, row []value) int {
	return sort.Search(len(p.rows), func(i int) bool {
		c := r.compare(p.rows[i].vals, row)
		return c > 0 || c == 0 && r.lastWins
	})
}

// insertAt stores row in p at pos, its position.
func (r *rank) insertAt(p *rankPart, row []value, pos int) {
	r.touch(p)
	p.rows = slices.Insert(p.rows, pos, r.newRow(row))
	if !r.keepAll && len(p.rows) > r.end {
		r.drop(p.rows[r.end:]...)
		p.rows = slices.Delete(p.rows, r.end, len(p.rows))
	}
}

// maxFreeRows bounds rank.free.
const maxFreeRows = 4096

// newRow returns a stored row holding row's values, a free one if there is.
func (r *rank) newRow(row []value) *rankRow {
	var x *rankRow
	if n := len(r.free); n > 0 {
		x, r.free[n-1] = r.free[n-1], nil
		r.free = r.free[:n-1]
	} else {
		x = &rankRow{}
	}
	x.vals, x.seq, x.mark = ownedRowIn(x.vals, row), r.seq, 0
	r.seq++
	return x
}

// drop notes rows that a Top-N no longer holds, to be reused once the batch's changes
// are emitted (diffTouched reads them until then). Other modes keep no rows aside.
func (r *rank) drop(rows ...*rankRow) {
	if r.mode == topN {
		r.dropped = append(r.dropped, rows...)
	}
}

// retract removes a row equal to row from p, if p holds one.
func (r *rank) retract(p *rankPart, row []value) {
	i := sort.Search(len(p.rows), func(i int) bool { return r.compare(p.rows[i].vals, row) >= 0 })
	for ; i < len(p.rows) && r.compare(p.rows[i].vals, row) == 0; i++ {
		if equalValues(p.rows[i].vals, row) {
			r.touch(p)
			r.drop(p.rows[i])
			p.rows = slices.Delete(p.rows, i, i+1)
			return
		}
	}
}

// touch notes that the batch changes p: the first time, it saves p's ranked rows.
func (r *rank) touch(p *rankPart) {
	if p.batch == r.batch {
		return
	}
	p.batch = r.batch
	r.markDirty(p)
	if r.mode != topN {
		return
	}
	from := len(r.before)
	r.before = append(r.before, r.ranked(p.rows)...)
	r.touched = append(r.touched, touchedPart{p: p, from: from, to: len(r.before)})
}

// ranked returns the rows numbered Start to End of rows.
func (r *rank) ranked(rows []*rankRow) []*rankRow {
	return rows[min(r.start, len(rows)):min(r.end, len(rows))]
}

// diffTouched emits, for each partition the batch changed, the difference between its
// ranked rows before and after, and forgets the partitions left empty.
func (r *rank) diffTouched() {
	for _, t := range r.touched {
		before, after := r.before[t.from:t.to], r.ranked(t.p.rows)
		if r.rowNumber {
			r.diffNumbered(before, after)
		} else {
			r.diffSet(before, after)
		}
		if len(t.p.rows) == 0 && r.parts[t.p.enc] == t.p {
			delete(r.parts, t.p.enc)
		}
	}
	clear(r.before)
	r.touched, r.before = r.touched[:0], r.before[:0]
	for _, x := range r.dropped {
		if len(r.free) == maxFreeRows {
			break // retractions freed more than inserts are likely to take
		}
		clear(x.vals) // its strings are garbage now
		r.free = append(r.free, x)
	}
	clear(r.dropped)
	r.dropped = r.dropped[:0]
}

// diffNumbered compares row by row number: a number whose row changed is updated, a
// number gained inserted, one lost deleted.
func (r *rank) diffNumbered(before, after []*rankRow) {
	for k := range max(len(before), len(after)) {
		number := int64(r.start + k + 1)
		switch {
		case k >= len(after):
			r.add(before[k], number, exec.Delete)
		case k >= len(before):
			r.add(after[k], number, exec.Insert)
		case before[k] == after[k] || equalValues(before[k].vals, after[k].vals):
		default:
			r.add(before[k], number, exec.UpdateBefore)
			r.add(after[k], number, exec.UpdateAfter)
		}
	}
}

// diffSet compares the ranked rows as sets: those that left are deleted, those that
// entered inserted; a row that left and an equal one that entered cancel out. When the
// last row wins, the one row replacing another is an update.
func (r *rank) diffSet(before, after []*rankRow) {
	r.stamp++
	for _, x := range before {
		x.mark = r.stamp
	}
	var entered []*rankRow
	for _, x := range after {
		if x.mark == r.stamp {
			x.mark = 0 // in both
		} else {
			entered = append(entered, x)
		}
	}
	var left []*rankRow
	for _, x := range before {
		if x.mark == r.stamp {
			left = append(left, x)
		}
	}
	switch {
	case len(left) == 1 && len(entered) == 1: // a Top-1's usual change
		r.diffKeys[0] = encodeKey(r.diffKeys[0][:0], left[0].vals)
		r.diffKeys[1] = encodeKey(r.diffKeys[1][:0], entered[0].vals)
		if string(r.diffKeys[0]) == string(r.diffKeys[1]) {
			return // the row left and an equal one came
		}
	case len(left) > 0 && len(entered) > 0:
		gone := map[string][]int{}
		for i, x := range left {
			k := string(encodeKey(nil, x.vals))
			gone[k] = append(gone[k], i)
		}
		kept := entered[:0]
		for _, x := range entered {
			k := string(encodeKey(nil, x.vals))
			if l := gone[k]; len(l) > 0 {
				left[l[0]], gone[k] = nil, l[1:]
				continue
			}
			kept = append(kept, x)
		}
		entered = kept
		left = slices.DeleteFunc(left, func(x *rankRow) bool { return x == nil })
	}
	if r.lastWins && len(left) == 1 && len(entered) == 1 {
		r.add(left[0], 0, exec.UpdateBefore)
		r.add(entered[0], 0, exec.UpdateAfter)
		return
	}
	for _, x := range left {
		r.add(x, 0, exec.Delete)
	}
	for _, x := range entered {
		r.add(x, 0, exec.Insert)
	}
}

// first applies a row of a keep-first deduplication.
func (r *rank) first(row []value, kg uint16) {
	t := row[r.timeCol]
	if t.null {
		return // in no event time, like a row without a time in a window
	}
	p := r.partition(row, kg, true)
	switch {
	case p.done:
		if t.i < p.rows[0].vals[r.timeCol].i {
			r.late++ // it would have been first, but its key's row is out
		}
	case len(p.rows) == 0 || t.i < p.rows[0].vals[r.timeCol].i:
		p.rows = []*rankRow{{vals: ownedRow(row), seq: r.seq}}
		r.seq++
		r.markDirty(p)
		if t.i <= r.watermark {
			r.emitFirst(p)
		} else {
			r.pending[p] = true
		}
	}
}

// emitFirst emits a keep-first key's row, final.
func (r *rank) emitFirst(p *rankPart) {
	r.add(p.rows[0], 0, exec.Insert)
	p.done = true
	delete(r.pending, p)
	r.markDirty(p)
}

// ProcessWatermark emits what the watermark makes final, oldest first: the rows of
// keep-first keys whose time it passed, and the ranked rows of the windows that ended,
// which it then forgets. It passes the watermark on.
func (r *rank) ProcessWatermark(ctx context.Context, wm int64) error {
	r.watermark = max(r.watermark, wm)
	switch r.mode {
	case keepFirst:
		var ready []*rankPart
		for p := range r.pending {
			if p.rows[0].vals[r.timeCol].i <= r.watermark {
				ready = append(ready, p)
			}
		}
		slices.SortFunc(ready, func(a, b *rankPart) int {
			return cmp.Or(cmp.Compare(a.rows[0].vals[r.timeCol].i, b.rows[0].vals[r.timeCol].i), cmp.Compare(a.rows[0].seq, b.rows[0].seq))
		})
		for _, p := range ready {
			r.emitFirst(p)
		}
	case windowTopN:
		var ends []int64
		for e := range r.byEnd {
			if e <= r.watermark {
				ends = append(ends, e)
			}
		}
		slices.Sort(ends)
		for _, e := range ends {
			for _, p := range r.byEnd[e] {
				for k, x := range r.ranked(p.rows) {
					r.add(x, int64(r.start+k+1), exec.Insert)
				}
				delete(r.parts, p.enc)
				r.markDirty(p)
			}
			delete(r.byEnd, e)
		}
	}
	if err := r.emit(ctx); err != nil {
		return err
	}
	return r.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
}

// add appends a row to the output, with its row number if the output has one.
func (r *rank) add(x *rankRow, number int64, kind exec.RowKind) {
	for c, v := range x.vals {
		r.changes.col[c](v)
	}
	if r.rowNumber {
		r.changes.col[r.width](value{i: number})
	}
	r.changes.row(kind)
}

// emit sends the rows added so far.
func (r *rank) emit(ctx context.Context) error { return r.changes.emit(ctx, r.out) }

// LateRows counts the rows dropped for arriving after the watermark made their result
// final: a window Top-N's rows of fired windows, a keep-first deduplication's rows
// earlier than their key's emitted row.
func (r *rank) LateRows() int64 { return r.late }

// Close releases the builder.
func (r *rank) Close() error {
	r.changes.release()
	return nil
}

func (r *rank) String() string { return fmt.Sprintf("rank(%s)", r.n.Describe()) }
