package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// TIME values (time32[s] keys, time32[ms] under a retracting MIN and MAX) survive a
// checkpoint: the restored aggregate emits what the original emitted after it, and the
// values keep their type and unit.
func TestAggregateSnapshotRestoreTime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	t0, t3 := planner.TimeType(0), planner.TimeType(3)
	schema := planner.Schema{{Name: "k", Type: t0}, {Name: "v", Type: t3}}
	node := &planner.Aggregate{
		Input: input{schema: schema, updating: true}, Keys: []int{0},
		Aggs: []planner.AggCall{
			{Fn: planner.AggMin, Arg: 1, T: t3},
			{Fn: planner.AggMax, Arg: 1, T: t3},
			{Fn: planner.AggCount, Arg: -1, T: planner.TypeBigInt},
		},
		Names: []string{"k", "lo", "hi", "n"},
	}
	ks := &KeyedState{Store: store, Namespace: "agg-time", FirstKG: 0, LastKG: exec.MaxParallelism - 1}
	ctx := context.Background()
	// k is seconds of the day (12:00:00, 13:00:00), v milliseconds.
	steps := []struct {
		json  string
		kinds []exec.RowKind
	}{
		{`[{"k":43200,"v":45296789},{"k":43200,"v":3723000},{"k":46800,"v":86399999}]`, nil},
		// checkpoint 1 here
		{`[{"k":43200,"v":3723000}]`, []exec.RowKind{exec.Delete}},
		{`[{"k":43200,"v":1000},{"k":46800,"v":86399999}]`, []exec.RowKind{exec.Insert, exec.Delete}},
	}
	run := func(op exec.Operator, from, snapshotAt int) []string {
		out := op.(*aggregate).out.(*collect)
		for i := from; i < len(steps); i++ {
			if i == snapshotAt {
				if _, err := op.(exec.Snapshotter).Snapshot(ctx, 1); err != nil {
					t.Fatal(err)
				}
				out.rows = append(out.rows, "|")
			}
			b := batch(t, mem, schema, steps[i].json, steps[i].kinds...)
			if err := op.Process(ctx, 0, b); err != nil {
				t.Fatal(err)
			}
			b.Release()
			if err := op.(exec.Flusher).Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return out.rows
	}
	original := NewAggregate(mem, node, &collect{}, ks, Cache{})
	defer original.(exec.Closer).Close()
	all := strings.Join(run(original, 0, 1), " ")
	_, afterCheckpoint, _ := strings.Cut(all, "| ")
	// Arrow prints time32 values by their unit: whole seconds for TIME(0).
	if !strings.Contains(all, "+I[12:00:00, 01:02:03.000, 12:34:56.789, 2]") || !strings.Contains(afterCheckpoint, "+U[12:00:00, 00:00:01.000, 12:34:56.789, 2]") {
		t.Errorf("unexpected changes: %s", all)
	}

	restored := NewAggregate(mem, node, &collect{}, ks, Cache{})
	defer restored.(exec.Closer).Close()
	if err := restored.(exec.Restorer).Restore([]byte(`{"Namespace":"agg-time","Checkpoint":1}`)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(run(restored, 1, -1), " "); got != afterCheckpoint {
		t.Errorf("restored run:\n%s\noriginal after the checkpoint:\n%s", got, afterCheckpoint)
	}
}
