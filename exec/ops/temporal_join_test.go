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

var (
	tjLeft  = planner.Schema{{Name: "id", Type: planner.TypeBigInt}, {Name: "k", Type: planner.TypeBigInt}, {Name: "ts", Type: planner.TypeBigInt}}
	tjRight = planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "rate", Type: planner.TypeBigInt}, {Name: "rts", Type: planner.TypeBigInt}}
)

func tjNode(kind string) *planner.TemporalJoin {
	return &planner.TemporalJoin{Left: input{schema: tjLeft}, Right: input{schema: tjRight, updating: true}, Kind: kind,
		LeftKeys: []int{1}, RightKeys: []int{0}, LeftTime: 2, RightTime: 2}
}

func newTemporal(t testing.TB, mem memory.Allocator, n *planner.TemporalJoin, out exec.Output, ks *KeyedState) *temporalJoin {
	t.Helper()
	op, err := NewTemporalJoin(mem, nil, n, out, ks)
	if err != nil {
		t.Fatal(err)
	}
	j := op.(*temporalJoin)
	t.Cleanup(func() { j.Close() })
	return j
}

// A left row waits for the watermark and joins the version valid at its time: versions
// arriving out of order count by their times, a deletion ends a key's versions, a -U is
// skipped, and a LEFT join pads rows without a version. Versions the watermark made
// useless are dropped, and a restored operator goes on as the original.
func TestTemporalJoin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	ks := &KeyedState{Store: store, Namespace: "temporal-1", LastKG: exec.MaxParallelism - 1}
	ctx := context.Background()
	out := &watermarks{}
	j := newTemporal(t, mem, tjNode("LEFT"), out, ks)
	feed := func(j *temporalJoin, in int, rows string, kinds ...exec.RowKind) {
		t.Helper()
		schema := tjLeft
		if in == 1 {
			schema = tjRight
		}
		b := batch(t, mem, schema, rows, kinds...)
		defer b.Release()
		if err := j.Process(ctx, in, b); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(want string) {
		t.Helper()
		if got := strings.Join(out.rows, " "); got != want {
			t.Errorf("emitted:\n%s\nwant:\n%s", got, want)
		}
		out.rows = nil
	}
	feed(j, 1, `[{"k":1,"rate":10,"rts":0},{"k":1,"rate":30,"rts":30},{"k":1,"rate":20,"rts":20},{"k":2,"rate":5,"rts":0}]`)
	feed(j, 0, `[{"id":1,"k":1,"ts":25},{"id":2,"k":1,"ts":5},{"id":3,"k":2,"ts":12},{"id":4,"k":3,"ts":1}]`)
	expect("")
	if err := j.ProcessWatermark(ctx, 20); err != nil {
		t.Fatal(err)
	}
	expect("+I[4, 3, 1, null, null, null] +I[2, 1, 5, 1, 10, 0] +I[3, 2, 12, 2, 5, 0] wm")
	if _, v := j.stateRows(); v != 3 { // k 1 keeps 20 and 30, k 2 its one version
		t.Errorf("%d versions kept, want 3", v)
	}
	feed(j, 1, `[{"k":2,"rate":5,"rts":0},{"k":2,"rate":6,"rts":22}]`, exec.UpdateBefore, exec.UpdateAfter)
	feed(j, 1, `[{"k":1,"rate":30,"rts":24}]`, exec.Delete)
	handle, err := j.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := newTemporal(t, mem, tjNode("LEFT"), out, ks)
	if err := r.Restore(handle); err != nil {
		t.Fatal(err)
	}
	for _, op := range []*temporalJoin{j, r} {
		feed(op, 0, `[{"id":5,"k":2,"ts":21},{"id":6,"k":2,"ts":23},{"id":7,"k":1,"ts":40}]`)
		feed(op, 0, `[{"id":8,"k":1,"ts":3}]`) // late: the version at 0 is gone
		if err := op.ProcessWatermark(ctx, 100); err != nil {
			t.Fatal(err)
		}
		expect("+I[8, 1, 3, null, null, null] +I[5, 2, 21, 2, 5, 0] +I[6, 2, 23, 2, 6, 22] +I[1, 1, 25, null, null, null] +I[7, 1, 40, 1, 30, 30] wm")
	}
	if left, v := r.stateRows(); left != 0 || v != 2 {
		t.Errorf("restored operator keeps %d left rows and %d versions, want 0 and 2", left, v)
	}
}

