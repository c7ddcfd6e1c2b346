package ops

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// rankInput is the input of most rank tests: a key, a value to rank by, an id.
var rankInput = planner.Schema{{Name: "k", Type: planner.TypeString}, {Name: "v", Type: planner.TypeBigInt}, {Name: "id", Type: planner.TypeBigInt}}

// rankHarness feeds a rank operator and reads what it emitted since the last look.
type rankHarness struct {
	t   *testing.T
	mem memory.Allocator
	n   *planner.Rank
	op  exec.Operator
	out *watermarks
}

func newRankHarness(t *testing.T, mem memory.Allocator, n *planner.Rank, ks *KeyedState) *rankHarness {
	h := &rankHarness{t: t, mem: mem, n: n, out: &watermarks{}}
	h.op = NewRank(mem, n, h.out, ks)
	t.Cleanup(func() { h.op.(exec.Closer).Close() })
	return h
}

func (h *rankHarness) feed(rows string, kinds ...exec.RowKind) {
	h.t.Helper()
	b := batch(h.t, h.mem, h.n.Input.Schema(), rows, kinds...)
	defer b.Release()
	if err := h.op.Process(context.Background(), 0, b); err != nil {
		h.t.Fatal(err)
	}
}

func (h *rankHarness) watermark(wm int64) {
	h.t.Helper()
	if err := h.op.(exec.WatermarkHandler).ProcessWatermark(context.Background(), wm); err != nil {
		h.t.Fatal(err)
	}
}

// expect checks the rows emitted since the last call.
func (h *rankHarness) expect(want string) {
	h.t.Helper()
	if got := strings.Join(h.out.rows, " "); got != want {
		h.t.Errorf("emitted:\n%s\nwant:\n%s", got, want)
	}
	h.out.rows = nil
}

