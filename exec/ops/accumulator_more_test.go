package ops

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// TestVarianceRetractAndMerge: inserting values, retracting some, merging two groups
// and restoring from saved state all give the variance of the values that remain,
// computed directly.
func TestVarianceRetractAndMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	direct := func(xs []float64) (pop, samp float64) {
		var mean float64
		for _, x := range xs {
			mean += x
		}
		mean /= float64(len(xs))
		var m2 float64
		for _, x := range xs {
			m2 += (x - mean) * (x - mean)
		}
		return m2 / float64(len(xs)), m2 / float64(len(xs)-1)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, fn := range []planner.AggFunc{planner.AggVarPop, planner.AggVarSamp, planner.AggStddevPop, planner.AggStddevSamp} {
		v := newVariance(fn)
		v.grow(3)
		var kept []float64
		for i := 0; i < 1000; i++ {
			x := 1e6 + r.Float64()*10 // large and close together
			v.add(0, value{f: x}, 1)
			if i%3 == 0 {
				v.add(0, value{f: x}, -1)
			} else {
				kept = append(kept, x)
			}
		}
		for _, x := range []float64{1, 2, 4} {
			v.add(1, value{f: x}, 1)
			kept = append(kept, x)
		}
		v.add(1, value{null: true}, 1)
		v.merge(0, 1)
		v.load(&decoder{buf: v.save(nil, 0)}, 2)
		pop, samp := direct(kept)
		want := map[planner.AggFunc]float64{planner.AggVarPop: pop, planner.AggVarSamp: samp,
			planner.AggStddevPop: math.Sqrt(pop), planner.AggStddevSamp: math.Sqrt(samp)}[fn]
		for _, g := range []int32{0, 2} {
			if got := v.result(g); got.null || !near(got.f, want) {
				t.Errorf("%s group %d: got %v, want %v", fn, g, got, want)
			}
		}
		v.reset(1)
		v.add(1, value{f: 5}, 1)
		single := v.result(1)
		if sample := fn == planner.AggVarSamp || fn == planner.AggStddevSamp; single.null != sample || (!sample && single.f != 0) {
			t.Errorf("%s of one value: %v", fn, single)
		}
		v.add(1, value{f: 5}, -1)
		if !v.result(1).null {
			t.Errorf("%s of no value: %v, want NULL", fn, v.result(1))
		}
	}
}

// TestValueAccumulatorsSaveLoad: FIRST_VALUE, LAST_VALUE and LISTAGG, insert-only and
// retracting, give the same result after their state is saved and loaded.
func TestValueAccumulatorsSaveLoad(t *testing.T) {
	for _, c := range []struct {
		name    string
		acc     accumulator
		signs   []int64
		want    value
		wantNil bool
	}{
		{"first", &firstLast{}, nil, value{s: "b"}, false},
		{"last", &firstLast{last: true}, nil, value{s: "d"}, false},
		{"listagg", &listAgg{sep: "; "}, nil, value{s: "b; c; b; d"}, false},
		{"first retracting", &valueList{fn: planner.AggFirstValue}, []int64{1, 1, -1, 1}, value{s: "c"}, false},
		{"last retracting", &valueList{fn: planner.AggLastValue}, []int64{1, 1, 1, -1}, value{s: "b"}, false},
		{"listagg retracting", &valueList{fn: planner.AggListAgg, sep: ","}, []int64{1, 1, 1, 1}, value{s: "b,c,b,d"}, false},
		{"listagg retracting the oldest", &valueList{fn: planner.AggListAgg, sep: ","}, []int64{1, 1, -1, 1}, value{s: "c,d"}, false},
		{"a retraction of what never came", &valueList{fn: planner.AggListAgg, sep: ","}, []int64{1, 1, -1, -1}, value{s: "c"}, false},
		{"nothing left", &valueList{fn: planner.AggFirstValue}, []int64{1, -1}, value{}, true},
	} {
		c.acc.grow(2)
		vals := []value{{null: true}, {s: "b"}, {s: "c"}, {s: "b"}, {s: "d"}}
		if c.name == "nothing left" {
			vals = []value{{null: true}, {s: "b"}, {s: "b"}}
		}
		signs := c.signs
		for i, v := range vals {
			sign := int64(1)
			if i > 0 && signs != nil {
				if i > len(signs) {
					break
				}
				sign = signs[i-1]
			}
			c.acc.(rowAdder).add(0, v, sign)
		}
		c.acc.load(&decoder{buf: c.acc.save(nil, 0)}, 1)
		for _, g := range []int32{0, 1} {
			got := c.acc.result(g)
			if c.wantNil && !got.null || !c.wantNil && got != c.want {
				t.Errorf("%s group %d: got %+v, want %+v", c.name, g, got, c.want)
			}
		}
	}
}

