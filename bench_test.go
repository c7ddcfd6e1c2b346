package streamsql

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// fileBytes sums the sizes of the files called name below dir.
func fileBytes(dir, name string) int64 {
	var n int64
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

type benchQuery struct {
	name string
	rows int // input rows, for rows/s
	sql  string
}

// setups are statements run once before a query's timed runs, by its name; $DIR in them
// and in the query is a directory of the benchmark's own.
var setups = map[string]string{}

// BenchmarkQuery runs whole queries over generated rows into a blackhole sink through
// a session, the way `streamsql -f` runs them. The parallel variant and the checkpointed
// ones are "group by 100k keys" with two tasks per operator, or with exactly-once checkpoints (every 200 ms over 1M rows, every second over
// 5M rows, so several complete within a run): compare the two.
func BenchmarkQuery(b *testing.B) {
	source := func(rows, keys int) string {
		return fmt.Sprintf(`
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
  'rows-per-second' = '1000000000', 'seed' = '1',
  'fields.k.min' = '1', 'fields.k.max' = '%d', 'fields.v.min' = '0', 'fields.v.max' = '1000');`, rows, keys)
	}
	const groupBy = `
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k;`
	queries := []benchQuery{
		{"filter+project", 1_000_000, source(1_000_000, 1<<30) + `
CREATE TABLE out (k BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, v * 2 FROM gen WHERE v > 500;`},
		{"group by 10k keys", 1_000_000, source(1_000_000, 10_000) + groupBy},
		{"group by 100k keys", 1_000_000, source(1_000_000, 100_000) + groupBy},
		{"group by 100k keys, parallelism 2", 1_000_000,
			"SET 'parallelism.default' = '2';" + source(1_000_000, 100_000) + groupBy},
		{"group by 100k keys, checkpoints every 200 ms", 1_000_000,
			"SET 'execution.checkpointing.interval' = '200 ms';" + source(1_000_000, 100_000) + groupBy},
		{"group by 100k keys, 5M rows", 5_000_000, source(5_000_000, 100_000) + groupBy},
		{"group by 100k keys, 5M rows, checkpoints every second", 5_000_000,
			"SET 'execution.checkpointing.interval' = '1 s';" + source(5_000_000, 100_000) + groupBy},
	}
	// Windows over event time: one event a millisecond, 10k keys, exactly-once checkpoints
	// every 10 s (the final one within the run).
	keys := 10_000
	events := func(table string, rows int, seed int) string {
		return fmt.Sprintf(`
CREATE TABLE %s (id BIGINT, k BIGINT, v BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '1000000000', 'seed' = '%d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d',
  'fields.k.min' = '1', 'fields.k.max' = '%d', 'fields.v.min' = '0', 'fields.v.max' = '1000');`, table, rows, seed, rows, keys)
	}
	windowed := func(tvf, interval string, rows int) string {
		return "SET 'execution.checkpointing.interval' = '" + interval + "';" + events("ev", rows, 1) + `
CREATE TABLE out (ws TIMESTAMP(3), we TIMESTAMP(3), k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM TABLE(` + tvf + `) GROUP BY window_start, window_end, k;`
	}
	const tumble = "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)"
	// Joins of two sources of 500k events each, one event a millisecond, 10k keys: an
	// interval join within a second, and a regular join (which keeps every row).
	joined := func(on string) string {
		return "SET 'execution.checkpointing.interval' = '10 s';" + events("a", 500_000, 1) + events("b", 500_000, 2) + `
CREATE TABLE out (x BIGINT, y BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT a.id, b.id FROM a JOIN b ON ` + on + `;`
	}
	over := func(frame string) string {
		return "SET 'execution.checkpointing.interval' = '10 s';" + events("ev", 1_000_000, 1) + `
CREATE TABLE out (id BIGINT, k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT id, k, COUNT(*) OVER w, SUM(v) OVER w FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts ` + frame + `);`
	}
	queries = append(queries,
		benchQuery{"tumble 10 s by 10k keys", 1_000_000, windowed(tumble, "10 s", 1_000_000)},
		benchQuery{"hop 10 s every 2 s by 10k keys", 1_000_000, windowed("HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)", "10 s", 1_000_000)},
		// The same tumbling windows with a checkpoint every second over 1M and 4M events:
		// when state is steady, the state file does not grow with the input.
		benchQuery{"tumble 10 s by 10k keys, checkpoints every second, 1M rows", 1_000_000, windowed(tumble, "1 s", 1_000_000)},
		benchQuery{"tumble 10 s by 10k keys, checkpoints every second, 4M rows", 4_000_000, windowed(tumble, "1 s", 4_000_000)},
		benchQuery{"interval join within 1 s by 10k keys", 1_000_000, joined("a.k = b.k AND b.ts BETWEEN a.ts - INTERVAL '1' SECOND AND a.ts")},
		benchQuery{"regular join by 10k keys", 1_000_000, joined("a.k = b.k AND a.v = b.v")},
		// The semi join of the same two sources on the same keys (IN): it stores the
		// same rows, and emits each left row once.
		benchQuery{"semi join by 10k keys", 1_000_000, "SET 'execution.checkpointing.interval' = '10 s';" + events("a", 500_000, 1) + events("b", 500_000, 2) + `
CREATE TABLE out (x BIGINT, y BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT a.id, a.v FROM a WHERE (a.k, a.v) IN (SELECT b.k, b.v FROM b);`},
		// OVER aggregates over the same events: every row comes out, with the aggregates
		// of its key's last 11 rows (compare with "tumble 10 s by 10k keys", one row per
		// window and key).
		benchQuery{"over rows 10 preceding by 10k keys", 1_000_000, over("ROWS BETWEEN 10 PRECEDING AND CURRENT ROW")},
		benchQuery{"over range 10 s preceding by 10k keys", 1_000_000, over("RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW")},
		// An event-time temporal join of the same 1M events (rows/s counts them) against
		// 100k versions of 10k keys' rates over the same time: each event joins the rate
		// of its key valid at its time (compare with "tumble 10 s by 10k keys").
		benchQuery{"temporal join against 10k versioned keys", 1_000_000, "SET 'execution.checkpointing.interval' = '10 s';" + events("ev", 1_000_000, 1) + `
CREATE TABLE rates (rid BIGINT, k BIGINT, rate BIGINT, rts AS TO_TIMESTAMP_LTZ(rid * 10, 3),
  WATERMARK FOR rts AS rts - INTERVAL '1' SECOND, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'datagen', 'number-of-rows' = '100000', 'rows-per-second' = '1000000000', 'seed' = '3',
  'fields.rid.kind' = 'sequence', 'fields.rid.start' = '1', 'fields.rid.end' = '100000',
  'fields.k.min' = '1', 'fields.k.max' = '10000', 'fields.rate.min' = '0', 'fields.rate.max' = '1000');
CREATE TABLE out (id BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT ev.id, ev.v * r.rate FROM ev JOIN rates FOR SYSTEM_TIME AS OF ev.ts AS r ON ev.k = r.k;`},
		// A lookup join of the same events, by a PROCTIME() column, with an embedded table
		// of the 10k keys behind a PARTIAL cache that holds them all: after the first
		// batches every key is in the cache (compare with "tumble 10 s by 10k keys").
		benchQuery{"lookup join with a warm cache, 10k keys", 1_000_000, "SET 'execution.checkpointing.interval' = '10 s';" + strings.Replace(events("ev", 1_000_000, 1), "ts AS", "p AS PROCTIME(), ts AS", 1) + `
CREATE TABLE dim (k BIGINT, name STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '$DIR/dim.db',
  'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '20000');
CREATE TABLE out (id BIGINT, k BIGINT, name STRING) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT ev.id, ev.k, d.name FROM ev JOIN dim FOR SYSTEM_TIME AS OF ev.p AS d ON ev.k = d.k;`},
		// MATCH_RECOGNIZE over the same events: a low value, then one or more middle ones,
		// then a high one, per key (compare with "tumble 10 s by 10k keys").
		benchQuery{"match A B+ C by 10k keys", 1_000_000, "SET 'execution.checkpointing.interval' = '10 s';" + events("ev", 1_000_000, 1) + `
CREATE TABLE out (k BIGINT, f BIGINT, l BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT * FROM ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.id) AS f, LAST(C.id) AS l, COUNT(B.v) AS n
  AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C)
  DEFINE A AS A.v < 300, B AS B.v >= 300 AND B.v < 700, C AS C.v >= 700);`})
	setups["lookup join with a warm cache, 10k keys"] = `
CREATE TABLE dim (k BIGINT, name STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'embedded', 'path' = '$DIR/dim.db');
CREATE TABLE keys (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10000',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '10000');
INSERT INTO dim SELECT k, CONCAT('name-', CAST(k AS STRING)) FROM keys;`
	// With 10k keys most windows of a key hold one or two events, so a hopping window
	// emits size/slide times the rows of a tumbling one; with 100 keys output is small
	// and the cost of the input shows.
	keys = 100
	queries = append(queries,
		benchQuery{"tumble 10 s by 100 keys", 1_000_000, windowed(tumble, "10 s", 1_000_000)},
		benchQuery{"hop 10 s every 2 s by 100 keys", 1_000_000, windowed("HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)", "10 s", 1_000_000)})
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			sql := q.sql
			if setup := setups[q.name]; setup != "" {
				dir := b.TempDir()
				s, err := NewSession(Config{Out: io.Discard, Format: "csv", StateDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Exec(context.Background(), strings.ReplaceAll(setup, "$DIR", dir)); err != nil {
					b.Fatal(err)
				}
				if err := s.Wait(); err != nil {
					b.Fatal(err)
				}
				s.Close()
				sql = strings.ReplaceAll(sql, "$DIR", dir)
				b.ResetTimer()
			}
			b.ReportAllocs()
			var stateBytes int64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				s, err := NewSession(Config{Out: io.Discard, Format: "csv", StateDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Exec(context.Background(), sql); err != nil {
					b.Fatal(err)
				}
				if err := s.Wait(); err != nil {
					b.Fatal(err)
				}
				stateBytes = max(stateBytes, fileBytes(dir, "state.db"))
			}
			b.ReportMetric(float64(b.N*q.rows)/b.Elapsed().Seconds(), "rows/s")
			if stateBytes > 0 {
				// bbolt files do not shrink: their size is the largest the state grew to.
				b.ReportMetric(float64(stateBytes), "state-bytes")
			}
		})
	}
}

// BenchmarkLongExpression parses, binds and explains a flat chain of 100,000 terms.
func BenchmarkLongExpression(b *testing.B) {
	for name, sql := range map[string]string{
		"sum": "EXPLAIN SELECT " + strings.Repeat("1 + ", 99_999) + "1;",
		"and": "EXPLAIN SELECT 1 WHERE " + strings.Repeat("1 = 1 AND ", 99_999) + "1 = 1;",
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			s, _ := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: b.TempDir()})
			for b.Loop() {
				if err := s.Exec(context.Background(), sql); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
