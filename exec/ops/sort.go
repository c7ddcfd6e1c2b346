package ops

import (
	"container/heap"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// sorter is the operator of a plan's Sort: ORDER BY without LIMIT. By time, rows wait
// in a heap (earliest time first) until the watermark passes them; then the rows it
// passed are sorted by all the keys and emitted, and the watermark goes on. Over bounded
// input, rows are kept as a multiset (an updating input's retractions take rows out) and
// emitted sorted when the input ends. Rows of equal keys keep their order of arrival.
type sorter struct {
	n      *planner.Sort
	width  int
	order  []rankKey
	byTime bool
	time   int // ByTime: the time column

	out     exec.Output
	changes *changes

	pending sortHeap            // ByTime: the rows the watermark has not passed
	rows    map[string]*sortRow // bounded: every row, by its encoded values
	dirty   map[int64]*sortRow  // rows changed since the last snapshot (count 0: gone)
	seq     int64               // arrival number of the next row
	wm      int64               // the watermark
	late    int64               // ByTime: rows dropped for arriving at or before the watermark
	state   *KeyedState
	keyBuf  []byte
	scratch []value

	lastBytes, lastKeys int64
}

// sortRow is a kept row: its values, its arrival number and, over bounded input, how
// many times it is there.
type sortRow struct {
	seq   int64
	count int64
	enc   string // bounded: the encoded values, its key in rows
	vals  []value
}

var (
	_ exec.Operator         = (*sorter)(nil)
	_ exec.WatermarkHandler = (*sorter)(nil)
	_ exec.Finisher         = (*sorter)(nil)
	_ exec.LateCounter      = (*sorter)(nil)
	_ exec.Closer           = (*sorter)(nil)
)

// NewSort returns the operator for a plan's Sort node; ks is where it keeps its
// checkpointed state (nil without checkpoints).
func NewSort(mem memory.Allocator, n *planner.Sort, out exec.Output, ks *KeyedState) exec.Operator {
	in := exec.ArrowSchema(n.Input.Schema())
	s := &sorter{n: n, width: len(in.Fields()), byTime: n.ByTime, out: out, changes: newChanges(mem, n.Schema()),
		rows: map[string]*sortRow{}, dirty: map[int64]*sortRow{}, wm: exec.MinWatermark, state: ks}
	for _, k := range n.Keys {
		s.order = append(s.order, rankKey{col: k.Col, desc: k.Desc, less: less(in.Field(k.Col).Type.ID())})
	}
	s.time = n.Keys[0].Col
	s.scratch = make([]value, s.width)
	return s
}

// Process keeps a batch's rows: by time, each waits for the watermark (a row it already
// passed is late); over bounded input, inserts add to the multiset and retractions take
// out.
func (s *sorter) Process(_ context.Context, _ int, b exec.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	reads, err := readers(b.Rec, allColumns(s.width), nil)
	if err != nil {
		return err
	}
	row := s.scratch
	for i := 0; i < n; i++ {
		for c, read := range reads {
			row[c] = read(i)
		}
		kind := b.Kind(i)
		if s.byTime {
			if kind.IsRetraction() {
				return fmt.Errorf("%s reads insert-only input, got a %s row", s, kind)
			}
			if t := row[s.time]; t.null || t.i <= s.wm {
				s.late++ // a NULL time is in no event time
				continue
			}
			x := &sortRow{seq: s.seq, count: 1, vals: ownedRow(row)}
			s.seq++
			heap.Push(&s.pending, pendingSort{t: x.vals[s.time].i, row: x})
			s.markDirty(x)
			continue
		}
		s.keyBuf = s.keyBuf[:0]
		for _, v := range row {
			s.keyBuf = appendValueBytes(s.keyBuf, v)
		}
		x := s.rows[string(s.keyBuf)]
		if kind.IsRetraction() {
			if x == nil {
				continue // a retraction of a row never seen: nothing to take out
			}
			x.count--
			if x.count == 0 {
				delete(s.rows, x.enc)
			}
			s.markDirty(x)
			continue
		}
		if x == nil {
			x = &sortRow{seq: s.seq, enc: string(s.keyBuf), vals: ownedRow(row)}
			s.seq++
			s.rows[x.enc] = x
		}
		x.count++
		s.markDirty(x)
	}
	return nil
}

func (s *sorter) markDirty(x *sortRow) {
	if s.state != nil {
		s.dirty[x.seq] = x
	}
}

// ProcessWatermark emits, sorted, the rows the watermark passed (by time), and passes
// the watermark on. Over bounded input it only passes it on: nothing is emitted before
// the input ends.
func (s *sorter) ProcessWatermark(ctx context.Context, wm int64) error {
	s.wm = max(s.wm, wm)
	if s.byTime && len(s.pending) > 0 && s.pending[0].t <= s.wm {
		var ready []*sortRow
		for len(s.pending) > 0 && s.pending[0].t <= s.wm {
			ready = append(ready, heap.Pop(&s.pending).(pendingSort).row)
		}
		if err := s.emit(ctx, ready); err != nil {
			return err
		}
		s.gone(ready)
	}
	return s.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
}

// Finish emits every row of bounded input, sorted (by time, the final watermark has).
func (s *sorter) Finish(ctx context.Context) error {
	if s.byTime {
		return nil
	}
	ready := make([]*sortRow, 0, len(s.rows))
	for _, x := range s.rows {
		ready = append(ready, x)
	}
	if err := s.emit(ctx, ready); err != nil {
		return err
	}
	clear(s.rows)
	s.gone(ready)
	return nil
}

// gone forgets emitted rows; the next snapshot deletes them.
func (s *sorter) gone(rows []*sortRow) {
	for _, x := range rows {
		x.count = 0
		s.markDirty(x)
	}
}

// emit sends rows sorted by the keys, then arrival, each as often as it is there.
func (s *sorter) emit(ctx context.Context, rows []*sortRow) error {
	slices.SortFunc(rows, func(a, b *sortRow) int {
		if c := s.compare(a.vals, b.vals); c != 0 {
			return c
		}
		return int(a.seq - b.seq)
	})
	for _, x := range rows {
		for range x.count {
			for c, v := range x.vals {
				s.changes.col[c](v)
			}
			s.changes.row(exec.Insert)
			if len(s.changes.kinds) >= overBatchRows {
				if err := s.changes.emit(ctx, s.out); err != nil {
					return err
				}
			}
		}
	}
	return s.changes.emit(ctx, s.out)
}

func (s *sorter) compare(a, b []value) int {
	r := rank{order: s.order}
	return r.compare(a, b)
}

// LateRows counts the rows dropped for arriving at or before the watermark.
func (s *sorter) LateRows() int64 { return s.late }

// Close releases the builder.
func (s *sorter) Close() error {
	s.changes.release()
	return nil
}

func (s *sorter) String() string { return fmt.Sprintf("sort(%s)", s.n.Describe()) }

// pendingSort is a row waiting for the watermark, in the heap of all of them.
type pendingSort struct {
	t   int64
	row *sortRow
}

// sortHeap is a min-heap of rows by time, then arrival.
type sortHeap []pendingSort

func (h sortHeap) Len() int { return len(h) }
func (h sortHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || h[i].t == h[j].t && h[i].row.seq < h[j].row.seq
}
func (h sortHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sortHeap) Push(x any)   { *h = append(*h, x.(pendingSort)) }
func (h *sortHeap) Pop() any {
	q := *h
	x := q[len(q)-1]
	q[len(q)-1] = pendingSort{}
	*h = q[:len(q)-1]
	return x
}
