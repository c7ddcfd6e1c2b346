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

// An aggregate restored from a checkpoint continues exactly as the original would have:
// same changes, same results, for every kind of accumulator, including groups deleted
// before the checkpoint and multisets of retracting MIN/MAX.
func TestAggregateSnapshotRestore(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	schema := planner.Schema{{Name: "k", Type: planner.TypeString}, {Name: "v", Type: planner.TypeBigInt}, {Name: "d", Type: planner.DecimalType(10, 2)}}
	node := &planner.Aggregate{
		Input: input{schema: schema, updating: true}, Keys: []int{0},
		Aggs: []planner.AggCall{
			{Fn: planner.AggCount, Arg: -1, T: planner.TypeBigInt},
			{Fn: planner.AggSum, Arg: 1, T: planner.TypeBigInt},
			{Fn: planner.AggMin, Arg: 1, T: planner.TypeBigInt},
			{Fn: planner.AggCount, Arg: 1, Distinct: true, T: planner.TypeBigInt},
			{Fn: planner.AggAvg, Arg: 2, T: planner.DecimalType(38, 6)},
		},
		Names: []string{"k", "n", "s", "mn", "cd", "av"},
	}
	ks := &KeyedState{Store: store, Namespace: "agg-1", FirstKG: 0, LastKG: exec.MaxParallelism - 1}
	ctx := context.Background()
	steps := []struct {
		json  string
		kinds []exec.RowKind
	}{
		{`[{"k":"a","v":5,"d":"1.10"},{"k":"b","v":1,"d":"2.00"},{"k":"a","v":3,"d":null},{"k":"gone","v":1,"d":"1"}]`, nil},
		{`[{"k":"a","v":3,"d":null},{"k":"gone","v":1,"d":"1"}]`, []exec.RowKind{exec.Delete, exec.Delete}},
		// checkpoint 1 here
		{`[{"k":"a","v":1,"d":"0.05"},{"k":"c","v":7,"d":"3"}]`, nil},
		{`[{"k":"a","v":1,"d":"0.05"},{"k":"b","v":1,"d":"2.00"}]`, []exec.RowKind{exec.UpdateBefore, exec.Delete}},
	}
	run := func(op exec.Operator, from int, snapshotAt int) []string {
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
	original := NewAggregate(mem, node, &collect{}, ks)
	defer original.(exec.Closer).Close()
	all := strings.Join(run(original, 0, 2), " ")
	_, afterCheckpoint, _ := strings.Cut(all, "| ")

	restored := NewAggregate(mem, node, &collect{}, ks)
	defer restored.(exec.Closer).Close()
	handle := []byte(`{"Namespace":"agg-1","Checkpoint":1}`)
	if err := restored.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(run(restored, 2, -1), " "); got != afterCheckpoint {
		t.Errorf("restored run:\n%s\noriginal after the checkpoint:\n%s", got, afterCheckpoint)
	}
	if !strings.Contains(all, "-D[gone") || !strings.Contains(afterCheckpoint, "-D[b") {
		t.Errorf("the steps no longer cover deleted groups: %s", all)
	}
}
