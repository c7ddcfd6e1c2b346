package kafka

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/twmb/franz-go/pkg/kgo"
)

// batch builds rows (id, name) from ids.
func batch(t testing.TB, mem memory.Allocator, ids ...int) exec.Batch {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("[")
	for i, id := range ids {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"id":` + itoa(id) + `,"name":"n` + itoa(id) + `"}`)
	}
	sb.WriteString("]")
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	return exec.Batch{Rec: rec}
}

func rowsOf(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, itoa(i)+",n"+itoa(i))
	}
	return out
}

func openSinkT(t testing.TB, spec connector.SinkSpec) *KafkaSink {
	t.Helper()
	s, err := Sink.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*KafkaSink)
}

func write(t testing.TB, s *KafkaSink, mem memory.Allocator, ids ...int) {
	t.Helper()
	b := batch(t, mem, ids...)
	defer b.Release()
	if err := s.Process(context.Background(), 0, b); err != nil {
		t.Fatal(err)
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func sorted(v []string) []string {
	v = append([]string(nil), v...)
	sort.Strings(v)
	return v
}

func TestSinkAtLeastOnce(t *testing.T) {
	addr := cluster(t, 3, "out")
	mem := checkedMem(t)
	tbl := kafkaTable("out", addr, map[string]string{"topic": "out", "key.format": "json", "key.fields": "id",
		"value.fields-include": "EXCEPT_KEY", "format": "json"})
	s := openSinkT(t, connector.SinkSpec{Table: tbl, Mem: mem, Checkpointed: true})
	write(t, s, mem, seq(0, 50)...)
	state, err := s.Snapshot(context.Background(), 1) // waits for the acknowledgements
	if err != nil || state != nil {
		t.Fatalf("snapshot: %q, %v", state, err)
	}
	got := consume(t, addr, "out", false)
	if len(got) != 50 {
		t.Fatalf("%d records after the barrier, want 50", len(got))
	}
	parts := map[int32]bool{}
	for _, r := range got {
		parts[r.Partition] = true
		if !strings.HasPrefix(r.Key, `{"id":`) || !strings.HasPrefix(r.Value, `{"name":"n`) {
			t.Fatalf("record key %q value %q", r.Key, r.Value)
		}
	}
	if len(parts) < 2 {
		t.Errorf("keyed records went to partitions %v only", parts)
	}
	write(t, s, mem, seq(50, 60)...)
	if err := s.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(consume(t, addr, "out", false)); n != 60 {
		t.Errorf("%d records after Finish, want 60", n)
	}
}

func TestSinkPartitioners(t *testing.T) {
	addr := cluster(t, 3, "fixed", "rr")
	mem := checkedMem(t)
	s := openSinkT(t, connector.SinkSpec{Table: kafkaTable("f", addr, map[string]string{"topic": "fixed", "sink.partitioner": "fixed"}), Mem: mem, Task: 4, Tasks: 5})
	write(t, s, mem, seq(0, 10)...)
	if err := s.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range consume(t, addr, "fixed", false) {
		if r.Partition != 1 { // task 4 % 3 partitions
			t.Fatalf("fixed: task 4 wrote to partition %d", r.Partition)
		}
	}
	s = openSinkT(t, connector.SinkSpec{Table: kafkaTable("r", addr, map[string]string{"topic": "rr", "sink.partitioner": "round-robin"}), Mem: mem})
	for i := 0; i < 9; i++ {
		write(t, s, mem, i)
	}
	if err := s.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	count := map[int32]int{}
	for _, r := range consume(t, addr, "rr", false) {
		count[r.Partition]++
	}
	if len(count) != 3 {
		t.Errorf("round-robin: records per partition %v", count)
	}
}

