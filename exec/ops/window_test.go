package ops

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// watermarks records the watermarks passed on after the rows.
type watermarks struct {
	collect
	wms []int64
}

func (w *watermarks) EmitWatermark(_ context.Context, wm int64) error {
	w.wms = append(w.wms, wm)
	w.rows = append(w.rows, "wm")
	return nil
}

// TestWindowAggregate: windows emit once, final, when the watermark passes their end,
// oldest first; a row for a window that fired is dropped and counted; a restored
// aggregate keeps its watermark, so it drops the same rows.
func TestWindowAggregate(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	ts := planner.Type{Kind: planner.Timestamp, Precision: 3, NotNull: true}
	schema := planner.Schema{{Name: "window_start", Type: ts}, {Name: "window_end", Type: ts}, {Name: "k", Type: planner.TypeString}, {Name: "v", Type: planner.TypeBigInt}}
	node := &planner.Aggregate{Input: input{schema: schema}, Keys: []int{0, 1, 2},
		Aggs:   []planner.AggCall{{Fn: planner.AggCount, Arg: -1, T: planner.TypeBigInt}, {Fn: planner.AggSum, Arg: 3, T: planner.TypeBigInt}},
		Names:  []string{"window_start", "window_end", "k", "n", "s"},
		Window: &planner.WindowTVF{Kind: "TUMBLE"}, WindowEnd: 1}
	ks := &KeyedState{Store: store, Namespace: "w", LastKG: exec.MaxParallelism - 1}
	ctx := context.Background()
	feed := func(op exec.Operator, rows string) {
		b := batch(t, mem, schema, rows)
		defer b.Release()
		if err := op.Process(ctx, 0, b); err != nil {
			t.Fatal(err)
		}
	}
	op := NewAggregate(mem, node, &watermarks{}, ks, Cache{MaxGroups: 1})
	defer op.(exec.Closer).Close()
	out := op.(*aggregate).out.(*watermarks)
	feed(op, `[{"window_start":0,"window_end":10,"k":"a","v":1},{"window_start":10,"window_end":20,"k":"a","v":5},
		{"window_start":0,"window_end":10,"k":"b","v":2},{"window_start":0,"window_end":10,"k":"a","v":3}]`)
	if err := op.(exec.Flusher).Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(out.rows) != 0 {
		t.Fatalf("a window aggregate emitted before the watermark: %v", out.rows)
	}
	if err := op.(exec.WatermarkHandler).ProcessWatermark(ctx, 10); err != nil {
		t.Fatal(err)
	}
	handle, err := op.(exec.Snapshotter).Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	feed(op, `[{"window_start":0,"window_end":10,"k":"a","v":100},{"window_start":10,"window_end":20,"k":"b","v":7}]`)
	if err := op.(exec.WatermarkHandler).ProcessWatermark(ctx, exec.MaxWatermark); err != nil {
		t.Fatal(err)
	}
	want := "+I[1970-01-01 00:00:00Z, 1970-01-01 00:00:00.01Z, a, 2, 4] +I[1970-01-01 00:00:00Z, 1970-01-01 00:00:00.01Z, b, 1, 2] wm " +
		"+I[1970-01-01 00:00:00.01Z, 1970-01-01 00:00:00.02Z, a, 1, 5] +I[1970-01-01 00:00:00.01Z, 1970-01-01 00:00:00.02Z, b, 1, 7] wm"
	if got := strings.Join(out.rows, " "); got != want {
		t.Errorf("emitted:\n%s\nwant:\n%s", got, want)
	}
	if late := op.(exec.LateCounter).LateRows(); late != 1 {
		t.Errorf("%d late rows, want 1", late)
	}

	// Restored from checkpoint 1: the late row is late again, window [10, 20) still open.
	restored := NewAggregate(mem, node, &watermarks{}, ks, Cache{})
	defer restored.(exec.Closer).Close()
	if err := restored.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	feed(restored, `[{"window_start":0,"window_end":10,"k":"a","v":100},{"window_start":10,"window_end":20,"k":"b","v":7}]`)
	if err := restored.(exec.WatermarkHandler).ProcessWatermark(ctx, exec.MaxWatermark); err != nil {
		t.Fatal(err)
	}
	_, wantAfter, _ := strings.Cut(want, "wm ")
	if got := strings.Join(restored.(*aggregate).out.(*watermarks).rows, " "); got != wantAfter {
		t.Errorf("restored emitted:\n%s\nwant:\n%s", got, wantAfter)
	}
}

