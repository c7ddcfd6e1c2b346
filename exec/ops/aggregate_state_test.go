package ops

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
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
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
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
		{`[{"k":"a","v":1,"d":"0.05"},{"k":"c","v":7,"d":"3"},{"k":"a","v":5,"d":null}]`, nil}, // 5: seen before the checkpoint
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
	original := NewAggregate(mem, node, &collect{}, ks, Cache{})
	defer original.(exec.Closer).Close()
	all := strings.Join(run(original, 0, 2), " ")
	_, afterCheckpoint, _ := strings.Cut(all, "| ")

	restored := NewAggregate(mem, node, &collect{}, ks, Cache{})
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

// benchAggregate builds an aggregate over 1M BIGINT keys with a state store, all keys
// checkpointed once (checkpoint 1).
func benchAggregate(b *testing.B, store *state.Store) (exec.Operator, *planner.Aggregate) {
	mem := memory.NewGoAllocator()
	schema := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "v", Type: planner.TypeBigInt}}
	node := &planner.Aggregate{Input: input{schema: schema}, Keys: []int{0},
		Aggs:  []planner.AggCall{{Fn: planner.AggCount, Arg: -1, T: planner.TypeBigInt}, {Fn: planner.AggSum, Arg: 1, T: planner.TypeBigInt}},
		Names: []string{"k", "c", "s"}}
	ks := &KeyedState{Store: store, Namespace: "agg", LastKG: exec.MaxParallelism - 1}
	op := NewAggregate(mem, node, exec.OutputFunc(func(context.Context, exec.Batch) error { return nil }), ks, Cache{})
	feed(b, op, mem, 0, 1_000_000)
	if _, err := op.(exec.Snapshotter).Snapshot(context.Background(), 1); err != nil {
		b.Fatal(err)
	}
	// Checkpoint 1 completed: its delta becomes the base, as the job's runner does.
	if err := store.Merge(1); err != nil {
		b.Fatal(err)
	}
	return op, node
}

// feed sends keys [from, to) once each, in batches of 4096, and flushes.
func feed(b *testing.B, op exec.Operator, mem memory.Allocator, from, to int64) {
	schema := exec.ArrowSchema(planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "v", Type: planner.TypeBigInt}})
	for lo := from; lo < to; lo += 4096 {
		rb := array.NewRecordBuilder(mem, schema)
		for k := lo; k < min(lo+4096, to); k++ {
			rb.Field(0).(*array.Int64Builder).Append(k)
			rb.Field(1).(*array.Int64Builder).Append(k % 7)
		}
		rec := rb.NewRecord()
		if err := op.Process(context.Background(), 0, exec.Batch{Rec: rec}); err != nil {
			b.Fatal(err)
		}
		rec.Release()
		rb.Release()
	}
	op.(exec.Flusher).Flush(context.Background())
}

// BenchmarkCheckpoint1PercentOf1MKeys: after a full checkpoint of 1M keys, 1% of them
// change and the next checkpoint writes only those.
func BenchmarkCheckpoint1PercentOf1MKeys(b *testing.B) {
	store, err := state.Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	op, _ := benchAggregate(b, store)
	mem := memory.NewGoAllocator()
	b.ResetTimer()
	var written int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		from := int64(i*10_000) % 990_000
		feed(b, op, mem, from, from+10_000)
		b.StartTimer()
		if _, err := op.(exec.Snapshotter).Snapshot(context.Background(), int64(i+2)); err != nil {
			b.Fatal(err)
		}
		bytes, _ := op.(exec.SnapshotMeter).LastSnapshot()
		written += bytes
	}
	b.ReportMetric(float64(written)/float64(b.N), "bytes/checkpoint")
}

// BenchmarkRestore1MKeys measures loading a 1M-key aggregate state from its checkpoint.
func BenchmarkRestore1MKeys(b *testing.B) {
	store, err := state.Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	_, node := benchAggregate(b, store)
	ks := &KeyedState{Store: store, Namespace: "agg", LastKG: exec.MaxParallelism - 1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op := NewAggregate(memory.NewGoAllocator(), node, exec.OutputFunc(func(context.Context, exec.Batch) error { return nil }), ks, Cache{})
		if err := op.(exec.Restorer).Restore([]byte(`{"Namespace":"agg","Checkpoint":1}`)); err != nil {
			b.Fatal(err)
		}
		if n := len(op.(*aggregate).rows); n != 1_000_000 {
			b.Fatalf("restored %d groups", n)
		}
	}
}