func (h *rankHarness) snapshot(id int64) []byte {
	h.t.Helper()
	handle, err := h.op.(exec.Snapshotter).Snapshot(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return handle
}

func (h *rankHarness) restore(handle []byte) {
	h.t.Helper()
	if err := h.op.(exec.Restorer).Restore(handle); err != nil {
		h.t.Fatal(err)
	}
}

func openStore(t *testing.T) *KeyedState {
	return &KeyedState{Store: testStore(t), Namespace: "rank", LastKG: exec.MaxParallelism - 1}
}

// testStore opens a state store in the test's temporary directory, closed when the
// test ends.
func testStore(t *testing.T) *state.Store {
	t.Helper()
	store, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// Top-2 per key by v descending, with the row number: a row entering shifts the rows
// below it (-U/+U per number), the row pushed out is deleted with its number; equal
// values rank by arrival; a batch emits only its net change; a restored operator has
// the same rows and goes on numbering ties after them.
func TestTopNWithRowNumber(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ks := openStore(t)
	n := &planner.Rank{Input: input{schema: rankInput}, PartitionBy: []int{0}, OrderBy: []planner.SortKey{{Col: 1, Desc: true}},
		Start: 1, End: 2, RowNumber: true, Name: "rn"}
	h := newRankHarness(t, mem, n, ks)
	h.feed(`[{"k":"a","v":10,"id":1}]`)
	h.expect("+I[a, 10, 1, 1]")
	h.feed(`[{"k":"a","v":20,"id":2},{"k":"b","v":5,"id":3}]`)
	h.expect("-U[a, 10, 1, 1] +U[a, 20, 2, 1] +I[a, 10, 1, 2] +I[b, 5, 3, 1]")
	h.feed(`[{"k":"a","v":15,"id":4}]`)
	h.expect("-U[a, 10, 1, 2] +U[a, 15, 4, 2]")
	h.feed(`[{"k":"a","v":1,"id":5}]`) // below the top 2: nothing
	h.expect("")
	// Within one batch, 30 enters first and is pushed to second by 40: net change only.
	h.feed(`[{"k":"a","v":30,"id":6},{"k":"a","v":40,"id":7}]`)
	h.expect("-U[a, 20, 2, 1] +U[a, 40, 7, 1] -U[a, 15, 4, 2] +U[a, 30, 6, 2]")
	handle := h.snapshot(1)
	h.feed(`[{"k":"a","v":30,"id":8}]`) // ties with id 6, which came first
	h.expect("")

	r := newRankHarness(t, mem, n, ks)
	r.restore(handle)
	r.feed(`[{"k":"a","v":30,"id":8},{"k":"b","v":6,"id":9}]`)
	r.expect("-U[b, 5, 3, 1] +U[b, 6, 9, 1] +I[b, 5, 3, 2]")
	r.feed(`[{"k":"a","v":35,"id":10}]`)
	r.expect("-U[a, 30, 6, 2] +U[a, 35, 10, 2]")
	r.watermark(100)
	r.expect("wm")
}

// Without the row number, a Top-N emits the rows that enter (+I) and those pushed out
// (-D); a row number range from 2 works alike.
func TestTopNWithoutRowNumber(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	n := &planner.Rank{Input: input{schema: rankInput}, PartitionBy: []int{0}, OrderBy: []planner.SortKey{{Col: 1}}, Start: 1, End: 2}
	h := newRankHarness(t, mem, n, nil)
	h.feed(`[{"k":"a","v":10,"id":1},{"k":"a","v":20,"id":2}]`)
	h.expect("+I[a, 10, 1] +I[a, 20, 2]")
	h.feed(`[{"k":"a","v":5,"id":3}]`)
	h.expect("-D[a, 20, 2] +I[a, 5, 3]")
	h.feed(`[{"k":"a","v":30,"id":4}]`)
	h.expect("")

	second := &planner.Rank{Input: input{schema: rankInput}, OrderBy: []planner.SortKey{{Col: 1}}, Start: 2, End: 3, RowNumber: true, Name: "rn"}
	g := newRankHarness(t, mem, second, nil)
	g.feed(`[{"k":"a","v":10,"id":1}]`)
	g.expect("")
	g.feed(`[{"k":"b","v":20,"id":2},{"k":"c","v":30,"id":3}]`)
	g.expect("+I[b, 20, 2, 2] +I[c, 30, 3, 3]")
	g.feed(`[{"k":"d","v":1,"id":4}]`) // first now: 10 moves to 2nd, 20 to 3rd
	g.expect("-U[b, 20, 2, 2] +U[a, 10, 1, 2] -U[c, 30, 3, 3] +U[b, 20, 2, 3]")
}

// Over an updating input every row is kept: retracting a top row lets the next one in,
// and a row retracted and inserted again unchanged emits nothing.
func TestTopNOverRetractions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ks := openStore(t)
	n := &planner.Rank{Input: input{schema: rankInput, updating: true}, OrderBy: []planner.SortKey{{Col: 1, Desc: true}}, Start: 1, End: 2}
	h := newRankHarness(t, mem, n, ks)
	h.feed(`[{"k":"a","v":3,"id":1},{"k":"b","v":2,"id":1},{"k":"c","v":1,"id":1}]`)
	h.expect("+I[a, 3, 1] +I[b, 2, 1]")
	h.feed(`[{"k":"b","v":2,"id":1},{"k":"b","v":0,"id":2}]`, exec.UpdateBefore, exec.UpdateAfter)
	h.expect("-D[b, 2, 1] +I[c, 1, 1]")
	h.feed(`[{"k":"c","v":1,"id":1},{"k":"c","v":1,"id":1}]`, exec.UpdateBefore, exec.UpdateAfter)
	h.expect("")
	handle := h.snapshot(1)

	r := newRankHarness(t, mem, n, ks)
	r.restore(handle)
	r.feed(`[{"k":"a","v":3,"id":1}]`, exec.Delete)
	r.expect("-D[a, 3, 1] +I[b, 0, 2]")
	r.feed(`[{"k":"x","v":9,"id":9}]`, exec.Delete) // never seen: nothing
	r.expect("")
	r.feed(`[{"k":"c","v":1,"id":1},{"k":"b","v":0,"id":2}]`, exec.Delete, exec.Delete)
	r.expect("-D[c, 1, 1] -D[b, 0, 2]")
	if got := len(r.op.(*rank).parts); got != 0 {
		t.Errorf("%d partitions left after every row was retracted", got)
	}
}

// Deduplication on event time. Keeping the first row emits a key's earliest row once
// the watermark passes it, inserts only; a row earlier than the emitted one is late.
// Keeping the last row updates a key's row, a later arrival winning a tie.
func TestDeduplicate(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ks := openStore(t)
	ts := planner.TypeBigInt // the operator reads times as integers; BIGINT prints them so
	events := planner.Schema{{Name: "k", Type: planner.TypeString}, {Name: "id", Type: planner.TypeBigInt}, {Name: "ts", Type: ts}}
	timed := &planner.WatermarkAssigner{Input: input{schema: events}, TimeCol: 2}
	first := &planner.Rank{Input: timed, PartitionBy: []int{0}, OrderBy: []planner.SortKey{{Col: 2}}, Start: 1, End: 1}
	if first.Dedup() != planner.KeepFirstRow || first.Updating() {
		t.Fatalf("keep-first is %q, updating %v", first.Dedup(), first.Updating())
	}
	h := newRankHarness(t, mem, first, ks)
	h.feed(`[{"k":"a","id":1,"ts":100},{"k":"b","id":2,"ts":50},{"k":"a","id":3,"ts":90},{"k":"a","id":4,"ts":90}]`)
	h.expect("")
	h.watermark(60)
	h.expect("+I[b, 2, 50] wm")
	handle := h.snapshot(1)

	r := newRankHarness(t, mem, first, ks)
	r.restore(handle)
	r.feed(`[{"k":"b","id":5,"ts":40},{"k":"c","id":6,"ts":55},{"k":"a","id":7,"ts":95},{"k":"b","id":8,"ts":70}]`)
	r.expect("+I[c, 6, 55]") // c's row is behind the watermark already: final at once
	r.watermark(exec.MaxWatermark)
	r.expect("+I[a, 3, 90] wm")
	if late := r.op.(exec.LateCounter).LateRows(); late != 1 {
		t.Errorf("%d late rows, want 1 (b at 40)", late)
	}

	last := &planner.Rank{Input: timed, PartitionBy: []int{0}, OrderBy: []planner.SortKey{{Col: 2, Desc: true}}, Start: 1, End: 1}
	if last.Dedup() != planner.KeepLastRow || !last.Updating() {
		t.Fatalf("keep-last is %q, updating %v", last.Dedup(), last.Updating())
	}
	l := newRankHarness(t, mem, last, nil)
	l.feed(`[{"k":"a","id":1,"ts":100}]`)
	l.expect("+I[a, 1, 100]")
	l.feed(`[{"k":"a","id":2,"ts":100}]`)
	l.expect("-U[a, 1, 100] +U[a, 2, 100]")
	l.feed(`[{"k":"a","id":3,"ts":90}]`)
	l.expect("")
}

// A window Top-N keeps each window's best rows and emits them once, numbered, when the
// watermark passes the window's end, oldest window first; then it forgets the window,
// and a row for it is late. A restored operator fires the windows of its checkpoint.
func TestWindowTopN(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ks := openStore(t)
	ts := planner.Type{Kind: planner.BigInt, NotNull: true} // times print as integers
	schema := planner.Schema{{Name: "window_start", Type: ts}, {Name: "window_end", Type: ts}, {Name: "item", Type: planner.TypeString}, {Name: "total", Type: planner.TypeBigInt}}
	n := &planner.Rank{Input: input{schema: schema}, PartitionBy: []int{0, 1}, OrderBy: []planner.SortKey{{Col: 3, Desc: true}},
		Start: 1, End: 2, RowNumber: true, Name: "rn", Window: &planner.WindowTVF{Kind: "TUMBLE"}, WindowEnd: 1}
	h := newRankHarness(t, mem, n, ks)
	h.feed(`[{"window_start":0,"window_end":10,"item":"a","total":5},{"window_start":0,"window_end":10,"item":"b","total":7},
		{"window_start":10,"window_end":20,"item":"a","total":1},{"window_start":0,"window_end":10,"item":"c","total":6}]`)
	h.expect("")
	handle := h.snapshot(1)
	h.watermark(10)
	h.expect("+I[0, 10, b, 7, 1] +I[0, 10, c, 6, 2] wm")
	h.feed(`[{"window_start":0,"window_end":10,"item":"d","total":9}]`)
	if late := h.op.(exec.LateCounter).LateRows(); late != 1 {
		t.Errorf("%d late rows, want 1", late)
	}
	h.watermark(exec.MaxWatermark)
	h.expect("+I[10, 20, a, 1, 1] wm")
	if got := len(h.op.(*rank).parts); got != 0 {
		t.Errorf("%d partitions left after the final watermark", got)
	}

	r := newRankHarness(t, mem, n, ks)
	r.restore(handle)
	r.feed(`[{"window_start":0,"window_end":10,"item":"d","total":9}]`)
	r.watermark(exec.MaxWatermark)
	r.expect("+I[0, 10, d, 9, 1] +I[0, 10, b, 7, 2] " +
		"+I[10, 20, a, 1, 1] wm")
}

// NULLs rank first ascending and last descending; the operator refuses a retraction
// where it expects inserts only.
func TestRankNullsAndInsertOnly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	asc := &planner.Rank{Input: input{schema: rankInput}, OrderBy: []planner.SortKey{{Col: 1}}, Start: 1, End: 1}
	h := newRankHarness(t, mem, asc, nil)
	h.feed(`[{"k":"a","v":1,"id":1},{"k":"b","v":null,"id":2}]`)
	h.expect("+I[b, null, 2]")
	desc := &planner.Rank{Input: input{schema: rankInput}, OrderBy: []planner.SortKey{{Col: 1, Desc: true}}, Start: 1, End: 1}
	d := newRankHarness(t, mem, desc, nil)
	d.feed(`[{"k":"b","v":null,"id":2},{"k":"a","v":1,"id":1}]`)
	d.expect("+I[a, 1, 1]")

	ts := planner.Type{Kind: planner.Timestamp, Precision: 3, NotNull: true}
	schema := planner.Schema{{Name: "window_start", Type: ts}, {Name: "window_end", Type: ts}, {Name: "v", Type: planner.TypeBigInt}}
	w := &planner.Rank{Input: input{schema: schema}, PartitionBy: []int{0, 1}, OrderBy: []planner.SortKey{{Col: 2}}, Start: 1, End: 1,
		Window: &planner.WindowTVF{Kind: "TUMBLE"}, WindowEnd: 1}
	op := NewRank(mem, w, &watermarks{}, nil)
	defer op.(exec.Closer).Close()
	b := batch(t, mem, schema, `[{"window_start":0,"window_end":10,"v":1}]`, exec.Delete)
	defer b.Release()
	if err := op.Process(context.Background(), 0, b); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Errorf("a retraction into a window Top-N gave %v", err)
	}
}

