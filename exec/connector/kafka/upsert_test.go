package kafka

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kv is a keyed record; tomb makes it a tombstone (a null value).
type kv struct {
	key, value string
	tomb       bool
}

func produceKV(t testing.TB, addr, topic string, partition int32, recs ...kv) {
	t.Helper()
	cl := client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	out := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		out[i] = &kgo.Record{Topic: topic, Partition: partition, Key: []byte(r.key)}
		if !r.tomb {
			out[i].Value = []byte(r.value)
		}
	}
	if err := cl.ProduceSync(context.Background(), out...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// upsertTable is a table of the upsert-kafka connector keyed by id.
func upsertKafkaTable(name, addr, topic string, opts map[string]string) *planner.Table {
	t := &planner.Table{Name: name, PrimaryKey: []string{"id"}, Options: map[string]string{
		"connector": "upsert-kafka", "topic": topic, "properties.bootstrap.servers": addr,
		"key.format": "json", "value.format": "json", "scan.bounded.mode": "latest-offset"}}
	for k, v := range opts {
		if v == "" {
			delete(t.Options, k)
		} else {
			t.Options[k] = v
		}
	}
	id := planner.TypeBigInt
	id.NotNull = true
	t.Columns = []planner.TableColumn{{Name: "id", Type: id},
		{Name: "name", Type: planner.TypeString}, {Name: "n", Type: planner.TypeInt}}
	return t
}

func openUpsert(t testing.TB, spec connector.SourceSpec) *Reader {
	t.Helper()
	r, err := UpsertSource.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.(*Reader)
}

// readChanges reads to io.EOF, or until n rows when n >= 0, in Flink's print form.
func readChanges(t testing.TB, r exec.Reader, n int) string {
	t.Helper()
	enc := format.NewChangelogEncoder("", time.UTC)
	var out []byte
	rows := 0
	deadline := time.Now().Add(10 * time.Second)
	for n < 0 || rows < n {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %d rows:\n%s", rows, out)
		}
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Rec != nil {
			if b.Kinds != nil && len(b.Kinds) != b.Len() {
				t.Fatalf("%d kinds for %d rows", len(b.Kinds), b.Len())
			}
			out = format.AppendRows(out, enc, b)
			rows += b.Len()
			b.Release()
		}
	}
	return string(out)
}

// The source normalizes upserts into a changelog: +I for a new key, -U/+U for a new
// value of a known key, nothing for the same value again, -D (with the old row) for a
// tombstone, nothing for a tombstone of an unknown key.
func TestUpsertSourceNormalizes(t *testing.T) {
	addr := cluster(t, 1, "users")
	produceKV(t, addr, "users", 0,
		kv{key: `{"id":1}`, value: `{"id":1,"name":"ann","n":1}`},
		kv{key: `{"id":2}`, value: `{"id":2,"name":"bob","n":1}`},
		kv{key: `{"id":1}`, value: `{"id":1,"name":"ann","n":2}`},
		kv{key: `{"id":1}`, value: `{"id":1,"name":"ann","n":2}`},
		kv{key: `{"id":3}`, tomb: true},
		kv{key: `{"id":2}`, tomb: true},
		kv{key: `{"id":2}`, value: `{"id":2,"name":"bob","n":5}`},
	)
	mem := checkedMem(t)
	r := openUpsert(t, connector.SourceSpec{Mem: mem, Table: upsertKafkaTable("users", addr, "users", nil), BatchSize: 3})
	checkChanges(t, readChanges(t, r, -1), `+I[1, ann, 1]
+I[2, bob, 1]
-U[1, ann, 1]
+U[1, ann, 2]
-D[2, bob, 1]
+I[2, bob, 5]
`)
}

