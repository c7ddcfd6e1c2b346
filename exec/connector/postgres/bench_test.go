package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/planner"
)

const (
	benchKeys      = 10000 // distinct keys written per iteration
	benchBatch     = 1024  // rows per batch, as sources make them
	benchCheckpint = 5000  // exactly-once: rows between checkpoints
)

var benchSchema = planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "c", Type: planner.TypeBigInt},
	{Name: "s", Type: planner.TypeDouble}, {Name: "name", Type: planner.TypeString}}

// benchBatches are the rows of 10k keys, as +U changes of an aggregate.
func benchBatches(mem memory.Allocator) []exec.Batch {
	var out []exec.Batch
	schema := exec.ArrowSchema(benchSchema)
	for start := 0; start < benchKeys; start += benchBatch {
		bld := array.NewRecordBuilder(mem, schema)
		n := min(benchBatch, benchKeys-start)
		kinds := make([]exec.RowKind, n)
		for i := 0; i < n; i++ {
			k := int64(start + i)
			bld.Field(0).(*array.Int64Builder).Append(k)
			bld.Field(1).(*array.Int64Builder).Append(k % 97)
			bld.Field(2).(*array.Float64Builder).Append(float64(k) * 1.5)
			bld.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("sensor-%d", k))
			kinds[i] = exec.UpdateAfter
		}
		out = append(out, exec.Batch{Rec: bld.NewRecord(), Kinds: kinds})
		bld.Release()
	}
	return out
}

// BenchmarkPostgresSink measures upserts of 10k distinct keys per iteration through the
// sink, at-least-once and exactly-once, against plain COPY and multi-row INSERT ... ON
// CONFLICT loops writing the same rows on the same server.
func BenchmarkPostgresSink(b *testing.B) {
	ctx := context.Background()
	u := pgtest.URL(b)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		"CREATE TABLE bench (k bigint PRIMARY KEY, c bigint, s double precision, name text)",
		"CREATE TABLE bench_copy (k bigint, c bigint, s double precision, name text)",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	batches := benchBatches(mem)
	defer func() {
		for _, bt := range batches {
			bt.Release()
		}
	}()
	table := &planner.Table{Name: "bench_sink", PrimaryKey: []string{"k"}, Options: map[string]string{"connector": "postgres", "url": u, "table-name": "bench"}}
	for _, c := range benchSchema {
		table.Columns = append(table.Columns, planner.TableColumn{Name: c.Name, Type: c.Type})
	}
	report := func(b *testing.B, start time.Time) {
		b.ReportMetric(float64(b.N*benchKeys)/time.Since(start).Seconds(), "rows/s")
	}

	for _, g := range []string{guaranteeAtLeastOnce, guaranteeExactlyOnce} {
		b.Run(g, func(b *testing.B) {
			table.Options["sink.delivery-guarantee"] = g
			exactly := g == guaranteeExactlyOnce
			spec := connector.SinkSpec{Table: table, Schema: benchSchema, Mem: mem, ID: "bench-" + g, Checkpointed: exactly}
			if exactly {
				spec.StateDir = b.TempDir()
			}
			sk, err := Sink.Open(ctx, spec)
			if err != nil {
				b.Fatal(err)
			}
			defer sk.Close()
			s := sk.(*sink)
			var id int64
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				rows := 0
				for _, bt := range batches {
					if err := s.Process(ctx, 0, bt); err != nil {
						b.Fatal(err)
					}
					rows += bt.Len()
					if rows >= benchCheckpint || bt.Rec == batches[len(batches)-1].Rec {
						rows = 0
						id++
						if _, err := s.Snapshot(ctx, id); err != nil {
							b.Fatal(err)
						}
						if err := s.CheckpointComplete(ctx, id); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			report(b, start)
		})
	}

	b.Run("baseline COPY", func(b *testing.B) {
		rows := make([][]any, benchKeys)
		for i := range rows {
			k := int64(i)
			rows[i] = []any{k, k % 97, float64(k) * 1.5, fmt.Sprintf("sensor-%d", k)}
		}
		b.ReportAllocs()
		b.ResetTimer()
		var took time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if _, err := conn.Exec(ctx, "TRUNCATE bench_copy"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			start := time.Now()
			for off := 0; off < benchKeys; off += benchBatch {
				src := pgx.CopyFromRows(rows[off:min(off+benchBatch, benchKeys)])
				if _, err := conn.CopyFrom(ctx, pgx.Identifier{"bench_copy"}, []string{"k", "c", "s", "name"}, src); err != nil {
					b.Fatal(err)
				}
			}
			took += time.Since(start)
		}
		b.ReportMetric(float64(b.N*benchKeys)/took.Seconds(), "rows/s")
	})

	b.Run("baseline INSERT ON CONFLICT", func(b *testing.B) {
		const perStmt = 1000
		sql := "INSERT INTO bench (k, c, s, name) VALUES "
		for i := 0; i < perStmt; i++ {
			if i > 0 {
				sql += ", "
			}
			sql += fmt.Sprintf("($%d::int8, $%d::int8, $%d::float8, $%d::text)", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
		}
		sql += " ON CONFLICT (k) DO UPDATE SET c = EXCLUDED.c, s = EXCLUDED.s, name = EXCLUDED.name"
		args := make([]any, 0, 4*perStmt)
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			for off := 0; off < benchKeys; off += perStmt {
				args = args[:0]
				for k := int64(off); k < int64(off+perStmt); k++ {
					args = append(args, k, k%97, float64(k)*1.5, fmt.Sprintf("sensor-%d", k))
				}
				if _, err := conn.Exec(ctx, sql, args...); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b, start)
	})
}
