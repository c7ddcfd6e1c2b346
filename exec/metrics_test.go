package exec

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// repeatReader returns the same batch n times, then io.EOF.
type repeatReader struct {
	rec arrow.Record
	n   int
}

func (r *repeatReader) Next(context.Context) (Batch, error) {
	if r.n == 0 {
		return Batch{}, io.EOF
	}
	r.n--
	r.rec.Retain()
	return Batch{Rec: r.rec}, nil
}

func (r *repeatReader) Close() error { return nil }

// pass emits what it gets.
type pass struct{ out Output }

func (p *pass) Process(ctx context.Context, _ int, b Batch) error { return p.out.Emit(ctx, b) }

// slow takes its time over every batch, so that its producers wait for it.
type slow struct{}

func (slow) Process(context.Context, int, Batch) error {
	time.Sleep(2 * time.Millisecond)
	return nil
}

// chainOf links ops made by makers as a job does, counting into the graph's metrics.
func chainOf(g *Graph, stage, task int, out Output, makers ...func(Output) Operator) []Operator {
	ops := make([]Operator, len(makers))
	links := &Chain{Ops: ops, Last: out}
	if !g.noMetrics {
		links.Metrics = g.Metrics().Task(TaskID{stage, task})
	}
	for i := len(makers) - 1; i >= 0; i-- {
		ops[i] = makers[i](links.Output(i))
	}
	return ops
}

func intRecord(mem memory.Allocator, rows int) arrow.Record {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range rows {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, int64(rows))
}

// passGraph reads batches batches of rec, passes them through two operators, and
// sends them to a second stage that ends in last.
func passGraph(mem memory.Allocator, rec arrow.Record, batches int, last func(Output) Operator) *Graph {
	g := &Graph{Mem: mem}
	passer := func(out Output) Operator { return &pass{out} }
	g.Stages = []Stage{
		{Name: "source", Parallelism: 1, Ops: []string{"a", "b"},
			NewReader: func(int) (Reader, error) { return &repeatReader{rec: rec, n: batches}, nil },
			NewChain: func(task int, out Output, _ [][]byte) ([]Operator, error) {
				return chainOf(g, 0, task, out, passer, passer), nil
			}},
		{Name: "sink", Parallelism: 1, Ops: []string{"c", "d"}, Inputs: []Input{{Stage: 0, Partition: Forward}},
			NewChain: func(task int, out Output, _ [][]byte) ([]Operator, error) {
				return chainOf(g, 1, task, out, passer, last), nil
			}},
	}
	return g
}

// TestMetricsCount: every operator counts the rows in and out of it, tasks count what
// they receive and send, and a task that waits on a slow consumer counts that time as
// back-pressure, not as busy.
func TestMetricsCount(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := intRecord(mem, 100)
	defer rec.Release()
	const batches = 60
	g := passGraph(mem, rec, batches, func(Output) Operator { return slow{} })
	if err := g.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	m := g.Metrics()
	src, sink := m.Task(TaskID{0, 0}), m.Task(TaskID{1, 0})
	const rows = 100 * batches
	for _, c := range []struct {
		name string
		got  int64
		want int64
	}{
		{"source task in", src.RecordsIn.Load(), rows}, {"source task out", src.RecordsOut.Load(), rows},
		{"a in", src.Ops[0].RecordsIn.Load(), rows}, {"a out", src.Ops[0].RecordsOut.Load(), rows},
		{"b in", src.Ops[1].RecordsIn.Load(), rows}, {"b out", src.Ops[1].RecordsOut.Load(), rows},
		{"sink task in", sink.RecordsIn.Load(), rows}, {"sink task out", sink.RecordsOut.Load(), 0},
		{"c in", sink.Ops[0].RecordsIn.Load(), rows}, {"d in", sink.Ops[1].RecordsIn.Load(), rows}, {"d out", sink.Ops[1].RecordsOut.Load(), 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d rows, want %d", c.name, c.got, c.want)
		}
	}
	if src.Watermark.Load() != MaxWatermark || sink.Ops[1].Watermark.Load() != MaxWatermark {
		t.Errorf("watermarks %d and %d at the end of input, want MaxWatermark", src.Watermark.Load(), sink.Ops[1].Watermark.Load())
	}
	// The sink spends 2 ms a batch: 120 ms in all, most of which the source waits.
	busy, blocked := time.Duration(sink.BusyNanos.Load()), time.Duration(src.BackPressuredNanos.Load())
	if busy < 100*time.Millisecond {
		t.Errorf("the slow sink was busy %v, want at least 100ms", busy)
	}
	if blocked < 50*time.Millisecond {
		t.Errorf("the source was back-pressured %v, want at least 50ms", blocked)
	}
	t.Logf("sink busy %v, source blocked %v, source busy %v", busy, blocked, time.Duration(src.BusyNanos.Load()))
	if b := time.Duration(src.BusyNanos.Load()); b > blocked/4 {
		t.Errorf("the source was busy %v while back-pressured %v: waiting counted as busy", b, blocked)
	}
}

// BenchmarkMetrics measures what the counters cost on the hot path: small batches (64
// rows, where a per-batch cost weighs most) through two stages of two pass-through
// operators each. Every iteration runs the graph without metrics, then with them, so
// that both see the same machine; it reports the time per batch of each and their
// ratio (on/off).
func BenchmarkMetrics(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := intRecord(mem, 64)
	defer rec.Release()
	const batches = 20_000
	var took [2]time.Duration
	b.ReportAllocs()
	for range b.N {
		for on := range 2 {
			g := passGraph(mem, rec, batches, func(out Output) Operator { return &pass{out} })
			g.noMetrics = on == 0
			start := time.Now()
			if err := g.Run(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			took[on] += time.Since(start)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*batches) }
	b.ReportMetric(per(took[0]), "ns/batch-off")
	b.ReportMetric(per(took[1]), "ns/batch-on")
	b.ReportMetric(float64(took[1])/float64(took[0]), "on/off")
}
