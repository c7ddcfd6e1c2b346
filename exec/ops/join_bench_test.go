package ops

import (
	"context"
	"fmt"
	"strings"
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

// BenchmarkRegularJoinEmit is a regular join whose every probe row matches one stored
// row of wide strings, as q9's bids meet their auction: it measures building the joined
// rows' batches.
func BenchmarkRegularJoinEmit(b *testing.B) {
	exec.Unpoisoned(b)
	mem := memory.DefaultAllocator
	n := &planner.Join{Left: input{schema: joinLeft}, Right: input{schema: joinRight}, Kind: "INNER", LeftKeys: []int{0}, RightKeys: []int{0}}
	const keys, rows, batchRows = 10_000, 200_000, 1000
	batch := func(side int, from, to int, text string) exec.Batch {
		bld := array.NewRecordBuilder(mem, exec.ArrowSchema([]planner.Schema{joinLeft, joinRight}[side]))
		defer bld.Release()
		for i := from; i < to; i++ {
			bld.Field(0).(*array.Int64Builder).Append(int64(i*7919) % keys)
			bld.Field(1).(*array.StringBuilder).Append(text)
		}
		return exec.Batch{Rec: bld.NewRecord()}
	}
	auctions := batch(0, 0, keys, strings.Repeat("an auction's description ", 20))
	defer auctions.Release()
	var bids []exec.Batch
	for done := 0; done < rows; done += batchRows {
		bids = append(bids, batch(1, done, done+batchRows, "https://www.nexmark.com/abcde/fghij/klmno/item.htm?query=1"))
	}
	defer func() {
		for _, r := range bids {
			r.Release()
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		op, err := NewJoin(mem, nil, n, &countOut{}, JoinOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := op.Process(context.Background(), 0, auctions); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, r := range bids {
			if err := op.Process(context.Background(), 1, r); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		op.(exec.Closer).Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds(), "rows/s")
}
