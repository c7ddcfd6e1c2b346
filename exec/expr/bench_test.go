package expr

import (
	"fmt"
	"math/rand"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

var benchSizes = []int{1024, 4096}

// benchBatches runs f once per iteration over a batch of n rows of rowBytes input bytes
// each, reporting rows/s; the batch is built once, so only the code under test is timed.
// rows/cpu-s divides by the CPU time the process used instead (GC included), which stays
// meaningful on a machine shared with other work.
func benchBatches(b *testing.B, n, rowBytes int, f func()) {
	b.ReportAllocs()
	b.SetBytes(int64(n * rowBytes))
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f()
	}
	b.StopTimer()
	rows := float64(b.N) * float64(n)
	b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(rows/cpu.Seconds(), "rows/cpu-s")
	}
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sensorBatch is (id BIGINT, ts BIGINT, temperature DOUBLE) with half the temperatures
// above 30.
func sensorBatch(mem memory.Allocator, n int) arrow.Record {
	r := rand.New(rand.NewSource(1))
	bld := array.NewRecordBuilder(mem, arrowSchemaOf(sch("id", tBig, "ts", tBig, "temperature", tDbl)))
	defer bld.Release()
	for i := 0; i < n; i++ {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		bld.Field(1).(*array.Int64Builder).Append(1700000000000 + int64(i))
		bld.Field(2).(*array.Float64Builder).Append(20 + r.Float64()*20)
	}
	return bld.NewRecord()
}

func stringBatch(mem memory.Allocator, n int, gen func(i int) string) arrow.Record {
	bld := array.NewRecordBuilder(mem, arrowSchemaOf(sch("s", tStr)))
	defer bld.Release()
	for i := 0; i < n; i++ {
		bld.Field(0).(*array.StringBuilder).Append(gen(i))
	}
	return bld.NewRecord()
}

func mustCompile(b *testing.B, e planner.Expr, mem memory.Allocator) Evaluator {
	ev, err := Compile(e, mem, nil)
	if err != nil {
		b.Fatal(err)
	}
	return ev
}

func mustEval(b *testing.B, ev Evaluator, rec arrow.Record) {
	out, err := ev.Eval(rec)
	if err != nil {
		b.Fatal(err)
	}
	out.Release()
}

var (
	benchTemp = col(2, "temperature", tDbl)
	benchProj = call(planner.FnAdd, tDbl, call(planner.FnMul, tDbl, benchTemp, f64(1.8)), f64(32))
)

// BenchmarkFilterProject is SELECT id, temperature * 1.8 + 32 FROM t WHERE temperature > 30,
// with Arrow's Go allocator and with a pool that recycles freed buffers (as an engine
// keeping its batch buffers would).
func BenchmarkFilterProject(b *testing.B) {
	for _, alloc := range []string{"go", "pool"} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("alloc=%s/rows=%d", alloc, n), func(b *testing.B) {
				var mem memory.Allocator = memory.NewGoAllocator()
				if alloc == "pool" {
					mem = newPoolAllocator()
				}
				rec := sensorBatch(mem, n)
				defer rec.Release()
				p, err := CompilePredicate(pred(planner.FnGt, benchTemp, f64(30)), mem, nil)
				if err != nil {
					b.Fatal(err)
				}
				id := mustCompile(b, col(0, "id", tBig), mem)
				proj := mustCompile(b, benchProj, mem)
				var sel []int32
				benchBatches(b, n, 24, func() {
					if sel, err = p.Select(rec, sel); err != nil {
						b.Fatal(err)
					}
					sub := exec.TakeRecord(mem, rec, sel)
					mustEval(b, id, sub)
					mustEval(b, proj, sub)
					sub.Release()
				})
			})
		}
	}
}

// poolAllocator hands out buffers freed earlier when their size matches (one goroutine).
type poolAllocator struct {
	mem  memory.Allocator
	free map[int][][]byte
}

func newPoolAllocator() *poolAllocator {
	return &poolAllocator{mem: memory.NewGoAllocator(), free: map[int][][]byte{}}
}

func (p *poolAllocator) Allocate(size int) []byte {
	if l := p.free[size]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[size] = l[:len(l)-1]
		return b
	}
	return p.mem.Allocate(size)
}

