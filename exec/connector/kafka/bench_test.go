package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/twmb/franz-go/pkg/kgo"
)

// benchRecords is the input of BenchmarkKafkaPassThrough, in two partitions.
const benchRecords = 200000

// BenchmarkKafkaPassThrough copies a topic to another through the connector (a source
// task decoding csv into batches, a sink task encoding them, checkpoints every 100 ms)
// and, as a baseline, with a plain franz-go consume and produce loop of the same
// records, against the in-process cluster.
func BenchmarkKafkaPassThrough(b *testing.B) {
	addr := cluster(b, 2, "in", "out", "base")
	vals := make([]string, benchRecords)
	for i := range vals {
		vals[i] = fmt.Sprintf("%d,name-%d", i, i)
	}
	half := benchRecords / 2
	produce(b, addr, "in", 0, vals[:half]...)
	produce(b, addr, "in", 1, vals[half:]...)
	ctx := context.Background()
	for _, guarantee := range []string{"exactly-once", "at-least-once"} {
		b.Run("connector/"+guarantee, func(b *testing.B) {
			b.ReportAllocs()
			dir := b.TempDir()
			id := int64(0)
			for i := 0; i < b.N; i++ {
				n, err := passThrough(ctx, addr, guarantee, dir, &id)
				if err != nil {
					b.Fatal(err)
				}
				if n != benchRecords {
					b.Fatalf("copied %d records", n)
				}
			}
			b.ReportMetric(float64(benchRecords*b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
	b.Run("franz-go-baseline", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if n, err := baseline(ctx, addr); err != nil || n != benchRecords {
				b.Fatalf("copied %d records: %v", n, err)
			}
		}
		b.ReportMetric(float64(benchRecords*b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// passThrough runs one source task into one sink task as the engine would, and
// returns the rows copied.
func passThrough(ctx context.Context, addr, guarantee, dir string, id *int64) (int, error) {
	in := kafkaTable("in", addr, map[string]string{"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
	out := kafkaTable("out", addr, map[string]string{"topic": "out", "sink.delivery-guarantee": guarantee, "sink.transactional-id-prefix": "bench"})
	mem := memory.DefaultAllocator
	r, err := Source.Open(ctx, connector.SourceSpec{Table: in, Mem: mem, BatchSize: connector.DefaultBatchSize})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	s, err := Sink.Open(ctx, connector.SinkSpec{Table: out, Mem: mem, ID: "bench", Checkpointed: true, StateDir: dir})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	sink := s.(*KafkaSink)
	checkpoint := func() error {
		*id++
		if _, err := sink.Snapshot(ctx, *id); err != nil {
			return err
		}
		return sink.CheckpointComplete(ctx, *id)
	}
	rows := 0
	last := time.Now()
	for {
		batch, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rows, err
		}
		rows += batch.Len()
		err = s.Process(ctx, 0, batch)
		batch.Release()
		if err != nil {
			return rows, err
		}
		if time.Since(last) >= 100*time.Millisecond {
			if err := checkpoint(); err != nil {
				return rows, err
			}
			last = time.Now()
		}
	}
	if err := s.Finish(ctx); err != nil {
		return rows, err
	}
	return rows, checkpoint()
}

// baseline copies topic in to topic base with franz-go alone: consume to the end
// offsets, produce each value, wait for the acknowledgements.
func baseline(ctx context.Context, addr string) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		"in": {0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	end := int64(benchRecords / 2)
	pos := map[int32]int64{}
	var mu sync.Mutex
	var produceErr error
	n := 0
	for pos[0] < end || pos[1] < end {
		fs := cl.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			return n, errs[0].Err
		}
		fs.EachRecord(func(r *kgo.Record) {
			pos[r.Partition] = r.Offset + 1
			n++
			cl.Produce(ctx, &kgo.Record{Topic: "base", Value: r.Value}, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					produceErr = err
					mu.Unlock()
				}
			})
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return n, err
	}
	mu.Lock()
	defer mu.Unlock()
	return n, produceErr
}

// BenchmarkSpool writes and reads back an exactly-once sink's spool of 10,000 records
// of 100 bytes, without metadata and with a timestamp and one header each.
func BenchmarkSpool(b *testing.B) {
	value := bytes.Repeat([]byte("x"), 100)
	for _, withMeta := range []bool{false, true} {
		name := "plain"
		var meta *recordMeta
		if withMeta {
			name = "metadata"
			meta = &recordMeta{timestamp: 1714979289123, hasTimestamp: true, headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t-1")}}}
		}
		b.Run(name, func(b *testing.B) {
			sp := &spool{s: &KafkaSink{table: "t"}, dir: b.TempDir(), name: "bench", run: "0123456789abcdef"}
			const n = 10000
			b.SetBytes(n * int64(len(value)))
			b.ReportAllocs()
			for range b.N {
				for range n {
					if err := sp.write(nil, value, meta); err != nil {
						b.Fatal(err)
					}
				}
				if err := sp.flush(); err != nil {
					b.Fatal(err)
				}
				sp.open.Close()
				f, err := os.Open(sp.openPath())
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				if err := readSpool(f, sp.written, withMeta, func(_, _ []byte, _ *recordMeta) error { got++; return nil }); err != nil || got != n {
					b.Fatal(err, got)
				}
				f.Close()
				sp.open = nil
			}
		})
	}
}
