package tests

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaRuntimeErrorNamesRecord: an expression that fails on a row read from Kafka
// fails the job at once (no restart, though the strategy allows three), naming the
// statement, the expression, and the record's topic, partition and offset.
func TestKafkaRuntimeErrorNamesRecord(t *testing.T) {
	addr := kafkaCluster(t, 2, "in")
	cl := kafkaClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for _, r := range []struct {
		p int32
		v string
	}{{0, "1,2"}, {1, "2,1"}, {1, "3,0"}, {0, "4,1"}} {
		recs = append(recs, &kgo.Record{Topic: "in", Partition: r.p, Value: []byte(r.v)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var out bytes.Buffer
	s, err := streamsql.NewSession(streamsql.Config{Out: &out, Err: &out, Format: "csv", Mem: mem, Location: time.UTC, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = s.Exec(ctx, `SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '3';
SET 'restart-strategy.fixed-delay.delay' = '10 s';
CREATE TABLE k (a INT, b INT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '`+addr+`', 'format' = 'csv',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
SELECT a, a / b AS q FROM k;`)
	if err == nil {
		t.Fatalf("the query did not fail; output:\n%s", out.String())
	}
	want := "statement at line 7 (SELECT a, a / b AS q FROM k;): expression a / b failed on table k, topic in, partition 1, offset 1: division by zero"
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
	if strings.Contains(out.String(), "restart 1") {
		t.Errorf("the job restarted:\n%s", out.String())
	}
}
