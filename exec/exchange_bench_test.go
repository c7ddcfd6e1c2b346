package exec

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// BenchmarkExchangeHashSplit splits batches of bid-like rows between two tasks by key,
// each part released by its reader at once, as a keyed stage reads them.
func BenchmarkExchangeHashSplit(b *testing.B) {
	Unpoisoned(b)
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{{Name: "auction", Type: arrow.PrimitiveTypes.Int64},
		{Name: "price", Type: arrow.PrimitiveTypes.Int64}, {Name: "url", Type: arrow.BinaryTypes.String}}, nil)
	const rows = 4096
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	for i := range rows {
		bld.Field(0).(*array.Int64Builder).Append(int64(i * 7919))
		bld.Field(1).(*array.Int64Builder).Append(int64(i))
		bld.Field(2).(*array.StringBuilder).Append("https://www.nexmark.com/abcde/fghij/klmno/item.htm?query=1" + strings.Repeat("x", i%32))
	}
	rec := bld.NewRecord()
	defer rec.Release()
	outs := make([]outlet, 2)
	for i := range outs {
		outs[i] = outlet{ch: make(chan message, 1), ready: make(chan int, 1), index: 0}
	}
	e := newExchange(mem, 0)
	defer e.pool.Close()
	e.addRoute(outs, Hash, []int{0})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.Emit(ctx, Batch{Rec: rec}); err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			m := <-o.ch
			<-o.ready
			m.batch.Release()
		}
	}
	b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds(), "rows/s")
}