// countOut counts the rows emitted.
type countOut struct{ rows int }

func (c *countOut) Emit(_ context.Context, b exec.Batch) error { c.rows += b.Len(); return nil }
func (c *countOut) EmitWatermark(context.Context, int64) error { return nil }

// temporalFeed drives a temporal join with 1M left rows over 10k keys, a millisecond
// apart and up to 50 ms out of order, and a version of one of the keys every 10
// left rows, each input with a watermark 100 ms behind. at is called after every
// 1000 left rows.
func temporalFeed(t testing.TB, mem memory.Allocator, j *temporalJoin, rows int, at func(done int)) {
	ctx := context.Background()
	lb := array.NewRecordBuilder(mem, exec.ArrowSchema(tjLeft))
	defer lb.Release()
	rb := array.NewRecordBuilder(mem, exec.ArrowSchema(tjRight))
	defer rb.Release()
	const batchRows = 1000
	for done := 0; done < rows; done += batchRows {
		for i := done; i < done+batchRows; i++ {
			lb.Field(0).(*array.Int64Builder).Append(int64(i))
			lb.Field(1).(*array.Int64Builder).Append(int64(i*7919) % 10_000)
			lb.Field(2).(*array.Int64Builder).Append(int64(i) - int64(i*31)%50)
			if i%10 == 0 {
				rb.Field(0).(*array.Int64Builder).Append(int64(i/10*7919) % 10_000)
				rb.Field(1).(*array.Int64Builder).Append(int64(i % 1000))
				rb.Field(2).(*array.Int64Builder).Append(int64(i) - int64(i*17)%50)
			}
		}
		for in, b := range []*array.RecordBuilder{lb, rb} {
			rec := b.NewRecord()
			err := j.Process(ctx, in, exec.Batch{Rec: rec})
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := j.ProcessWatermark(ctx, int64(done+batchRows)-100); err != nil {
			t.Fatal(err)
		}
		if at != nil {
			at(done + batchRows)
		}
	}
}

// The state of a temporal join stays flat over 1M left rows with steady version
// updates: the left rows the watermark has not reached and, per key, the versions
// from the latest one at or before the watermark on.
func TestTemporalJoinStateBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("1M rows")
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	out := &countOut{}
	j := newTemporal(t, mem, tjNode("INNER"), out, nil)
	type size struct{ left, versions, bytes int }
	var sizes []size
	temporalFeed(t, mem, j, 1_000_000, func(done int) {
		if done == 500_000 || done == 1_000_000 {
			l, v := j.stateRows()
			bytes := 0
			for _, k := range j.keys {
				bytes += 2 + len(k.enc) + len(j.appendKey(nil, k))
			}
			sizes = append(sizes, size{l, v, bytes})
			t.Logf("after %d left rows: %d left rows waiting, %d versions, %d bytes of state", done, l, v, bytes)
		}
	})
	if out.rows < 900_000 {
		t.Errorf("%d rows joined, want most of 1M", out.rows)
	}
	a, b := sizes[0], sizes[1]
	if b.versions > a.versions*11/10+100 || b.left > a.left*11/10+100 || b.bytes > a.bytes*11/10+1000 || a.versions > 12_000 {
		t.Errorf("state grew: %+v at 500k rows, %+v at 1M", a, b)
	}
}

// BenchmarkTemporalJoin is the operator alone over 1M left rows against 10k versioned
// keys (temporalFeed).
func BenchmarkTemporalJoin(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		j := newTemporal(b, memory.DefaultAllocator, tjNode("INNER"), &countOut{}, nil)
		temporalFeed(b, memory.DefaultAllocator, j, 1_000_000, nil)
	}
	b.ReportMetric(float64(b.N)*1_000_000/b.Elapsed().Seconds(), "rows/s")
}