// BenchmarkWindowAggregate compares STDDEV_POP with SUM in a tumbling window aggregate:
// 4096-row batches of DOUBLE values over 1,000 keys (where making and firing groups
// costs most) or 16 keys (where the accumulators do), each batch its own window, fired
// by a watermark after it.
func BenchmarkWindowAggregate(b *testing.B) {
	for _, keys := range []int{1000, 16} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) { benchmarkWindowAggregate(b, keys) })
	}
}

func benchmarkWindowAggregate(b *testing.B, keys int) {
	ts := planner.Type{Kind: planner.Timestamp, Precision: 3, NotNull: true}
	schema := planner.Schema{{Name: "window_start", Type: ts}, {Name: "window_end", Type: ts},
		{Name: "k", Type: planner.TypeBigInt}, {Name: "v", Type: planner.TypeDouble}, {Name: "f", Type: planner.TypeBoolean}}
	for _, c := range []struct {
		name string
		call planner.AggCall
	}{
		{"SUM", planner.AggCall{Fn: planner.AggSum, Arg: 3, T: planner.TypeDouble}},
		{"STDDEV_POP", planner.AggCall{Fn: planner.AggStddevPop, Arg: 3, T: planner.TypeDouble}},
		{"SUM FILTER", planner.AggCall{Fn: planner.AggSum, Arg: 3, T: planner.TypeDouble, Filter: 5}},
		{"STDDEV_POP FILTER", planner.AggCall{Fn: planner.AggStddevPop, Arg: 3, T: planner.TypeDouble, Filter: 5}},
	} {
		b.Run(c.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			node := &planner.Aggregate{Input: input{schema: schema}, Keys: []int{0, 1, 2},
				Aggs:   []planner.AggCall{c.call},
				Names:  []string{"window_start", "window_end", "k", "x"},
				Window: &planner.WindowTVF{Kind: "TUMBLE"}, WindowEnd: 1}
			const rows = 4096
			op := NewAggregate(mem, node, &watermarks{}, nil, Cache{})
			defer op.(exec.Closer).Close()
			out := op.(*aggregate).out.(*watermarks)
			ctx := context.Background()
			r := rand.New(rand.NewPCG(3, 4))
			rb := array.NewRecordBuilder(mem, exec.ArrowSchema(schema))
			defer rb.Release()
			recs := make([]exec.Batch, 16)
			for w := range recs {
				for i := 0; i < rows; i++ {
					rb.Field(0).(*array.TimestampBuilder).Append(0)
					rb.Field(1).(*array.TimestampBuilder).Append(10)
					rb.Field(2).(*array.Int64Builder).Append(int64(r.IntN(keys)))
					rb.Field(3).(*array.Float64Builder).Append(r.Float64() * 100)
					rb.Field(4).(*array.BooleanBuilder).Append(i%4 != 0)
				}
				recs[w] = exec.Batch{Rec: rb.NewRecord()}
				defer recs[w].Rec.Release()
			}
			b.ReportAllocs()
			b.SetBytes(rows * 8)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op.Process(ctx, 0, recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				if err := op.(exec.WatermarkHandler).ProcessWatermark(ctx, 10); err != nil {
					b.Fatal(err)
				}
				op.(*aggregate).watermark = exec.MinWatermark // the same window opens again
				out.rows, out.wms = out.rows[:0], out.wms[:0]
			}
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
