package streamsql

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"
)

// BenchmarkStartup runs three-row queries over datagen at parallelism 1, 16, 64 and
// 128: a job's whole life is then building its tasks and channels, starting them, and
// passing watermarks and ends through its exchanges. "select" gathers the source tasks
// into the result task; "group by" hash-partitions them to as many aggregate tasks, an
// exchange of p² channels, each of which carries a watermark and an end.
//
// ns/added-task is what each task beyond those of parallelism 1 adds to the run (the
// job's fixed cost, planning and the session, cancels out), ns/added-channel the same
// per channel; ratio-to-p16 compares ns/added-task (select) or ns/added-channel (group
// by) with parallelism 16 in the same run: start-up is linear when it stays near 1.
func BenchmarkStartup(b *testing.B) {
	const source = `
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '3');`
	shapes := []struct {
		name            string
		sql             string
		tasks, channels func(p int) int
	}{
		{"select", "SELECT k FROM gen;",
			func(p int) int { return p + 1 }, func(p int) int { return p }},
		{"group by", "SELECT k, COUNT(*) AS c FROM gen GROUP BY k;",
			func(p int) int { return 2*p + 1 }, func(p int) int { return p*p + p }},
	}
	for _, shape := range shapes {
		var at1, at16 float64 // ns/op at parallelism 1; the unit compared at 16
		for _, p := range []int{1, 16, 64, 128} {
			b.Run(fmt.Sprintf("%s/p=%d", shape.name, p), func(b *testing.B) {
				b.ReportAllocs()
				sql := fmt.Sprintf("SET 'parallelism.default' = '%d';", p) + source + shape.sql
				start := time.Now()
				for i := 0; i < b.N; i++ {
					s, err := NewSession(Config{Out: io.Discard, Err: io.Discard, Format: "csv", StateDir: b.TempDir()})
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Exec(context.Background(), sql); err != nil {
						b.Fatal(err)
					}
					s.Close()
				}
				perOp := float64(time.Since(start).Nanoseconds()) / float64(b.N)
				if p == 1 {
					at1 = perOp
					return
				}
				perTask := (perOp - at1) / float64(shape.tasks(p)-shape.tasks(1))
				perChannel := (perOp - at1) / float64(shape.channels(p)-shape.channels(1))
				b.ReportMetric(perTask, "ns/added-task")
				b.ReportMetric(perChannel, "ns/added-channel")
				unit := perTask
				if shape.name == "group by" {
					unit = perChannel
				}
				if p == 16 {
					at16 = unit
				}
				if at1 > 0 && at16 > 0 {
					b.ReportMetric(unit/at16, "ratio-to-p16")
				}
			})
		}
	}
}