// TestWindowEmitControl: with an allowed lateness a fired window updates its row when a
// late row within the lateness arrives, and forgets the window after it; a restored
// aggregate remembers what each window emitted. Early firing emits open windows'
// partial rows, and the final row updates them.
func TestWindowEmitControl(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	ts := planner.Type{Kind: planner.Timestamp, Precision: 3, NotNull: true}
	schema := planner.Schema{{Name: "window_start", Type: ts}, {Name: "window_end", Type: ts}, {Name: "v", Type: planner.TypeBigInt}}
	node := func(e planner.EmitControl) *planner.Aggregate {
		return &planner.Aggregate{Input: input{schema: schema}, Keys: []int{0, 1},
			Aggs:   []planner.AggCall{{Fn: planner.AggSum, Arg: 2, T: planner.TypeBigInt}},
			Names:  []string{"window_start", "window_end", "s"},
			Window: &planner.WindowTVF{Kind: "TUMBLE"}, WindowEnd: 1, Emit: e}
	}
	ctx := context.Background()
	run := func(op exec.Operator, rows string, wm int64) string {
		t.Helper()
		out := op.(*aggregate).out.(*watermarks)
		out.rows = nil
		if rows != "" {
			b := batch(t, mem, schema, rows)
			defer b.Release()
			if err := op.Process(ctx, 0, b); err != nil {
				t.Fatal(err)
			}
		}
		if err := op.(exec.Flusher).Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if wm != 0 {
			if err := op.(exec.WatermarkHandler).ProcessWatermark(ctx, wm); err != nil {
				t.Fatal(err)
			}
		}
		return strings.Join(out.rows, " ")
	}
	ks := &KeyedState{Store: store, Namespace: "e", LastKG: exec.MaxParallelism - 1}
	lateness := node(planner.EmitControl{AllowLateness: 5})
	op := NewAggregate(mem, lateness, &watermarks{}, ks, Cache{})
	defer op.(exec.Closer).Close()
	const w0 = "1970-01-01 00:00:00Z, 1970-01-01 00:00:00.01Z"
	for _, step := range []struct {
		rows string
		wm   int64
		want string
	}{
		{`[{"window_start":0,"window_end":10,"v":1}]`, 0, ""},
		{"", 10, "+I[" + w0 + ", 1] wm"},
		{`[{"window_start":0,"window_end":10,"v":2}]`, 0, "-U[" + w0 + ", 1] +U[" + w0 + ", 3]"},
		{`[{"window_start":0,"window_end":10,"v":4}]`, 14, "-U[" + w0 + ", 3] +U[" + w0 + ", 7] wm"},
	} {
		if got := run(op, step.rows, step.wm); got != step.want {
			t.Fatalf("after %s and watermark %d emitted %q, want %q", step.rows, step.wm, got, step.want)
		}
	}
	handle, err := op.(exec.Snapshotter).Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	restored := NewAggregate(mem, lateness, &watermarks{}, ks, Cache{})
	defer restored.(exec.Closer).Close()
	if err := restored.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	if got, want := run(restored, `[{"window_start":0,"window_end":10,"v":8}]`, 0), "-U["+w0+", 7] +U["+w0+", 15]"; got != want {
		t.Fatalf("restored aggregate emitted %q, want %q", got, want)
	}
	if got := run(restored, `[{"window_start":0,"window_end":10,"v":16}]`, 15); got != "-U["+w0+", 15] +U["+w0+", 31] wm" {
		t.Fatalf("emitted %q", got)
	}
	if got := run(restored, `[{"window_start":0,"window_end":10,"v":32}]`, 0); got != "" || restored.(exec.LateCounter).LateRows() != 1 {
		t.Fatalf("a row after the lateness emitted %q and counted %d late rows", got, restored.(exec.LateCounter).LateRows())
	}

	early := NewAggregate(mem, node(planner.EmitControl{EarlyFireDelay: 1}), &watermarks{}, nil, Cache{})
	defer early.(exec.Closer).Close()
	time.Sleep(2 * time.Millisecond)
	if got := run(early, `[{"window_start":0,"window_end":10,"v":1}]`, 0); got != "+I["+w0+", 1]" {
		t.Fatalf("early firing emitted %q", got)
	}
	time.Sleep(2 * time.Millisecond)
	if got := run(early, `[{"window_start":0,"window_end":10,"v":2}]`, 10); got != "-U["+w0+", 1] +U["+w0+", 3] wm" {
		t.Fatalf("early firing, then the window's end, emitted %q", got)
	}
}

// TestWatermarkPerSplit: rows of a task that reads two splits side by side move the
// watermark only as far as the split behind, while it may still bring rows; once it
// holds nothing back, to the split ahead. Without splits, the greatest time leads.
func TestWatermarkPerSplit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ts := planner.Type{Kind: planner.Timestamp, Precision: 3}
	schema := planner.Schema{{Name: "ts", Type: ts}}
	node := &planner.WatermarkAssigner{Input: input{schema: schema}, TimeCol: 0, Expr: &planner.ColumnRef{Index: 0, Name: "ts", T: ts}, SQL: "ts"}
	ctx := context.Background()
	out := &watermarks{}
	op, err := NewWatermarkAssigner(mem, nil, node, exec.Alignment{}, out)
	if err != nil {
		t.Fatal(err)
	}
	feed := func(rows string, s *exec.Splits) {
		t.Helper()
		b := batch(t, mem, schema, rows)
		defer b.Release()
		b.Splits = s
		if err := op.Process(ctx, 0, b); err != nil {
			t.Fatal(err)
		}
	}
	// Split 0 is read ahead to 100; split 1, not read yet, holds the watermark.
	feed(`[{"ts":50},{"ts":100}]`, &exec.Splits{Of: []int32{0, 0}, Holding: []bool{true, true}})
	feed(`[{"ts":20}]`, &exec.Splits{Of: []int32{1}, Holding: []bool{true, true}})
	// Split 1 read to its high watermark: it holds nothing back.
	feed(`[{"ts":30}]`, &exec.Splits{Of: []int32{1}, Holding: []bool{true, false}})
	feed(`[{"ts":60}]`, nil)
	if got, want := fmt.Sprint(out.wms), "[20 100]"; got != want {
		t.Errorf("watermarks %s, want %s", got, want)
	}
	if got := strings.Count(strings.Join(out.rows, " "), "+I"); got != 5 {
		t.Errorf("%d rows passed on, want 5: %v", got, out.rows)
	}
}
