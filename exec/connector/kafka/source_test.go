package kafka

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestSourceReadsCSVAndJSON(t *testing.T) {
	addr := cluster(t, 1, "csv", "json")
	produce(t, addr, "csv", 0, "1,a", "2,\"b,c\"", "", "3,d\n")
	produce(t, addr, "json", 0, `{"id":1,"name":"a"}`, `{"name":"b","id":2}`, `{"id":3}`)
	mem := checkedMem(t)
	r := openReader(t, connector.SourceSpec{Mem: mem, Table: kafkaTable("c", addr, map[string]string{
		"topic": "csv", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})})
	if got, want := readAll(t, r), []string{"1,a", `2,"b,c"`, "3,d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("csv: got %q, want %q", got, want)
	}
	r = openReader(t, connector.SourceSpec{Mem: mem, Table: kafkaTable("j", addr, map[string]string{
		"topic": "json", "format": "json", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})})
	if got, want := readAll(t, r), []string{"1,a", "2,b", "3,"}; !reflect.DeepEqual(got, want) {
		t.Errorf("json: got %q, want %q", got, want)
	}
}

func TestSourceStartupModes(t *testing.T) {
	addr := cluster(t, 2, "in")
	ctx := context.Background()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	cl := client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 6; i++ { // partition i%2, one record a minute
		r := &kgo.Record{Topic: "in", Partition: int32(i % 2), Value: []byte(lines("r", i, i+1)[0]), Timestamp: base.Add(time.Duration(i) * time.Minute)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Committed offsets of group g: partition 0 at 2 (its last record), none for 1.
	_, ids, err := metadata(ctx, cl, []string{"in"})
	if err != nil {
		t.Fatal(err)
	}
	if err := commitOffsets(ctx, cl, "g", ids, map[topicPartition]int64{{"in", 0}: 2}); err != nil {
		t.Fatal(err)
	}
	bounded := func(opts map[string]string) map[string]string {
		opts["topic"] = "in"
		opts["scan.bounded.mode"] = "latest-offset"
		return opts
	}
	for _, tc := range []struct {
		name string
		opts map[string]string
		want []string
	}{
		{"earliest", bounded(map[string]string{"scan.startup.mode": "earliest-offset"}),
			[]string{"0,r0", "1,r1", "2,r2", "3,r3", "4,r4", "5,r5"}},
		{"latest", bounded(map[string]string{"scan.startup.mode": "latest-offset"}), nil},
		{"timestamp", bounded(map[string]string{"scan.startup.mode": "timestamp",
			"scan.startup.timestamp-millis": itoa(int(base.Add(3 * time.Minute).UnixMilli()))}),
			[]string{"3,r3", "4,r4", "5,r5"}},
		{"specific", bounded(map[string]string{"scan.startup.mode": "specific-offsets",
			"scan.startup.specific-offsets": "partition:0,offset:1;partition:1,offset:2"}),
			[]string{"2,r2", "4,r4", "5,r5"}},
		{"group", bounded(map[string]string{"properties.group.id": "g"}), // the default mode
			[]string{"1,r1", "3,r3", "4,r4", "5,r5"}},
		{"group latest reset", bounded(map[string]string{"properties.group.id": "g", "properties.auto.offset.reset": "latest"}),
			[]string{"4,r4"}},
		{"bounded timestamp", map[string]string{"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "timestamp",
			"scan.bounded.timestamp-millis": itoa(int(base.Add(2 * time.Minute).UnixMilli()))},
			[]string{"0,r0", "1,r1"}},
		{"bounded specific", map[string]string{"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "specific-offsets",
			"scan.bounded.specific-offsets": "partition:0,offset:1;partition:1,offset:3"},
			[]string{"0,r0", "1,r1", "3,r3", "5,r5"}},
		{"bounded group", map[string]string{"topic": "in", "properties.group.id": "g", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "group-offsets"},
			[]string{"0,r0", "2,r2", "1,r1", "3,r3", "5,r5"}}, // partition 1 falls back to its end
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openReader(t, connector.SourceSpec{Mem: checkedMem(t), Table: kafkaTable("in", addr, tc.opts)})
			got := readAll(t, r)
			sort.Strings(got)
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// A latest-offset start reads only what is produced after the source opened, and an
// unbounded source returns empty batches while nothing arrives.
func TestSourceLatestUnbounded(t *testing.T) {
	addr := cluster(t, 1, "in")
	produce(t, addr, "in", 0, lines("old", 0, 3)...)
	r := openReader(t, connector.SourceSpec{Mem: checkedMem(t), Table: kafkaTable("in", addr, map[string]string{
		"topic": "in", "scan.startup.mode": "latest-offset"})})
	start := time.Now()
	b, err := r.Next(context.Background())
	if err != nil || b.Rec != nil {
		t.Fatalf("an idle source returned %v, %v", b.Rec, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("an idle Next took %v", d)
	}
	produce(t, addr, "in", 0, lines("new", 3, 5)...)
	if got, _ := readRows(t, r, 2); !reflect.DeepEqual(got, lines("new", 3, 5)) {
		t.Errorf("got %q", got)
	}
}

// A bounded source ends at the offsets of its start: later records are not read.
func TestSourceBoundedEndsWithEOF(t *testing.T) {
	addr := cluster(t, 2, "in")
	produce(t, addr, "in", 0, lines("a", 0, 5)...)
	r := openReader(t, connector.SourceSpec{Mem: checkedMem(t), BatchSize: 2, Table: kafkaTable("in", addr, map[string]string{
		"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})})
	produce(t, addr, "in", 0, lines("late", 5, 7)...)
	produce(t, addr, "in", 1, lines("late", 7, 9)...)
	rows, eof := readRows(t, r, -1)
	if !eof || !reflect.DeepEqual(rows, lines("a", 0, 5)) {
		t.Fatalf("got %q (eof %v)", rows, eof)
	}
	if _, err := r.Next(context.Background()); err == nil || !strings.Contains(err.Error(), "EOF") {
		t.Errorf("Next after the end: %v", err)
	}
}

// Transactions in the input: a read_committed source skips aborted records and still
// reaches the end past the transaction markers.
func TestSourceReadCommittedInput(t *testing.T) {
	addr := cluster(t, 1, "in")
	ctx := context.Background()
	cl := client(t, addr, kgo.TransactionalID("writer"))
	for i, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit, kgo.TryAbort} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "in", Value: []byte(lines("t", i, i+1)[0])}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	r := openReader(t, connector.SourceSpec{Mem: checkedMem(t), Table: kafkaTable("in", addr, map[string]string{
		"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})})
	if got, want := readAll(t, r), []string{"0,t0", "2,t2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A snapshot is the next offset of each partition; a restored reader continues there
// exactly, bounded by the ends of the first start.
func TestSourceSnapshotRestore(t *testing.T) {
	addr := cluster(t, 2, "in")
	produce(t, addr, "in", 0, lines("p", 0, 10)...)
	produce(t, addr, "in", 1, lines("q", 10, 17)...)
	mem := checkedMem(t)
	tbl := kafkaTable("in", addr, map[string]string{"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
	r := openReader(t, connector.SourceSpec{Mem: mem, Table: tbl, BatchSize: 4})
	first, _ := readRows(t, r, 6)
	state, err := r.Snapshot(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	rest := readAll(t, r)
	if len(first)+len(rest) != 17 {
		t.Fatalf("read %d + %d rows", len(first), len(rest))
	}
	produce(t, addr, "in", 1, lines("late", 17, 19)...) // after the ends: never read
	r2 := openReader(t, connector.SourceSpec{Mem: mem, Table: tbl, BatchSize: 4})
	if err := r2.Restore(state); err != nil {
		t.Fatal(err)
	}
	again := readAll(t, r2)
	sort.Strings(rest)
	sort.Strings(again)
	if !reflect.DeepEqual(again, rest) {
		t.Errorf("after restore got %q, want %q", again, rest)
	}
	// State of another task or table is refused.
	other := openReader(t, connector.SourceSpec{Mem: mem, Table: tbl, Task: 1, Tasks: 2})
	if err := other.Restore(state); !errors.Is(err, connector.ErrInvalidState) {
		t.Errorf("restoring another task's state: %v", err)
	}
	r3 := openReader(t, connector.SourceSpec{Mem: mem, Table: tbl})
	if err := r3.Restore([]byte("{")); !errors.Is(err, connector.ErrInvalidState) {
		t.Errorf("restoring corrupt state: %v", err)
	}
}

// Partition p is task p % tasks's: the tasks read disjoint shares that make up the
// topic.
func TestSourceParallelTasksSplitPartitions(t *testing.T) {
	addr := cluster(t, 3, "in")
	var all []string
	for p := 0; p < 3; p++ {
		l := lines("p"+itoa(p)+"-", p*10, p*10+4)
		produce(t, addr, "in", int32(p), l...)
		all = append(all, l...)
	}
	tbl := kafkaTable("in", addr, map[string]string{"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
	mem := checkedMem(t)
	var union []string
	for task, want := range [][]int{{0, 2}, {1}} {
		r := openReader(t, connector.SourceSpec{Mem: mem, Table: tbl, Task: task, Tasks: 2})
		var parts []int
		for _, p := range r.parts {
			parts = append(parts, int(p.Partition))
		}
		if !reflect.DeepEqual(parts, want) {
			t.Errorf("task %d reads partitions %v, want %v", task, parts, want)
		}
		union = append(union, readAll(t, r)...)
	}
	sort.Strings(union)
	sort.Strings(all)
	if !reflect.DeepEqual(union, all) {
		t.Errorf("tasks read %q, want %q", union, all)
	}
	// A task without partitions ends at once.
	r := openReader(t, connector.SourceSpec{Mem: mem, Table: tbl, Task: 3, Tasks: 4})
	if rows := readAll(t, r); len(rows) != 0 {
		t.Errorf("task 3 of 4 read %q", rows)
	}
}

func TestSourceBadRecords(t *testing.T) {
	addr := cluster(t, 1, "in")
	produce(t, addr, "in", 0, "1,a", "x,b", "3,c")
	opts := map[string]string{"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}
	mem := checkedMem(t)
	r := openReader(t, connector.SourceSpec{Mem: mem, Table: kafkaTable("bad", addr, opts)})
	_, err := r.Next(context.Background())
	var pe *format.ParseError
	if err == nil || !errors.As(err, &pe) {
		t.Fatalf("got %v, want a parse error", err)
	}
	for _, want := range []string{"table bad", "topic in", "partition 0", "offset 1", `"x,b"`, "column id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	opts["csv.ignore-parse-errors"] = "true"
	r = openReader(t, connector.SourceSpec{Mem: mem, Table: kafkaTable("bad", addr, opts)})
	if got := readAll(t, r); !reflect.DeepEqual(got, []string{"1,a", "3,c"}) {
		t.Errorf("got %q", got)
	}
	if r.Skipped() != 1 {
		t.Errorf("skipped %d, want 1", r.Skipped())
	}
}

// Offsets reach the group only when the checkpoint that captured them completes.
func TestSourceCommitsOffsetsOnCheckpointComplete(t *testing.T) {
	addr := cluster(t, 2, "in")
	produce(t, addr, "in", 0, lines("a", 0, 6)...)
	produce(t, addr, "in", 1, lines("b", 6, 8)...)
	ctx := context.Background()
	admin := client(t, addr)
	tps := []topicPartition{{"in", 0}, {"in", 1}}
	committedNow := func() map[topicPartition]int64 {
		got, err := fetchCommitted(ctx, admin, "grp", tps)
		if err != nil {
			t.Fatal(err)
		}
		m := map[topicPartition]int64{}
		for tp, c := range got {
			m[tp] = c.Offset
		}
		return m
	}
	r := openReader(t, connector.SourceSpec{Mem: checkedMem(t), BatchSize: 3, Table: kafkaTable("in", addr, map[string]string{
		"topic": "in", "properties.group.id": "grp", "scan.startup.mode": "earliest-offset"})})
	readRows(t, r, 3)
	if _, err := r.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	want := map[topicPartition]int64{}
	for _, p := range r.parts {
		want[p.topicPartition] = p.offset
	}
	readRows(t, r, 3)
	if _, err := r.Snapshot(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := committedNow(); len(got) != 0 {
		t.Fatalf("committed before any checkpoint completed: %v", got)
	}
	if err := r.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := committedNow(); !reflect.DeepEqual(got, want) {
		t.Errorf("after checkpoint 1: committed %v, want %v", got, want)
	}
	for _, p := range r.parts {
		want[p.topicPartition] = p.offset
	}
	if err := r.CheckpointComplete(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := committedNow(); !reflect.DeepEqual(got, want) {
		t.Errorf("after checkpoint 2: committed %v, want %v", got, want)
	}
}

func TestSourceOptionErrors(t *testing.T) {
	addr := cluster(t, 1, "in")
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{}, "table in: option 'topic' is required"},
		{map[string]string{"topic": "nope", "scan.startup.mode": "earliest-offset"}, `table in: topic "nope": topic does not exist`},
		{map[string]string{"topic": "in", "scan.startup.mode": "first"}, "option 'scan.startup.mode' must be one of"},
		{map[string]string{"topic": "in", "scan.startup.mode": "group-offsets"}, "'properties.group.id' is required"},
		{map[string]string{"topic": "in", "scan.startup.mode": "timestamp"}, "'scan.startup.timestamp-millis' is required"},
		{map[string]string{"topic": "in", "scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0"}, "bad entry"},
		{map[string]string{"topic": "in", "bogus": "1"}, "unsupported option 'bogus' for connector 'kafka'"},
	} {
		_, err := Source.Open(context.Background(), connector.SourceSpec{Table: kafkaTable("in", addr, tc.opts)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestSourceLag: Lag reports, per partition, the high watermark minus where the reader
// is: what is produced and not read yet.
func TestSourceLag(t *testing.T) {
	addr := cluster(t, 2, "in")
	produce(t, addr, "in", 0, lines("a", 0, 10)...)
	r := openReader(t, connector.SourceSpec{Mem: checkedMem(t), BatchSize: 3, Table: kafkaTable("in", addr, map[string]string{
		"topic": "in", "scan.startup.mode": "earliest-offset"})})
	if lag := r.Lag(); len(lag) != 0 {
		t.Errorf("lag before the first read: %v", lag)
	}
	lagOf := func(partition int32) int64 {
		for _, p := range r.Lag() {
			if p.Topic == "in" && p.Partition == partition {
				return p.Lag
			}
		}
		t.Fatalf("no lag for partition %d: %v", partition, r.Lag())
		return 0
	}
	readRows(t, r, 3)
	if got := lagOf(0); got != 7 {
		t.Errorf("after 3 of 10 records, lag %v", r.Lag())
	}
	readRows(t, r, 7)
	if got := lagOf(0); got != 0 {
		t.Errorf("after every record, lag %v", r.Lag())
	}
	if got := lagOf(1); got != 0 {
		t.Errorf("an empty partition lags %d", got)
	}
}
