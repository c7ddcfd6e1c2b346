package ops

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// collect is an Output that prints each row as kind[v1, v2].
type collect struct{ rows []string }

func (c *collect) Emit(_ context.Context, b exec.Batch) error {
	for i := 0; i < b.Len(); i++ {
		var vals []string
		for _, col := range b.Rec.Columns() {
			if col.IsNull(i) {
				vals = append(vals, "null")
			} else {
				vals = append(vals, col.ValueStr(i))
			}
		}
		c.rows = append(c.rows, fmt.Sprintf("%s[%s]", b.Kind(i), strings.Join(vals, ", ")))
	}
	return nil
}

// input is a plan leaf with a fixed schema and changelog mode.
type input struct {
	schema   planner.Schema
	updating bool
}

func (n input) Schema() planner.Schema   { return n.schema }
func (n input) Children() []planner.Node { return nil }
func (n input) Updating() bool           { return n.updating }
func (n input) Describe() string         { return "input" }

func batch(t *testing.T, mem memory.Allocator, schema planner.Schema, json string, kinds ...exec.RowKind) exec.Batch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(mem, exec.ArrowSchema(schema), strings.NewReader(json))
	if err != nil {
		t.Fatal(err)
	}
	return exec.Batch{Rec: rec, Kinds: kinds}
}

func TestAggregateEmitsOneChangePerGroupAndBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := planner.Schema{{Name: "id", Type: planner.TypeString}, {Name: "temp", Type: planner.TypeDouble}}
	node := &planner.Aggregate{
		Input: input{schema: schema}, Keys: []int{0},
		Aggs: []planner.AggCall{
			{Fn: planner.AggMax, Arg: 1, T: planner.TypeDouble},
			{Fn: planner.AggCount, Arg: -1, T: planner.TypeBigInt},
			{Fn: planner.AggAvg, Arg: 1, T: planner.TypeDouble},
		},
		Names: []string{"id", "max_temp", "cnt", "avg_temp"},
	}
	out := &collect{}
	op := NewAggregate(mem, node, out, nil, Cache{})
	defer op.(exec.Closer).Close()
	ctx := context.Background()
	for _, js := range []string{
		`[{"id":"a","temp":1},{"id":"b","temp":5},{"id":"a","temp":3}]`,
		`[{"id":"a","temp":2},{"id":"c","temp":null}]`,
	} {
		b := batch(t, mem, schema, js)
		if err := op.Process(ctx, 0, b); err != nil {
			t.Fatal(err)
		}
		b.Release()
		if err := op.(exec.Flusher).Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"+I[a, 3, 2, 2]", "+I[b, 5, 1, 5]",
		"-U[a, 3, 2, 2]", "+U[a, 3, 3, 2]", "+I[c, null, 1, null]",
	}
	if got := strings.Join(out.rows, " "); got != strings.Join(want, " ") {
		t.Errorf("got  %s\nwant %s", got, strings.Join(want, " "))
	}
}

func TestAggregateRetractionsKeepMinMaxCorrect(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "v", Type: planner.TypeBigInt}}
	node := &planner.Aggregate{
		Input: input{schema: schema, updating: true}, Keys: []int{0},
		Aggs: []planner.AggCall{
			{Fn: planner.AggMin, Arg: 1, T: planner.TypeBigInt},
			{Fn: planner.AggMax, Arg: 1, T: planner.TypeBigInt},
			{Fn: planner.AggCount, Arg: 1, Distinct: true, T: planner.TypeBigInt},
			{Fn: planner.AggSum, Arg: 1, T: planner.TypeBigInt},
		},
		Names: []string{"k", "mn", "mx", "cd", "s"},
	}
	out := &collect{}
	op := NewAggregate(mem, node, out, nil, Cache{})
	defer op.(exec.Closer).Close()
	ctx := context.Background()
	steps := []struct {
		json  string
		kinds []exec.RowKind
	}{
		{`[{"k":1,"v":5},{"k":1,"v":1},{"k":1,"v":9},{"k":1,"v":1}]`, nil},
		// Retract the minimum once (another 1 remains) and the maximum.
		{`[{"k":1,"v":1},{"k":1,"v":9}]`, []exec.RowKind{exec.UpdateBefore, exec.Delete}},
		// Retract the last 1: the minimum becomes 5.
		{`[{"k":1,"v":1}]`, []exec.RowKind{exec.Delete}},
		// Retract the last row: the group disappears.
		{`[{"k":1,"v":5}]`, []exec.RowKind{exec.Delete}},
		// A retraction of an unknown group changes nothing.
		{`[{"k":2,"v":5}]`, []exec.RowKind{exec.Delete}},
	}
	for _, s := range steps {
		b := batch(t, mem, schema, s.json, s.kinds...)
		if err := op.Process(ctx, 0, b); err != nil {
			t.Fatal(err)
		}
		b.Release()
		if err := op.(exec.Flusher).Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"+I[1, 1, 9, 3, 16]",
		"-U[1, 1, 9, 3, 16]", "+U[1, 1, 5, 2, 6]",
		"-U[1, 1, 5, 2, 6]", "+U[1, 5, 5, 1, 5]",
		"-D[1, 5, 5, 1, 5]",
	}
	if got := strings.Join(out.rows, " "); got != strings.Join(want, " ") {
		t.Errorf("got  %s\nwant %s", got, strings.Join(want, " "))
	}
}

