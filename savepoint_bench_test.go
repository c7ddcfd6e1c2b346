package streamsql

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/job"
)

// BenchmarkSavepoint1MKeys measures savepoints of a group aggregate holding a million
// keys: the time to take one while the job runs, and its size; the job's throughput
// while it is written, against before; and the time from starting the job from it to
// its first processed row, at the parallelism it was taken at (1) and at 2. Run it with
// -benchtime 1x.
func BenchmarkSavepoint1MKeys(b *testing.B) {
	for range b.N {
		benchmarkSavepoint(b)
	}
}

func benchmarkSavepoint(b *testing.B) {
	ctx := context.Background()
	state := b.TempDir()
	script := func(parallelism int) string {
		return fmt.Sprintf(`SET 'execution.checkpointing.interval' = '10 min';
SET 'parallelism.default' = '%d';
CREATE TABLE gen (id BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '100000000', 'rows-per-second' = '1000000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000000', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE hole (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT MOD(id, 1000000), COUNT(*), SUM(v) FROM gen GROUP BY MOD(id, 1000000);`, parallelism)
	}
	s, err := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: state})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Exec(ctx, script(1)); err != nil {
		b.Fatal(err)
	}
	j := s.Job("insert-hole")
	waitRows(b, j, 1_200_000)
	rate := func(d time.Duration) float64 { // rows/s over d
		before := j.Status().RowsIn
		time.Sleep(d)
		return float64(j.Status().RowsIn-before) / d.Seconds()
	}
	baseline := rate(time.Second)
	before, began := j.Status().RowsIn, time.Now()
	b.ResetTimer()
	path, err := j.Savepoint(ctx, filepath.Join(state, "sp"))
	took := time.Since(began)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	during := float64(j.Status().RowsIn-before) / took.Seconds()
	j.Stop(false)
	s.Wait()
	var size int64
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, _ error) error {
		if info, err := d.Info(); err == nil && !d.IsDir() {
			size += info.Size()
		}
		return nil
	})
	b.ReportMetric(took.Seconds(), "savepoint-s")
	b.ReportMetric(float64(size)/(1<<20), "savepoint-MiB")
	b.ReportMetric(during/baseline, "throughput-while-saving/before")
	for _, p := range []int{1, 2} {
		r, err := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: b.TempDir(), Settings: map[string]string{"execution.savepoint.path": path}})
		if err != nil {
			b.Fatal(err)
		}
		began := time.Now()
		if err := r.Exec(ctx, script(p)); err != nil {
			b.Fatal(err)
		}
		waitRows(b, r.Job("insert-hole"), 1)
		b.ReportMetric(time.Since(began).Seconds(), fmt.Sprintf("restore-to-first-row-p%d-s", p))
		r.Job("insert-hole").Stop(false)
		r.Wait()
		r.Close()
	}
}

// waitRows waits until j has read n rows.
func waitRows(b *testing.B, j *job.Job, n int64) {
	for deadline := time.Now().Add(2 * time.Minute); j.Status().RowsIn < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) || j.Status().State == job.Failed {
			b.Fatalf("the job read %d rows: %+v", j.Status().RowsIn, j.Status())
		}
	}
}