// BenchmarkTopN ranks 4096-row batches into 1000 partitions, Top-N by a BIGINT. The same
// batch comes again and again: once each partition's top N holds copies of its best
// rows (after the warm-up), later copies tie with them, rank after them and are not
// stored. This is the steady state of a Top-N that most rows miss.
func BenchmarkTopN(b *testing.B) {
	for _, n := range []int64{3, 100} {
		b.Run(fmt.Sprintf("top %d", n), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rb := array.NewRecordBuilder(mem, exec.ArrowSchema(rankInput))
			const rows = 4096
			for i := 0; i < rows; i++ {
				rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("key-%d", (i*7919)%1000))
				rb.Field(1).(*array.Int64Builder).Append(int64(i % 97))
				rb.Field(2).(*array.Int64Builder).Append(int64(i))
			}
			rec := rb.NewRecord()
			defer rec.Release()
			node := &planner.Rank{Input: input{schema: rankInput}, PartitionBy: []int{0}, OrderBy: []planner.SortKey{{Col: 1, Desc: true}},
				Start: 1, End: n, RowNumber: true, Name: "rn"}
			op := NewRank(mem, node, exec.OutputFunc(func(context.Context, exec.Batch) error { return nil }), nil)
			defer op.(exec.Closer).Close()
			ctx := context.Background()
			for range n + 1 { // warm-up: fill each top N with copies of the best row
				if err := op.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkTopOneImproving keeps the best row of 1000 partitions, Top-1 as q9's, where
// every row beats its partition's best: each replaces a stored row (the displaced row's
// storage is reused) and emits its retraction and the new row.
func BenchmarkTopOneImproving(b *testing.B) {
	mem := memory.NewGoAllocator()
	const rows = 4096
	keys := make([]string, rows)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", (i*7919)%1000)
	}
	rb := array.NewRecordBuilder(mem, exec.ArrowSchema(rankInput))
	defer rb.Release()
	next := func(round int) arrow.Record {
		for i := range rows {
			rb.Field(0).(*array.StringBuilder).Append(keys[i])
			rb.Field(1).(*array.Int64Builder).Append(int64(round*rows + i))
			rb.Field(2).(*array.Int64Builder).Append(int64(i))
		}
		return rb.NewRecord()
	}
	node := &planner.Rank{Input: input{schema: rankInput}, PartitionBy: []int{0}, OrderBy: []planner.SortKey{{Col: 1, Desc: true}},
		Start: 1, End: 1}
	op := NewRank(mem, node, exec.OutputFunc(func(_ context.Context, out exec.Batch) error { return nil }), nil)
	defer op.(exec.Closer).Close()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		rec := next(i)
		b.StartTimer()
		if err := op.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
}