// Without a flush in between, batches fold into one change per group (a mini-batch);
// a group that appears and disappears within it emits nothing.
func TestAggregateFoldsBatchesUntilFlushed(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := planner.Schema{{Name: "k", Type: planner.TypeString}, {Name: "v", Type: planner.TypeBigInt}}
	node := &planner.Aggregate{
		Input: input{schema: schema, updating: true}, Keys: []int{0},
		Aggs:  []planner.AggCall{{Fn: planner.AggSum, Arg: 1, T: planner.TypeBigInt}},
		Names: []string{"k", "s"},
	}
	out := &collect{}
	op := NewAggregate(mem, node, out, nil, Cache{})
	defer op.(exec.Closer).Close()
	ctx := context.Background()
	for _, b := range []exec.Batch{
		batch(t, mem, schema, `[{"k":"x","v":1},{"k":"gone","v":7}]`),
		batch(t, mem, schema, `[{"k":"x","v":2},{"k":"gone","v":7}]`, exec.Insert, exec.Delete),
	} {
		if err := op.Process(ctx, 0, b); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if len(out.rows) != 0 {
		t.Fatalf("emitted before a flush: %v", out.rows)
	}
	if err := op.(exec.Finisher).Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out.rows, " "); got != "+I[x, 3]" {
		t.Errorf("got %s, want +I[x, 3]", got)
	}
}

// BenchmarkAggregate folds 4096-row batches over 10k keys into COUNT, SUM and AVG. The
// "flush every batch" variants emit after each batch, the worst case (a trickle of
// input); the others emit when the mini-batch fills, as under a flood of input.
func BenchmarkAggregate(b *testing.B) {
	for _, c := range []struct {
		keyType planner.Type
		flush   bool
	}{{planner.TypeBigInt, false}, {planner.TypeString, false}, {planner.TypeBigInt, true}, {planner.TypeString, true}} {
		keyType := c.keyType
		name := keyType.String()
		if c.flush {
			name += "/flush every batch"
		}
		b.Run(name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			schema := planner.Schema{{Name: "k", Type: keyType}, {Name: "v", Type: planner.TypeBigInt}}
			node := &planner.Aggregate{
				Input: input{schema: schema}, Keys: []int{0},
				Aggs: []planner.AggCall{
					{Fn: planner.AggCount, Arg: -1, T: planner.TypeBigInt},
					{Fn: planner.AggSum, Arg: 1, T: planner.TypeBigInt},
					{Fn: planner.AggAvg, Arg: 1, T: planner.TypeDouble},
				},
				Names: []string{"k", "c", "s", "a"},
			}
			const rows = 4096
			rb := array.NewRecordBuilder(mem, exec.ArrowSchema(schema))
			for i := 0; i < rows; i++ {
				key := (i * 7919) % 10000
				if keyType.Kind == planner.String {
					rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("key-%d", key))
				} else {
					rb.Field(0).(*array.Int64Builder).Append(int64(key))
				}
				rb.Field(1).(*array.Int64Builder).Append(int64(i))
			}
			rec := rb.NewRecord()
			defer rec.Release()
			op := NewAggregate(mem, node, exec.OutputFunc(func(context.Context, exec.Batch) error { return nil }), nil, Cache{})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
					b.Fatal(err)
				}
				if c.flush {
					if err := op.(exec.Flusher).Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestAggregateStringsDoNotKeepBatches: MIN and MAX over a STRING column own their
// values: after 200 batches of 1 MiB of strings through 100 groups, what stays on the
// heap is the groups' values, not the batches they came from.
func TestAggregateStringsDoNotKeepBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := planner.Schema{{Name: "k", Type: planner.TypeString}, {Name: "s", Type: planner.TypeString}}
	node := &planner.Aggregate{
		Input: input{schema: schema}, Keys: []int{0},
		Aggs: []planner.AggCall{
			{Fn: planner.AggMin, Arg: 1, T: planner.TypeString},
			{Fn: planner.AggMax, Arg: 1, T: planner.TypeString},
		},
		Names: []string{"k", "lo", "hi"},
	}
	agg := NewAggregate(mem, node, exec.OutputFunc(func(context.Context, exec.Batch) error { return nil }), nil, Cache{})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	payload := strings.Repeat("x", 1000)
	for b := range 200 {
		kb := array.NewStringBuilder(mem)
		sb := array.NewStringBuilder(mem)
		// Row 0 sets a new MAX for key b % 100, so after 100 batches each key's MAX is in
		// another batch: were it the batch's string, every such batch would stay.
		for i := range 1000 {
			if i == 0 {
				kb.Append(fmt.Sprintf("key%03d", b%100))
				sb.Append(fmt.Sprintf("9%06d%s", b, payload))
				continue
			}
			kb.Append(fmt.Sprintf("key%03d", i%100))
			sb.Append(fmt.Sprintf("0%06d%s", i, payload))
		}
		keys, vals := kb.NewArray(), sb.NewArray()
		rec := array.NewRecord(exec.ArrowSchema(schema), []arrow.Array{keys, vals}, 1000)
		keys.Release()
		vals.Release()
		kb.Release()
		sb.Release()
		if err := agg.Process(context.Background(), 0, exec.Batch{Rec: rec}); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if f, ok := agg.(exec.Flusher); ok {
		f.Flush(context.Background())
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(agg) // its groups are what is measured
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB over 200 MiB of input: the groups keep their batches", grown>>20)
	}
}
