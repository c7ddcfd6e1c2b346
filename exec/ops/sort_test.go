package ops

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// sortStep is one thing a sort test does: feed rows (of the given kinds), pass a
// watermark, take a snapshot (checkpoint 1) or end the input.
type sortStep struct {
	rows      string
	kinds     []exec.RowKind
	watermark int64
	snapshot  bool
	finish    bool
}

// runSort runs steps from step from on op and returns what it emitted, "|" at the
// snapshot, and the snapshot's handle.
func runSort(t *testing.T, mem memory.Allocator, n *planner.Sort, op exec.Operator, steps []sortStep, from int) (string, []byte) {
	t.Helper()
	var handle []byte
	ctx := context.Background()
	out := op.(*sorter).out.(*watermarks)
	for _, s := range steps[from:] {
		switch {
		case s.snapshot:
			h, err := op.(exec.Snapshotter).Snapshot(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			handle = h
			out.rows = append(out.rows, "|")
		case s.finish:
			if err := op.(exec.Finisher).Finish(ctx); err != nil {
				t.Fatal(err)
			}
		case s.rows != "":
			b := batch(t, mem, n.Input.Schema(), s.rows, s.kinds...)
			err := op.Process(ctx, 0, b)
			b.Release()
			if err != nil {
				t.Fatal(err)
			}
		default:
			if err := op.(exec.WatermarkHandler).ProcessWatermark(ctx, s.watermark); err != nil {
				t.Fatal(err)
			}
		}
	}
	return strings.Join(out.rows, " "), handle
}

// checkSortRestore runs steps on a sort, then again on one restored from the snapshot
// step (the step index snap), and wants the same output after the snapshot, and want
// in all.
func checkSortRestore(t *testing.T, n *planner.Sort, steps []sortStep, snap int, want string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	ks := &KeyedState{Store: store, Namespace: "sort-1", FirstKG: 0, LastKG: exec.MaxParallelism - 1}
	original := NewSort(mem, n, &watermarks{}, ks)
	defer original.(exec.Closer).Close()
	all, handle := runSort(t, mem, n, original, steps, 0)
	if all != want {
		t.Errorf("emitted:\n%s\nwant:\n%s", all, want)
	}
	_, after, _ := strings.Cut(all, "| ")

	restored := NewSort(mem, n, &watermarks{}, ks)
	defer restored.(exec.Closer).Close()
	if err := restored.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	if got, _ := runSort(t, mem, n, restored, steps, snap+1); got != after {
		t.Errorf("restored run:\n%s\noriginal after the checkpoint:\n%s", got, after)
	}
}

// By time: rows come out when the watermark passes them, sorted by time and then by the
// later keys (k descending, ties by arrival); a row at or before the watermark is late.
// The pending rows and the watermark survive a checkpoint.
func TestSortByTime(t *testing.T) {
	in := planner.Schema{{Name: "ts", Type: planner.TypeTS}, {Name: "k", Type: planner.TypeInt}, {Name: "s", Type: planner.TypeString}}
	n := &planner.Sort{Input: input{schema: in}, Keys: []planner.SortKey{{Col: 0}, {Col: 1, Desc: true}}, ByTime: true}
	steps := []sortStep{
		{rows: `[{"ts":5,"k":1,"s":"a"},{"ts":3,"k":1,"s":"b"},{"ts":3,"k":2,"s":"c"},{"ts":9,"k":1,"s":"d"},{"ts":3,"k":2,"s":"c2"},{"ts":null,"k":0,"s":"no time"}]`},
		{watermark: 4},
		{snapshot: true},
		{rows: `[{"ts":4,"k":9,"s":"late"},{"ts":6,"k":0,"s":"e"},{"ts":5,"k":3,"s":"f"}]`},
		{watermark: 10},
		{rows: `[{"ts":11,"k":1,"s":"g"}]`},
		{watermark: exec.MaxWatermark},
	}
	want := "+I[1970-01-01 00:00:00.003Z, 2, c] +I[1970-01-01 00:00:00.003Z, 2, c2] +I[1970-01-01 00:00:00.003Z, 1, b] wm | " +
		"+I[1970-01-01 00:00:00.005Z, 3, f] +I[1970-01-01 00:00:00.005Z, 1, a] +I[1970-01-01 00:00:00.006Z, 0, e] +I[1970-01-01 00:00:00.009Z, 1, d] wm " +
		"+I[1970-01-01 00:00:00.011Z, 1, g] wm"
	checkSortRestore(t, n, steps, 2, want)

	// A second checkpoint forgets the rows emitted since the first: restored from it, the
	// sort emits only what came after.
	second := append(append([]sortStep{}, steps[:5]...), sortStep{snapshot: true})
	second = append(second, steps[5:]...)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	ks := &KeyedState{Store: store, Namespace: "sort-1", FirstKG: 0, LastKG: exec.MaxParallelism - 1}
	ctx := context.Background()
	first := NewSort(mem, n, &watermarks{}, ks)
	defer first.(exec.Closer).Close()
	runSort(t, mem, n, first, second[:2], 0)
	if _, err := first.(exec.Snapshotter).Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	runSort(t, mem, n, first, second[3:5], 0)
	h2, err := first.(exec.Snapshotter).Snapshot(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	again := NewSort(mem, n, &watermarks{}, ks)
	defer again.(exec.Closer).Close()
	if err := again.(exec.Restorer).Restore(h2); err != nil {
		t.Fatal(err)
	}
	if got, _ := runSort(t, mem, n, again, second, 6); got != "+I[1970-01-01 00:00:00.011Z, 1, g] wm" {
		t.Errorf("restored from checkpoint 2: %s", got)
	}

	op := NewSort(mem, n, &watermarks{}, nil)
	defer op.(exec.Closer).Close()
	runSort(t, mem, n, op, []sortStep{steps[0], steps[1], steps[3]}, 0)
	if late := op.(exec.LateCounter).LateRows(); late != 2 {
		t.Errorf("late rows: %d, want 2 (the row at the watermark and the one without a time)", late)
	}
}

// Over bounded input: an updating input's changes are applied, and the rows come out
// sorted when the input ends (n descending, then k; NULL last descending), duplicates
// as often as they are there. What was kept survives a checkpoint.
func TestSortBounded(t *testing.T) {
	in := planner.Schema{{Name: "k", Type: planner.TypeString}, {Name: "n", Type: planner.TypeBigInt}}
	n := &planner.Sort{Input: input{schema: in, updating: true}, Keys: []planner.SortKey{{Col: 1, Desc: true}, {Col: 0}}}
	steps := []sortStep{
		{rows: `[{"k":"a","n":1},{"k":"b","n":2},{"k":"a","n":1},{"k":"a","n":3},{"k":"c","n":2}]`,
			kinds: []exec.RowKind{exec.Insert, exec.Insert, exec.UpdateBefore, exec.UpdateAfter, exec.Insert}},
		{watermark: 7},
		{snapshot: true},
		{rows: `[{"k":"b","n":2},{"k":"b","n":5},{"k":"d","n":1},{"k":"d","n":1},{"k":"x","n":null},{"k":"gone","n":9}]`,
			kinds: []exec.RowKind{exec.Delete, exec.Insert, exec.Insert, exec.Insert, exec.Insert, exec.Insert}},
		{rows: `[{"k":"gone","n":9},{"k":"never","n":1}]`, kinds: []exec.RowKind{exec.Delete, exec.Delete}},
		{finish: true},
	}
	want := "wm | +I[b, 5] +I[a, 3] +I[c, 2] +I[d, 1] +I[d, 1] +I[x, null]"
	checkSortRestore(t, n, steps, 2, want)
}

// BenchmarkSort sorts 64 batches of 4096 rows (a BIGINT key with repeats, a BIGINT time,
// a string): over bounded input (kept, emitted sorted at the end) and by time (each
// batch's rows emitted when the next watermark passes them). The baseline sorts the
// same keys as a Go slice of the rows' values, for a ratio in the same run.
func BenchmarkSort(b *testing.B) {
	in := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "ts", Type: planner.TypeBigInt}, {Name: "s", Type: planner.TypeString}}
	const batches, rows = 64, 4096
	mem := memory.NewGoAllocator()
	recs := make([]exec.Batch, batches)
	for j := range recs {
		rb := array.NewRecordBuilder(mem, exec.ArrowSchema(in))
		for i := 0; i < rows; i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64((j*rows + i) * 7919 % 100_003))
			rb.Field(1).(*array.Int64Builder).Append(int64(j*rows + i))
			rb.Field(2).(*array.StringBuilder).Append("payload")
		}
		recs[j] = exec.Batch{Rec: rb.NewRecord()}
		rb.Release()
		defer recs[j].Release()
	}
	run := func(b *testing.B, n *planner.Sort) {
		b.ReportAllocs()
		ctx := context.Background()
		for i := 0; i < b.N; i++ {
			op := NewSort(mem, n, exec.OutputFunc(func(context.Context, exec.Batch) error { return nil }), nil)
			op.(*sorter).out = wmDiscard{}
			for j, rec := range recs {
				if err := op.Process(ctx, 0, rec); err != nil {
					b.Fatal(err)
				}
				if n.ByTime {
					if err := op.(exec.WatermarkHandler).ProcessWatermark(ctx, int64((j+1)*rows-1)); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := op.(exec.Finisher).Finish(ctx); err != nil {
				b.Fatal(err)
			}
			op.(exec.Closer).Close()
		}
		b.ReportMetric(float64(b.N*batches*rows)/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("bounded", func(b *testing.B) {
		run(b, &planner.Sort{Input: input{schema: in}, Keys: []planner.SortKey{{Col: 0, Desc: true}, {Col: 1}}})
	})
	b.Run("by time", func(b *testing.B) {
		run(b, &planner.Sort{Input: input{schema: in}, Keys: []planner.SortKey{{Col: 1}, {Col: 0}}, ByTime: true})
	})
	b.Run("baseline slices.SortFunc", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			vals := make([][2]int64, 0, batches*rows)
			for _, rec := range recs {
				k, ts := rec.Rec.Column(0).(*array.Int64), rec.Rec.Column(1).(*array.Int64)
				for r := 0; r < rows; r++ {
					vals = append(vals, [2]int64{k.Value(r), ts.Value(r)})
				}
			}
			slices.SortFunc(vals, func(x, y [2]int64) int {
				if x[0] != y[0] {
					return cmp.Compare(y[0], x[0])
				}
				return cmp.Compare(x[1], y[1])
			})
		}
		b.ReportMetric(float64(b.N*batches*rows)/b.Elapsed().Seconds(), "rows/s")
	})
}

// wmDiscard drops rows and watermarks.
type wmDiscard struct{}

func (wmDiscard) Emit(context.Context, exec.Batch) error     { return nil }
func (wmDiscard) EmitWatermark(context.Context, int64) error { return nil }
