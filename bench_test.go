package streamsql

import (
	"context"
	"fmt"
	"io"
	"testing"
)

// BenchmarkQuery runs whole queries over datagen into a blackhole sink through a session,
// the way `streamsql -f` runs them.
func BenchmarkQuery(b *testing.B) {
	const rows = 1_000_000
	queries := []struct{ name, sql string }{
		{"filter+project", `INSERT INTO out SELECT k, v * 2 FROM gen WHERE v > 500`},
		{"group by 10k keys", `INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k`},
		{"group by 100k keys", `INSERT INTO out SELECT k % 100000, COUNT(*), SUM(v) FROM gen GROUP BY k % 100000`},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s, err := NewSession(Config{Out: io.Discard, Format: "csv"})
				if err != nil {
					b.Fatal(err)
				}
				sql := fmt.Sprintf(`
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
  'rows-per-second' = '1000000000', 'seed' = '1',
  'fields.k.min' = '1', 'fields.k.max' = '%d', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
%s;`, rows, map[bool]int{true: 10000, false: 1 << 40}[q.name == "group by 10k keys"], q.sql)
				if q.name == "filter+project" {
					sql = fmt.Sprintf(`
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
  'rows-per-second' = '1000000000', 'seed' = '1', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE out (k BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
%s;`, rows, q.sql)
				}
				if err := s.Exec(context.Background(), sql); err != nil {
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
