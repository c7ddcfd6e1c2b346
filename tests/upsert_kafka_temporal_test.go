package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestUpsertKafkaTemporal: an upsert-kafka table is a versioned table. Its upserts are
// versions of their keys from their rates' times (out of order across keys); the
// source turns a tombstone into a -D of the key's last row, which ends the key's
// versions at that row's time. 3000 orders, out of order, join the version valid at
// their times at parallelism 2, as computed here from the records produced.
func TestUpsertKafkaTemporal(t *testing.T) {
	addr := kafkaCluster(t, 3, "rates")
	cl := kafkaClient(t, addr)
	r := rand.New(rand.NewPCG(8, 1))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	text := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") }
	type version struct {
		ts      int64
		rate    int
		deleted bool
	}
	versions := map[int][]version{} // by key, in the order the source reads them
	live := map[int]version{}
	add := func(k int, v version) {
		vs := versions[k]
		for i := range vs {
			if vs[i].ts == v.ts {
				vs[i] = v // the later of one time replaces the earlier
				return
			}
		}
		versions[k] = append(vs, v)
	}
	var first error
	for i := range 1500 {
		k := r.IntN(40)
		rec := &kgo.Record{Topic: "rates", Key: fmt.Appendf(nil, `{"k":%d}`, k)}
		if last, ok := live[k]; ok && r.IntN(6) == 0 {
			add(k, version{ts: last.ts, deleted: true})
			delete(live, k)
		} else {
			v := version{ts: base + int64(i)*100 - r.Int64N(500), rate: r.IntN(1000)}
			rec.Value = fmt.Appendf(nil, `{"k":%d,"rate":%d,"rts":%q}`, k, v.rate, text(v.ts))
			add(k, v)
			live[k] = v
		}
		cl.Produce(context.Background(), rec, func(_ *kgo.Record, err error) {
			if err != nil && first == nil {
				first = err
			}
		})
	}
	if err := cl.Flush(context.Background()); err != nil || first != nil {
		t.Fatalf("producing: %v %v", err, first)
	}
	var orders strings.Builder
	var want result
	for id := range 3000 {
		k, ts := r.IntN(45), base+int64(id)*50-r.Int64N(1000)
		fmt.Fprintf(&orders, "%d,%d,%s\n", id, k, text(ts))
		var valid *version
		for i, v := range versions[k] {
			if v.ts <= ts && (valid == nil || v.ts > valid.ts) {
				valid = &versions[k][i]
			}
		}
		if valid != nil && !valid.deleted {
			want = append(want, map[string]any{"id": float64(id), "k": float64(k), "rate": float64(valid.rate), "rts": text(valid.ts)})
		}
	}
	path := filepath.Join(t.TempDir(), "orders.csv")
	if err := os.WriteFile(path, []byte(orders.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ddl := fmt.Sprintf(`SET 'parallelism.default' = '2';
CREATE TABLE orders (id BIGINT, k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE rates (k BIGINT, rate BIGINT, rts TIMESTAMP(3), WATERMARK FOR rts AS rts - INTERVAL '2' SECOND,
  PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'rates', 'properties.bootstrap.servers' = '%s',
  'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');
`, path, addr)
	got := runOnTime(t, ddl, "SELECT o.id AS id, o.k AS k, r.rate AS rate, r.rts AS rts FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k")
	if len(want) < 1000 {
		t.Fatalf("only %d orders have a rate", len(want))
	}
	sort.Slice(want, func(i, j int) bool { return want[i]["id"].(float64) < want[j]["id"].(float64) })
	compareRows(t, got, want)
}
