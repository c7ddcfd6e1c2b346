package ops

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
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
	defer mem.AssertSize(t, 0)
	store, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
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