func checkChanges(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// With 'value.fields-include' = 'EXCEPT_KEY' the key's columns come from the record
// key (its fields named without 'key.fields-prefix'), the others from the value.
func TestUpsertSourceExceptKey(t *testing.T) {
	addr := cluster(t, 1, "users")
	produceKV(t, addr, "users", 0,
		kv{key: `1`, value: `{"name":"ann","n":1}`},
		kv{key: `1`, value: `{"name":"ann","n":2}`},
		kv{key: `x`, value: `{"name":"bad key","n":0}`}, // skipped with the key's ignore-parse-errors
		kv{key: `1`, tomb: true},
	)
	mem := checkedMem(t)
	tbl := upsertKafkaTable("users", addr, "users", map[string]string{
		"key.format": "csv", "value.fields-include": "EXCEPT_KEY", "key.fields-prefix": "k_",
		"key.csv.ignore-parse-errors": "true"})
	tbl.Columns[0].Name, tbl.PrimaryKey = "k_id", []string{"k_id"}
	r := openUpsert(t, connector.SourceSpec{Mem: mem, Table: tbl})
	checkChanges(t, readChanges(t, r, -1), `+I[1, ann, 1]
-U[1, ann, 1]
+U[1, ann, 2]
-D[1, ann, 2]
`)
	if r.Skipped() != 1 {
		t.Errorf("skipped %d records, want 1", r.Skipped())
	}
}

// The last value of each key is in the snapshot: a reader restored from it retracts
// the right rows for updates and tombstones of keys read before the checkpoint.
func TestUpsertSourceSnapshotRestore(t *testing.T) {
	addr := cluster(t, 2, "users")
	produceKV(t, addr, "users", 0,
		kv{key: `{"id":1}`, value: `{"id":1,"name":"ann","n":1}`},
		kv{key: `{"id":3}`, value: `{"id":3,"name":"cy","n":1}`})
	produceKV(t, addr, "users", 1, kv{key: `{"id":2}`, value: `{"id":2,"name":"bob","n":1}`})
	mem := checkedMem(t)
	tbl := upsertKafkaTable("users", addr, "users", map[string]string{"scan.bounded.mode": "unbounded"})
	spec := connector.SourceSpec{Mem: mem, Table: tbl}
	r := openUpsert(t, spec)
	if got := readChanges(t, r, 3); strings.Count(got, "+I[") != 3 {
		t.Fatalf("first read: %s", got)
	}
	state, err := r.Snapshot(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	produceKV(t, addr, "users", 0,
		kv{key: `{"id":1}`, value: `{"id":1,"name":"ann","n":7}`},
		kv{key: `{"id":3}`, tomb: true})
	produceKV(t, addr, "users", 1, kv{key: `{"id":2}`, tomb: true})
	r2 := openUpsert(t, spec)
	if err := r2.Restore(state); err != nil {
		t.Fatal(err)
	}
	got := readChanges(t, r2, 4)
	for _, want := range []string{"-U[1, ann, 1]\n+U[1, ann, 7]\n", "-D[3, cy, 1]\n", "-D[2, bob, 1]\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("after restore got:\n%s\nwant it to hold:\n%s", got, want)
		}
	}
	// Rescaled to one task, the state of both partitions goes with them.
	one, err := rescaleSource(tbl, [][]byte{state}, 1)
	if err != nil || len(one) != 1 || !strings.Contains(string(one[0]), `"upserts"`) {
		t.Fatalf("rescale: %v %s", err, one)
	}
}

// A malformed value fails the job naming the record; with the value format's
// ignore-parse-errors it is skipped and the key keeps its value.
func TestUpsertSourceBadValue(t *testing.T) {
	addr := cluster(t, 1, "users")
	produceKV(t, addr, "users", 0,
		kv{key: `{"id":1}`, value: `{"id":1,"name":"ann","n":1}`},
		kv{key: `{"id":1}`, value: `{"id":1,"name":"ann","n":"many"}`},
		kv{key: `{"id":1}`, tomb: true})
	mem := checkedMem(t)
	r := openUpsert(t, connector.SourceSpec{Mem: mem, Table: upsertKafkaTable("users", addr, "users", nil)})
	_, err := r.Next(context.Background())
	for err == nil {
		_, err = r.Next(context.Background())
	}
	if want := `table users: topic users, partition 0, offset 1: cannot parse "many" as INT for column n: "{\"id\":1,\"name\":\"ann\",\"n\":\"many\"}"`; err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	r2 := openUpsert(t, connector.SourceSpec{Mem: mem, Table: upsertKafkaTable("users", addr, "users",
		map[string]string{"value.json.ignore-parse-errors": "true"})})
	// The bad update leaves ann at n = 1 (retracted and restored), and the tombstone
	// deletes that row.
	checkChanges(t, readChanges(t, r2, -1), `+I[1, ann, 1]
-U[1, ann, 1]
+U[1, ann, 1]
-D[1, ann, 1]
`)
}

func TestUpsertOptionErrors(t *testing.T) {
	addr := "127.0.0.1:1"
	cases := []struct {
		opts map[string]string
		pk   []string
		want string
	}{
		{nil, []string{}, "table users: the upsert-kafka connector needs a PRIMARY KEY (the record key's columns)"},
		{map[string]string{"key.format": ""}, nil, "table users: option 'key.format' is required"},
		{map[string]string{"value.format": "debezium-json"}, nil, "table users: option 'value.format': the upsert-kafka connector needs a format of inserts, not the changelog format debezium-json"},
		{map[string]string{"key.fields-prefix": "k_"}, nil, "table users: option 'key.fields-prefix' needs 'value.fields-include' = 'EXCEPT_KEY'"},
		{map[string]string{"value.json.fail-on-missing-fields": "true"}, nil, "table users: unsupported option 'value.json.fail-on-missing-fields' for connector 'upsert-kafka'"},
		{map[string]string{"scan.startup.mode": "latest-offset"}, nil, "table users: unsupported option 'scan.startup.mode' for connector 'upsert-kafka'"},
	}
	for _, c := range cases {
		tbl := upsertKafkaTable("users", addr, "users", c.opts)
		if c.pk != nil {
			tbl.PrimaryKey = c.pk
		}
		_, err := UpsertSource.Open(context.Background(), connector.SourceSpec{Mem: memory.NewGoAllocator(), Table: tbl})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !errors.Is(err, connector.ErrInvalidOption) {
			t.Errorf("%v: got %v\nwant %s", c.opts, err, c.want)
		}
	}
	tbl := upsertKafkaTable("users", addr, "users", map[string]string{"sink.delivery-guarantee": "exactly-once"})
	if _, err := UpsertSink.Open(context.Background(), connector.SinkSpec{Table: tbl}); err == nil || !strings.Contains(err.Error(), "does not take 'sink.delivery-guarantee' = 'exactly-once'") {
		t.Errorf("exactly-once sink: %v", err)
	}
}

// The sink writes +I and +U as records of the key and the row, -D as a tombstone, and
// drops -U; read back by the source, the topic gives the final rows.
func TestUpsertSinkWritesUpsertsAndTombstones(t *testing.T) {
	addr := cluster(t, 3, "users")
	mem := checkedMem(t)
	tbl := upsertKafkaTable("users", addr, "users", nil)
	s, err := UpsertSink.Open(context.Background(), connector.SinkSpec{Mem: mem, Table: tbl})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, _, err := array.RecordFromJSON(mem, exec.ArrowSchema(tbl.PhysicalSchema()), strings.NewReader(`[
		{"id": 1, "name": "ann", "n": 1},
		{"id": 2, "name": "bob", "n": 1},
		{"id": 1, "name": "ann", "n": 1},
		{"id": 1, "name": "ann", "n": 2},
		{"id": 2, "name": "bob", "n": 1},
		{"id": 3, "name": "cy", "n": 1}]`))
	if err != nil {
		t.Fatal(err)
	}
	b := exec.Batch{Rec: rec, Kinds: []exec.RowKind{exec.Insert, exec.Insert, exec.UpdateBefore, exec.UpdateAfter, exec.Delete, exec.Insert}}
	if err := s.Process(context.Background(), 0, b); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := s.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := consume(t, addr, "users", false)
	if len(got) != 5 {
		t.Fatalf("got %d records, want 5: %v", len(got), got)
	}
	byKey := map[string][]string{}
	parts := map[string]int32{}
	for _, c := range got {
		byKey[c.Key] = append(byKey[c.Key], c.Value)
		if p, ok := parts[c.Key]; ok && p != c.Partition {
			t.Errorf("key %s in partitions %d and %d", c.Key, p, c.Partition)
		}
		parts[c.Key] = c.Partition
	}
	want := map[string][]string{
		`{"id":1}`: {`{"id":1,"name":"ann","n":1}`, `{"id":1,"name":"ann","n":2}`},
		`{"id":2}`: {`{"id":2,"name":"bob","n":1}`, ``},
		`{"id":3}`: {`{"id":3,"name":"cy","n":1}`},
	}
	for k, v := range want {
		if strings.Join(byKey[k], "|") != strings.Join(v, "|") {
			t.Errorf("key %s: got %q, want %q", k, byKey[k], v)
		}
	}
	// The source reads the tombstone as a delete.
	var all string
	for task := range 3 {
		r := openUpsert(t, connector.SourceSpec{Mem: mem, Table: tbl, Task: task, Tasks: 3})
		all += readChanges(t, r, -1)
	}
	if !strings.Contains(all, "-D[2, bob, 1]") || !strings.Contains(all, "+U[1, ann, 2]") || strings.Count(all, "\n") != 6 {
		t.Errorf("read back:\n%s", all)
	}
}

// upsertMetaTable is upsertKafkaTable with metadata columns: the record's timestamp
// and headers (written by the sink), and its offset and timestamp type (read only).
func upsertMetaTable(addr, topic string, opts map[string]string) *planner.Table {
	t := upsertKafkaTable("users", addr, topic, opts)
	t.Columns = append(t.Columns,
		planner.TableColumn{Name: "ts", Type: planner.TypeTSLTZ, Metadata: "timestamp"},
		planner.TableColumn{Name: "hs", Type: planner.MapType(planner.TypeString, planner.Type{Kind: planner.Binary}), Metadata: "headers"},
		planner.TableColumn{Name: "off", Type: planner.TypeBigInt, Metadata: "offset", Virtual: true},
		planner.TableColumn{Name: "tstype", Type: planner.TypeString, Metadata: "timestamp-type", Virtual: true},
	)
	return t
}

// The upsert-kafka sink writes the timestamp and headers columns as the records'
// (a tombstone's too); the source reads each change with the metadata of the record
// that holds the key's value: +I and +U the new record's, -U and -D the old one's,
// also after a restore from a checkpoint taken between them.
func TestUpsertMetadata(t *testing.T) {
	addr := cluster(t, 1, "users")
	mem := checkedMem(t)
	tbl := upsertMetaTable(addr, "users", nil)
	s, err := UpsertSink.Open(context.Background(), connector.SinkSpec{Mem: mem, Table: tbl, Schema: tbl.PersistedSchema()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(kinds []exec.RowKind, rows string) {
		t.Helper()
		rec, _, err := array.RecordFromJSON(mem, exec.ArrowSchema(tbl.PersistedSchema()), strings.NewReader(rows))
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		if err := s.Process(context.Background(), 0, exec.Batch{Rec: rec, Kinds: kinds}); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	write([]exec.RowKind{exec.Insert}, `[{"id": 1, "name": "ann", "n": 1, "ts": 1000, "hs": [{"key": "v", "value": "MQ=="}]}]`)
	src := upsertMetaTable(addr, "users", map[string]string{"scan.bounded.mode": "unbounded"})
	spec := connector.SourceSpec{Mem: mem, Table: src}
	r := openUpsert(t, spec)
	checkChanges(t, readChanges(t, r, 1), "+I[1, ann, 1, 1970-01-01 00:00:01.000, {v=x'31'}, 0, CreateTime]\n")
	state, err := r.Snapshot(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	write([]exec.RowKind{exec.UpdateBefore, exec.UpdateAfter, exec.Delete}, `[
		{"id": 1, "name": "ann", "n": 1, "ts": 1000, "hs": []},
		{"id": 1, "name": "ann", "n": 2, "ts": 2000, "hs": [{"key": "v", "value": "Mg=="}]},
		{"id": 1, "name": "ann", "n": 2, "ts": 3000, "hs": [{"key": "v", "value": "Mw=="}]}]`)
	for i, h := range consume(t, addr, "users", false) {
		if len(h.Headers) != 1 || string(h.Headers[0].Value) != strconv.Itoa(i+1) || h.Timestamp.UnixMilli() != int64(1000*(i+1)) {
			t.Errorf("record %d: timestamp %v, headers %v", i, h.Timestamp.UnixMilli(), h.Headers)
		}
	}
	r2 := openUpsert(t, spec)
	if err := r2.Restore(state); err != nil {
		t.Fatal(err)
	}
	checkChanges(t, readChanges(t, r2, 3), `-U[1, ann, 1, 1970-01-01 00:00:01.000, {v=x'31'}, 0, CreateTime]
+U[1, ann, 2, 1970-01-01 00:00:02.000, {v=x'32'}, 1, CreateTime]
-D[1, ann, 2, 1970-01-01 00:00:02.000, {v=x'32'}, 1, CreateTime]
`)
}
