package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaWatermarkPerPartition: one task reads two partitions whose rows cover the
// same 30 seconds, each in time order. However the fetches interleave them, no row is
// late: the watermark follows the partition behind (as Flink's per-partition
// watermarks), so every 1-second window counts the rows of both.
func TestKafkaWatermarkPerPartition(t *testing.T) {
	addr := kafkaCluster(t, 2, "events")
	cl := kafkaClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	const perPartition = 3000
	for p := range int32(2) { // all of partition 0 first, then all of partition 1
		for i := range perPartition {
			ts := base.Add(time.Duration(i)*10*time.Millisecond + time.Duration(p)*5*time.Millisecond)
			rec := &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, "%d,%s", p, ts.Format("2006-01-02 15:04:05.000"))}
			if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	ddl := fmt.Sprintf(`CREATE TABLE events (p INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'csv');
`, addr)
	got := runOnTime(t, ddl, `SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end`)
	var want result
	for s := range perPartition / 100 {
		want = append(want, map[string]any{"window_start": base.Add(time.Duration(s) * time.Second).Format("2006-01-02 15:04:05.000"), "n": float64(200)})
	}
	compareRows(t, got, want)
}
