package kafka

import (
	"context"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cluster starts an in-process Kafka cluster with topics of partitions partitions and
// returns its address.
func cluster(t testing.TB, partitions int32, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

func client(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes values to one partition of topic, synchronously.
func produce(t testing.TB, addr, topic string, partition int32, values ...string) {
	t.Helper()
	cl := client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v)}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// consumed is a record read back: partition, key and value.
type consumed struct {
	Partition int32
	Key       string
	Value     string
	Timestamp time.Time
	Headers   []kgo.RecordHeader
}

// consume reads every record of topic up to its end offsets now (the last stable
// offsets when readCommitted), in partition and offset order.
func consume(t testing.TB, addr, topic string, readCommitted bool) []consumed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin := client(t, addr)
	tps, err := partitionsOf(ctx, admin, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	ends, err := listOffsets(ctx, admin, tps, latestTimestamp, readCommitted)
	if err != nil {
		t.Fatal(err)
	}
	assign := map[int32]kgo.Offset{}
	for tp, end := range ends {
		if end > 0 {
			assign[tp.Partition] = kgo.NewOffset().AtStart()
		}
	}
	if len(assign) == 0 {
		return nil
	}
	opts := []kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}), kgo.KeepControlRecords()}
	if readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl := client(t, addr, opts...)
	var out []consumed
	pos := map[int32]int64{}
	done := func() bool {
		for p := range assign {
			if pos[p] < ends[topicPartition{topic, p}] {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consuming %s: %v (at %v, ends %v)", topic, err, pos, ends)
		}
		for _, fe := range fs.Errors() {
			t.Fatalf("consuming %s: %v", topic, fe.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= ends[topicPartition{topic, r.Partition}] {
				return
			}
			pos[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				out = append(out, consumed{r.Partition, string(r.Key), string(r.Value), r.Timestamp, r.Headers})
			}
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

func values(recs []consumed) []string {
	v := make([]string, len(recs))
	for i, r := range recs {
		v[i] = r.Value
	}
	return v
}

func kafkaTable(name, addr string, opts map[string]string) *planner.Table {
	t := &planner.Table{Name: name, Options: map[string]string{"connector": "kafka", "properties.bootstrap.servers": addr, "format": "csv"}}
	for k, v := range opts {
		t.Options[k] = v
	}
	t.Columns = []planner.TableColumn{{Name: "id", Type: planner.TypeBigInt}, {Name: "name", Type: planner.TypeString}}
	return t
}

func checkedMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func openReader(t testing.TB, spec connector.SourceSpec) *Reader {
	t.Helper()
	r, err := Source.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.(*Reader)
}

// readN reads batches until it has n rows (or io.EOF, or a timeout), as csv lines.
func readRows(t testing.TB, r exec.Reader, n int) (rows []string, eof bool) {
	t.Helper()
	enc := format.NewCSVEncoder(format.DefaultCSVOptions())
	deadline := time.Now().Add(10 * time.Second)
	for len(rows) < n || n < 0 {
		if time.Now().After(deadline) {
			t.Fatalf("timed out with %d rows of %d", len(rows), n)
		}
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return rows, true
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Rec != nil {
			rows = append(rows, strings.Split(strings.TrimSuffix(string(format.AppendRows(nil, enc, b)), "\n"), "\n")...)
			b.Release()
		}
	}
	return rows, false
}

// readAll reads to io.EOF.
func readAll(t testing.TB, r exec.Reader) []string {
	rows, _ := readRows(t, r, -1)
	return rows
}

func lines(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, itoa(i)+","+prefix+itoa(i))
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
