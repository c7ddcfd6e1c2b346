package streamsql

import (
	"context"
	"fmt"
	"io"
	"testing"
)

// BenchmarkQuery runs whole queries over 1M generated rows into a blackhole sink through
// a session, the way `streamsql -f` runs them. The checkpointed variant is the same
// query as the one before it, with exactly-once checkpoints every 200 ms (several within the run): compare the two.
func BenchmarkQuery(b *testing.B) {
	const rows = 1_000_000
	source := func(keys int) string {
		return fmt.Sprintf(`
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
  'rows-per-second' = '1000000000', 'seed' = '1',
  'fields.k.min' = '1', 'fields.k.max' = '%d', 'fields.v.min' = '0', 'fields.v.max' = '1000');`, rows, keys)
	}
	const checkpoints = "SET 'execution.checkpointing.interval' = '200 ms';\n"
	queries := []struct{ name, sql string }{
		{"filter+project", source(1<<30) + `
CREATE TABLE out (k BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, v * 2 FROM gen WHERE v > 500;`},
		{"group by 10k keys", source(10_000) + `
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k;`},
		{"group by 100k keys", source(100_000) + `
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k;`},
	}
	queries = append(queries, struct{ name, sql string }{"group by 100k keys, checkpoints every 200 ms", checkpoints + queries[2].sql})
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s, err := NewSession(Config{Out: io.Discard, Format: "csv", StateDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Exec(context.Background(), q.sql); err != nil {
					b.Fatal(err)
				}
				if err := s.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