func TestSinkRejectsUpdatesAndBadOptions(t *testing.T) {
	addr := cluster(t, 1, "out")
	mem := checkedMem(t)
	s := openSinkT(t, connector.SinkSpec{Table: kafkaTable("out", addr, map[string]string{"topic": "out"}), Mem: mem})
	b := batch(t, mem, 1, 2)
	b.Kinds = []exec.RowKind{exec.Insert, exec.UpdateAfter}
	err := s.Process(context.Background(), 0, b)
	b.Release()
	if !errors.Is(err, connector.ErrNotAppendOnly) || !strings.Contains(err.Error(), "table out") {
		t.Errorf("an update: %v", err)
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"topic": "out", "sink.delivery-guarantee": "exactly-once"}, "'sink.transactional-id-prefix' is required"},
		{map[string]string{"topic": "out", "sink.delivery-guarantee": "maybe"}, "must be one of 'none', 'at-least-once', 'exactly-once'"},
		{map[string]string{"topic": "out", "key.fields": "id"}, "'key.fields' needs 'key.format'"},
		{map[string]string{"topic": "out", "key.format": "csv", "key.fields": "nope"}, `no column "nope"`},
		{map[string]string{"topic": "missing"}, `table out: topic "missing": topic does not exist`},
		{map[string]string{"topic": "a;b"}, "must name one topic"},
	} {
		_, err := Sink.Open(context.Background(), connector.SinkSpec{Table: kafkaTable("out", addr, tc.opts), Checkpointed: true, StateDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
	if d := Sink.Delivery(kafkaTable("out", addr, map[string]string{"sink.delivery-guarantee": "exactly-once"})); d != connector.Commits {
		t.Errorf("exactly-once delivery is %v", d)
	}
	if d := Sink.Delivery(kafkaTable("out", addr, nil)); d != connector.Appends {
		t.Errorf("at-least-once delivery is %v", d)
	}
}

func exactlyOnceSpec(addr, dir string, mem memory.Allocator) connector.SinkSpec {
	return connector.SinkSpec{
		Table: kafkaTable("out", addr, map[string]string{"topic": "out", "sink.delivery-guarantee": "exactly-once",
			"sink.transactional-id-prefix": "job"}),
		Mem: mem, ID: "job-1-out-0", Checkpointed: true, StateDir: dir,
	}
}

// Rows of a checkpoint become visible to read_committed readers when it completes,
// not before.
func TestSinkExactlyOnceVisibleOnCheckpointComplete(t *testing.T) {
	addr := cluster(t, 2, "out")
	mem := checkedMem(t)
	dir := t.TempDir()
	ctx := context.Background()
	s := openSinkT(t, exactlyOnceSpec(addr, dir, mem))
	write(t, s, mem, seq(0, 10)...)
	if _, err := s.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	write(t, s, mem, seq(10, 15)...)
	if _, err := s.Snapshot(ctx, 2); err != nil {
		t.Fatal(err)
	}
	write(t, s, mem, seq(15, 20)...)
	if got := consume(t, addr, "out", true); len(got) != 0 {
		t.Fatalf("visible before any checkpoint completed: %q", values(got))
	}
	if err := s.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := values(consume(t, addr, "out", true)); !reflect.DeepEqual(sorted(got), sorted(rowsOf(0, 10))) {
		t.Fatalf("after checkpoint 1: %q", got)
	}
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(ctx, 3); err != nil { // the final checkpoint
		t.Fatal(err)
	}
	if err := s.CheckpointComplete(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if got := values(consume(t, addr, "out", true)); !reflect.DeepEqual(sorted(got), sorted(rowsOf(0, 20))) {
		t.Fatalf("after checkpoint 3: %q", got)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("spool files left after every commit: %v", files)
	}
}

// A sink restored after a crash commits the pending checkpoint once, however often it
// is restored, and fences the crashed sink's open transaction.
func TestSinkExactlyOnceRestoreCommitsOnce(t *testing.T) {
	addr := cluster(t, 2, "out")
	mem := checkedMem(t)
	dir := t.TempDir()
	ctx := context.Background()
	spec := exactlyOnceSpec(addr, dir, mem)

	a := openSinkT(t, spec)
	write(t, a, mem, seq(0, 10)...)
	state, err := a.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	write(t, a, mem, seq(100, 105)...) // after the barrier: a failed attempt's rows
	if err := a.txn.flush(); err != nil {
		t.Fatal(err)
	}
	// The crash: checkpoint 1 completed but its notice was lost, and a transaction of
	// the same id was left open with rows in it.
	zombie := client(t, addr, kgo.TransactionalID("job-0"))
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, &kgo.Record{Topic: "out", Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	a.txn.close()

	for i := 0; i < 2; i++ { // restored twice: the second finds the marker
		b := openSinkT(t, spec)
		if err := b.Restore(state); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if files, _ := filepath.Glob(filepath.Join(dir, "*.open")); len(files) != 0 {
				t.Errorf("restore left the failed attempt's open spool: %v", files)
			}
		}
		if err := b.Finish(ctx); err != nil { // the first call with a context commits
			t.Fatal(err)
		}
		if got := values(consume(t, addr, "out", true)); !reflect.DeepEqual(sorted(got), sorted(rowsOf(0, 10))) {
			t.Fatalf("restore %d: read_committed sees %q", i+1, got)
		}
		b.Close()
		if i == 0 { // a crash after the commit, before the spool was deleted
			if err := os.WriteFile(b.txn.epochPath(1), []byte{0, 3, 'd', 'u', 'p'}, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("spool files left: %v", files)
	}
}

// A restored run's marker is told from an earlier run's, whose checkpoint ids were
// higher: a fresh run of the same job still commits its checkpoints.
func TestSinkExactlyOnceNewRunIgnoresOldMarker(t *testing.T) {
	addr := cluster(t, 1, "out")
	mem := checkedMem(t)
	dir := t.TempDir()
	ctx := context.Background()
	spec := exactlyOnceSpec(addr, dir, mem)
	old := openSinkT(t, spec)
	write(t, old, mem, 1)
	for id := int64(1); id <= 5; id++ {
		if _, err := old.Snapshot(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.CheckpointComplete(ctx, 5); err != nil { // marker 5 of the old run
		t.Fatal(err)
	}
	old.Close()
	fresh := openSinkT(t, spec)
	write(t, fresh, mem, 2)
	state, err := fresh.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	fresh.txn.close() // crash before checkpoint 1's notice
	restored := openSinkT(t, spec)
	if err := restored.Restore(state); err != nil {
		t.Fatal(err)
	}
	if err := restored.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := values(consume(t, addr, "out", true)); !reflect.DeepEqual(got, []string{"1,n1", "2,n2"}) {
		t.Errorf("read_committed sees %q", got)
	}
}

// A fresh sink removes every spool file of its task; a restored one those its state
// does not name.
func TestSinkSpoolLeftovers(t *testing.T) {
	addr := cluster(t, 1, "out")
	mem := checkedMem(t)
	dir := t.TempDir()
	ctx := context.Background()
	spec := exactlyOnceSpec(addr, dir, mem)
	a := openSinkT(t, spec)
	write(t, a, mem, 1)
	state, err := a.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	write(t, a, mem, 2)
	if _, err := a.Snapshot(ctx, 2); err != nil { // a checkpoint that never completes
		t.Fatal(err)
	}
	write(t, a, mem, 3)
	a.txn.flush()
	a.txn.close()
	other := filepath.Join(dir, "kafka-job-9-out-0.0123456789abcdef.1.spool") // another sink's
	stale := filepath.Join(dir, "kafka-job-1-out-0.0123456789abcdef.7.spool") // another run's
	for _, f := range []string{other, stale} {
		os.WriteFile(f, nil, 0o644)
	}
	b := openSinkT(t, spec)
	if err := b.Restore(state); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	want := []string{b.txn.epochPath(1), other}
	sort.Strings(want)
	if !reflect.DeepEqual(files, want) {
		t.Errorf("after restore: %v, want %v", files, want)
	}
	if err := b.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := values(consume(t, addr, "out", true)); !reflect.DeepEqual(got, []string{"1,n1"}) {
		t.Errorf("read_committed sees %q", got)
	}
	b.Close()
	os.WriteFile(stale, nil, 0o644)
	c := openSinkT(t, spec) // fresh: removes its task's files at the first call
	if _, err := c.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); !reflect.DeepEqual(files, []string{other}) {
		t.Errorf("after a fresh start: %v", files)
	}
}

// Without checkpoints an exactly-once sink is at-least-once: Finish makes its rows
// visible.
func TestSinkExactlyOnceWithoutCheckpoints(t *testing.T) {
	addr := cluster(t, 1, "out")
	mem := checkedMem(t)
	spec := exactlyOnceSpec(addr, "", mem)
	spec.Checkpointed = false
	s := openSinkT(t, spec)
	write(t, s, mem, 1, 2)
	if err := s.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := values(consume(t, addr, "out", true)); len(got) != 2 {
		t.Errorf("read_committed sees %q", got)
	}
}

// TestSinkExactlyOnceDamagedSpool: a byte of a pre-committed epoch's spool flipped
// before its commit, wherever it is, is found by the record checksums: the commit fails
// naming the spool, and readers see nothing of it.
func TestSinkExactlyOnceDamagedSpool(t *testing.T) {
	addr := cluster(t, 1, "out")
	mem := checkedMem(t)
	ctx := context.Background()
	for offset := 0; ; offset += 7 {
		dir := t.TempDir()
		spec := exactlyOnceSpec(addr, dir, mem)
		a := openSinkT(t, spec)
		write(t, a, mem, seq(0, 10)...)
		state, err := a.Snapshot(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		a.txn.close()
		data, err := os.ReadFile(a.txn.epochPath(1))
		if err != nil {
			t.Fatal(err)
		}
		if offset >= len(data) {
			break
		}
		data[offset] ^= 0x01 // at 0 and 70 a key length: a record without a key would get an empty one
		os.WriteFile(a.txn.epochPath(1), data, 0o600)
		b := openSinkT(t, spec)
		if err := b.Restore(state); err != nil {
			t.Fatal(err)
		}
		if err := b.Finish(ctx); !errors.Is(err, connector.ErrDamaged) || !strings.Contains(err.Error(), "is corrupt") {
			t.Fatalf("byte %d flipped: the commit of the restored epoch: %v", offset, err)
		}
		b.Close()
	}
	if got := values(consume(t, addr, "out", true)); len(got) != 0 {
		t.Errorf("read_committed sees %q", got)
	}
}

// TestSinkExactlyOnceSpoolCutAtRecordEnd: a spool file cut short at the end of a record
// has no record damaged, but is not the whole epoch: the state's size of it tells, and
// the commit fails naming the spool instead of producing the rows before the cut.
func TestSinkExactlyOnceSpoolCutAtRecordEnd(t *testing.T) {
	addr := cluster(t, 1, "out")
	mem := checkedMem(t)
	ctx := context.Background()
	dir := t.TempDir()
	spec := exactlyOnceSpec(addr, dir, mem)
	a := openSinkT(t, spec)
	write(t, a, mem, seq(0, 10)...)
	state, err := a.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.txn.close()
	data, err := os.ReadFile(a.txn.epochPath(1))
	if err != nil {
		t.Fatal(err)
	}
	// The end of the ninth record: key length + 1, key, value length, value, checksum.
	end := 0
	for range 9 {
		klen, n := binary.Uvarint(data[end:])
		end += n
		if klen > 0 {
			end += int(klen - 1)
		}
		vlen, n := binary.Uvarint(data[end:])
		end += n + int(vlen) + 4
	}
	if err := os.WriteFile(a.txn.epochPath(1), data[:end], 0o600); err != nil {
		t.Fatal(err)
	}
	b := openSinkT(t, spec)
	if err := b.Restore(state); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(ctx); !errors.Is(err, connector.ErrDamaged) || !strings.Contains(err.Error(), "is corrupt") {
		t.Fatalf("the commit of an epoch cut after 9 of its 10 records: %v", err)
	}
	b.Close()
	if got := values(consume(t, addr, "out", true)); len(got) != 0 {
		t.Errorf("read_committed sees %q", got)
	}
}

// TestSinkRestoresStateWithoutSizes: a state written before spool sizes were recorded
// still restores and commits its epochs (read without the size check); a state whose
// sizes name no pending epoch is refused as corrupt.
func TestSinkRestoresStateWithoutSizes(t *testing.T) {
	addr := cluster(t, 1, "out")
	mem := checkedMem(t)
	ctx := context.Background()
	spec := exactlyOnceSpec(addr, t.TempDir(), mem)
	a := openSinkT(t, spec)
	write(t, a, mem, seq(0, 3)...)
	state, err := a.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.txn.close()
	var st map[string]any
	if err := json.Unmarshal(state, &st); err != nil || st["sizes"] == nil {
		t.Fatalf("state %s: %v", state, err)
	}
	st["sizes"] = map[string]int{"7": 10}
	bad, _ := json.Marshal(st)
	if err := openSinkT(t, spec).Restore(bad); err == nil || !strings.Contains(err.Error(), "corrupt state") {
		t.Errorf("sizes of no pending epoch: %v", err)
	}
	delete(st, "sizes")
	old, _ := json.Marshal(st)
	b := openSinkT(t, spec)
	if err := b.Restore(old); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if got := values(consume(t, addr, "out", true)); len(got) != 3 {
		t.Errorf("read_committed sees %q", got)
	}
}
