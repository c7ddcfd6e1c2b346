package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// BenchmarkRegularJoinStore is a regular join storing 1M insert-only rows of one side
// over 200k integer keys, as q7 stores every bid by its price, with the rows kept in the
// side's arena and, for comparison, each allocated apart.
func BenchmarkRegularJoinStore(b *testing.B) {
	for _, arena := range []bool{true, false} {
		b.Run(fmt.Sprintf("arena=%v", arena), func(b *testing.B) {
			mem := memory.DefaultAllocator
			n := &planner.Join{Left: input{schema: joinLeft}, Right: input{schema: joinRight}, Kind: "INNER", LeftKeys: []int{0}, RightKeys: []int{0}}
			const rows, batchRows = 1_000_000, 1000
			bld := array.NewRecordBuilder(mem, exec.ArrowSchema(joinLeft))
			defer bld.Release()
			var recs []exec.Batch
			for done := 0; done < rows; done += batchRows {
				for i := done; i < done+batchRows; i++ {
					bld.Field(0).(*array.Int64Builder).Append(int64(i*7919) % 200_000)
					bld.Field(1).(*array.StringBuilder).Append("https://www.nexmark.com/abcde/fghij/klmno/item.htm?query=1")
				}
				recs = append(recs, exec.Batch{Rec: bld.NewRecord()})
			}
			defer func() {
				for _, r := range recs {
					r.Rec.Release()
				}
			}()
			b.ReportAllocs()
			for b.Loop() {
				op, err := NewJoin(mem, nil, n, &countOut{}, JoinOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if !arena {
					op.(*join).sides[0].arena = nil
				}
				for _, r := range recs {
					if err := op.Process(context.Background(), 0, r); err != nil {
						b.Fatal(err)
					}
				}
				op.(exec.Closer).Close()
			}
			b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
