package embedded

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
	bolt "go.etcd.io/bbolt"
)

// BenchmarkEmbeddedSink upserts rows over 10k distinct keys into an embedded table, a
// checkpoint (one write transaction) every 100k rows, against a baseline in the same
// run: the same rows put into a bbolt bucket directly, one transaction per 100k rows.
func BenchmarkEmbeddedSink(b *testing.B) {
	const rows, keys, perCheckpoint = 1_000_000, 10_000, 100_000
	mem := memory.NewGoAllocator()
	schema := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "n", Type: planner.TypeBigInt}}
	tbl := &planner.Table{Name: "counts", Options: map[string]string{"connector": "embedded"}, PrimaryKey: []string{"k"}}
	for _, c := range schema {
		tbl.Columns = append(tbl.Columns, planner.TableColumn{Name: c.Name, Type: c.Type})
	}
	// One batch of 4096 updates (+U) cycling over the keys.
	bld := array.NewRecordBuilder(mem, exec.ArrowSchema(schema))
	kinds := make([]exec.RowKind, 4096)
	for i := range kinds {
		bld.Field(0).(*array.Int64Builder).Append(int64(i % keys))
		bld.Field(1).(*array.Int64Builder).Append(int64(i))
		kinds[i] = exec.UpdateAfter
	}
	rec := bld.NewRecord()
	defer rec.Release()
	bld.Release()
	batch := exec.Batch{Rec: rec, Kinds: kinds}

	b.Run("embedded sink", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for i := 0; i < b.N; i++ {
			tbl.Options["path"] = filepath.Join(b.TempDir(), "t.db")
			s, err := Sink.Open(ctx, connector.SinkSpec{Table: tbl, Schema: schema, Mem: mem})
			if err != nil {
				b.Fatal(err)
			}
			id := int64(0)
			for done := 0; done < rows; done += batch.Len() {
				if err := s.Process(ctx, 0, batch); err != nil {
					b.Fatal(err)
				}
				if (done+batch.Len())/perCheckpoint > done/perCheckpoint {
					id++
					if _, err := s.(exec.Snapshotter).Snapshot(ctx, id); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := s.Finish(ctx); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
		b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("baseline: bbolt puts", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "t.db"), 0o644, nil)
			if err != nil {
				b.Fatal(err)
			}
			for done := 0; done < rows; done += perCheckpoint {
				err := db.Update(func(tx *bolt.Tx) error {
					bk, err := tx.CreateBucketIfNotExists([]byte("rows"))
					if err != nil {
						return err
					}
					for r := done; r < done+perCheckpoint; r++ {
						k := fmt.Appendf(nil, `{"k":%d}`, r%keys)
						if err := bk.Put(k, fmt.Appendf(nil, `{"k":%d,"n":%d}`, r%keys, r)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			db.Close()
		}
		b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
	})
}
