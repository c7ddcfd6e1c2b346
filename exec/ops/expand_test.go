package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// TestExpand: each row comes out once per grouping set, the keys the set drops NULL, the
// set's number last, and its row kind kept (a retraction reaches every set).
func TestExpand(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := planner.Schema{{Name: "a", Type: planner.TypeString}, {Name: "b", Type: planner.TypeBigInt}, {Name: "v", Type: planner.TypeBigInt}}
	node := &planner.Expand{Input: input{schema: schema, updating: true}, Keys: 2,
		Sets: [][]bool{{true, true}, {true, false}, {false, false}}}
	out := &collect{}
	op := NewExpand(mem, node, out)
	defer op.(exec.Closer).Close()
	in := batch(t, mem, schema, `[{"a":"x","b":1,"v":10},{"a":"y","b":2,"v":20}]`, exec.Insert, exec.UpdateBefore)
	defer in.Release()
	if err := op.Process(context.Background(), 0, in); err != nil {
		t.Fatal(err)
	}
	want := "+I[x, 1, 10, 0] -U[y, 2, 20, 0] +I[x, null, 10, 1] -U[y, null, 20, 1] +I[null, null, 10, 2] -U[null, null, 20, 2]"
	if got := strings.Join(out.rows, " "); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Batches of another length and then the same again: the cached columns follow.
	out.rows = nil
	for _, json := range []string{`[{"a":"z","b":3,"v":30}]`, `[{"a":"x","b":1,"v":10},{"a":"w","b":4,"v":40}]`} {
		in := batch(t, mem, schema, json)
		if err := op.Process(context.Background(), 0, in); err != nil {
			t.Fatal(err)
		}
		in.Release()
	}
	want = "+I[z, 3, 30, 0] +I[z, null, 30, 1] +I[null, null, 30, 2] +I[x, 1, 10, 0] +I[w, 4, 40, 0] +I[x, null, 10, 1] +I[w, null, 40, 1] +I[null, null, 10, 2] +I[null, null, 40, 2]"
	if got := strings.Join(out.rows, " "); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// BenchmarkGroupingSets folds 4096-row batches over 1000 (a, b) groups: grouped by (a,
// b) as the baseline, then by ROLLUP (a, b), whose Expand copies each row three times
// into an aggregate keyed by (a, b, $e).
func BenchmarkGroupingSets(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema := planner.Schema{{Name: "a", Type: planner.TypeBigInt}, {Name: "b", Type: planner.TypeBigInt}, {Name: "v", Type: planner.TypeBigInt}}
	const rows = 4096
	rb := array.NewRecordBuilder(mem, exec.ArrowSchema(schema))
	for i := range rows {
		k := (i * 7919) % 1000
		rb.Field(0).(*array.Int64Builder).Append(int64(k / 10))
		rb.Field(1).(*array.Int64Builder).Append(int64(k % 10))
		rb.Field(2).(*array.Int64Builder).Append(int64(i))
	}
	rec := rb.NewRecord()
	defer rec.Release()
	aggs := []planner.AggCall{{Fn: planner.AggCount, Arg: -1, T: planner.TypeBigInt}, {Fn: planner.AggSum, Arg: 2, T: planner.TypeBigInt}}
	discard := exec.OutputFunc(func(context.Context, exec.Batch) error { return nil })
	run := func(b *testing.B, op exec.Operator) {
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := op.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("group by a, b", func(b *testing.B) {
		node := &planner.Aggregate{Input: input{schema: schema}, Keys: []int{0, 1}, Aggs: aggs, Names: []string{"a", "b", "n", "s"}}
		run(b, NewAggregate(mem, node, discard, nil, Cache{}))
	})
	b.Run("rollup (a, b)", func(b *testing.B) {
		ex := &planner.Expand{Input: input{schema: schema}, Keys: 2, Sets: [][]bool{{true, true}, {true, false}, {false, false}}}
		node := &planner.Aggregate{Input: ex, Keys: []int{0, 1, 3}, Aggs: aggs, Names: []string{"a", "b", "$e", "n", "s"}}
		agg := NewAggregate(mem, node, discard, nil, Cache{})
		run(b, NewExpand(mem, ex, exec.OutputFunc(func(ctx context.Context, batch exec.Batch) error {
			return agg.Process(ctx, 0, batch)
		})))
	})
}
