package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// BenchmarkFilterKeepsMost filters events as Nexmark's views do (event_type = 2 keeps
// 46 of 50) into an output that releases each batch at once, as a chained operator that
// keeps nothing does.
func BenchmarkFilterKeepsMost(b *testing.B) {
	exec.Unpoisoned(b)
	mem := memory.DefaultAllocator
	bid := planner.RowType([]planner.Column{{Name: "auction", Type: planner.TypeBigInt},
		{Name: "url", Type: planner.TypeString}, {Name: "extra", Type: planner.TypeString}})
	schema := planner.Schema{{Name: "event_type", Type: planner.TypeInt}, {Name: "bid", Type: bid}}
	const rows = 4096
	bld := array.NewRecordBuilder(mem, exec.ArrowSchema(schema))
	defer bld.Release()
	row := bld.Field(1).(*array.StructBuilder)
	for i := range rows {
		typ := int32(2)
		if i%50 >= 46 {
			typ = int32(i % 2)
		}
		bld.Field(0).(*array.Int32Builder).Append(typ)
		row.Append(true)
		row.FieldBuilder(0).(*array.Int64Builder).Append(int64(i))
		row.FieldBuilder(1).(*array.StringBuilder).Append("https://www.nexmark.com/abcde/fghij/klmno/item.htm?query=1")
		row.FieldBuilder(2).(*array.StringBuilder).Append(strings.Repeat("x", i%64))
	}
	rec := bld.NewRecord()
	defer rec.Release()
	cond := &planner.Call{Fn: planner.FnEq, Args: []planner.Expr{&planner.ColumnRef{Index: 0, Name: "event_type", T: planner.TypeInt},
		&planner.Literal{Value: int32(2), T: planner.TypeInt}}, T: planner.TypeBoolean}
	op, err := NewFilter(mem, &expr.Env{}, &planner.Filter{Input: input{schema: schema}, Cond: cond}, &countOut{})
	if err != nil {
		b.Fatal(err)
	}
	defer op.(exec.Closer).Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := op.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds(), "rows/s")
}