func (p *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= len(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *poolAllocator) Free(b []byte) { p.free[len(b)] = append(p.free[len(b)], b) }

// BenchmarkCompare is temperature > 30, as a BOOLEAN array (Eval) and as a selection.
func BenchmarkCompare(b *testing.B) {
	for _, n := range benchSizes {
		mem := memory.NewGoAllocator()
		rec := sensorBatch(mem, n)
		e := pred(planner.FnGt, benchTemp, f64(30))
		b.Run(fmt.Sprintf("eval/rows=%d", n), func(b *testing.B) {
			ev := mustCompile(b, e, mem)
			benchBatches(b, n, 8, func() { mustEval(b, ev, rec) })
		})
		b.Run(fmt.Sprintf("select/rows=%d", n), func(b *testing.B) {
			p, _ := CompilePredicate(e, mem, nil)
			var sel []int32
			benchBatches(b, n, 8, func() { sel, _ = p.Select(rec, sel) })
		})
		rec.Release()
	}
}

// BenchmarkArith is temperature * 1.8 + 32 over every row.
func BenchmarkArith(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rec := sensorBatch(mem, n)
			defer rec.Release()
			ev := mustCompile(b, benchProj, mem)
			benchBatches(b, n, 8, func() { mustEval(b, ev, rec) })
		})
	}
}

func BenchmarkUpper(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rec := stringBatch(mem, n, func(i int) string { return "sensor-" + strconv.Itoa(i) + "-room" })
			defer rec.Release()
			ev := mustCompile(b, call(planner.FnUpper, tStr, col(0, "s", tStr)), mem)
			benchBatches(b, n, 16, func() { mustEval(b, ev, rec) })
		})
	}
}

func BenchmarkLikePrefix(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rec := stringBatch(mem, n, func(i int) string { return []string{"abc", "abd", "xyz"}[i%3] + strconv.Itoa(i) })
			defer rec.Release()
			ev := mustCompile(b, pred(planner.FnLike, col(0, "s", tStr), str("abc%")), mem)
			benchBatches(b, n, 8, func() { mustEval(b, ev, rec) })
		})
	}
}

func BenchmarkCastStringToBigint(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rec := stringBatch(mem, n, func(i int) string { return strconv.Itoa(i * 7919) })
			defer rec.Release()
			ev := mustCompile(b, cast(col(0, "s", tStr), tBig), mem)
			benchBatches(b, n, 6, func() { mustEval(b, ev, rec) })
		})
	}
}

func BenchmarkCastBigintToDecimal(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rec := sensorBatch(mem, n)
			defer rec.Release()
			ev := mustCompile(b, cast(col(1, "ts", tBig), decT(19, 0)), mem)
			benchBatches(b, n, 8, func() { mustEval(b, ev, rec) })
		})
	}
}

// BenchmarkTake gathers every other row of a BIGINT and of a STRING column.
func BenchmarkTake(b *testing.B) {
	for _, n := range benchSizes {
		mem := memory.NewGoAllocator()
		sel := make([]int32, 0, n/2)
		for i := 0; i < n; i += 2 {
			sel = append(sel, int32(i))
		}
		ints := sensorBatch(mem, n)
		strs := stringBatch(mem, n, func(i int) string { return "value-" + strconv.Itoa(i) })
		b.Run(fmt.Sprintf("bigint/rows=%d", n), func(b *testing.B) {
			benchBatches(b, n, 8, func() { exec.Take(mem, ints.Column(0), sel).Release() })
		})
		b.Run(fmt.Sprintf("string/rows=%d", n), func(b *testing.B) {
			benchBatches(b, n, 12, func() { exec.Take(mem, strs.Column(0), sel).Release() })
		})
		ints.Release()
		strs.Release()
	}
}

// BenchmarkCase is CASE WHEN temperature > 30 THEN 'hot' WHEN temperature > 25 THEN 'warm'
// ELSE 'cold' END.
func BenchmarkCase(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rec := sensorBatch(mem, n)
			defer rec.Release()
			e := caseOf(tStr, str("cold"), pred(planner.FnGt, benchTemp, f64(30)), str("hot"),
				pred(planner.FnGt, benchTemp, f64(25)), str("warm"))
			ev := mustCompile(b, e, mem)
			benchBatches(b, n, 8, func() { mustEval(b, ev, rec) })
		})
	}
}
