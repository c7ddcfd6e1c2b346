package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// metaTable is a Kafka table with every metadata key: timestamp and headers written,
// the others virtual.
func metaTable(addr string) *planner.Table {
	t := kafkaTable("meta", addr, map[string]string{"topic": "meta"})
	headers := planner.MapType(planner.TypeString, planner.Type{Kind: planner.Binary})
	t.Columns = append(t.Columns,
		planner.TableColumn{Name: "ts", Type: planner.TypeTSLTZ, Metadata: "timestamp"},
		planner.TableColumn{Name: "headers", Type: headers, Metadata: "headers"},
		planner.TableColumn{Name: "part", Type: planner.TypeInt, Metadata: "partition", Virtual: true},
		planner.TableColumn{Name: "off", Type: planner.TypeBigInt, Metadata: "offset", Virtual: true},
		planner.TableColumn{Name: "topic", Type: planner.TypeString, Metadata: "topic", Virtual: true},
		planner.TableColumn{Name: "tstype", Type: planner.TypeString, Metadata: "timestamp-type", Virtual: true},
		planner.TableColumn{Name: "epoch", Type: planner.TypeInt, Metadata: "leader-epoch", Virtual: true},
	)
	return t
}

// TestMetadataWrittenAndRead: the sink writes the 'timestamp' and 'headers' columns as
// the records' timestamp and headers, and the formats' value without them; the source
// reads every key back beside the physical columns.
func TestMetadataWrittenAndRead(t *testing.T) {
	mem := checkedMem(t)
	addr := cluster(t, 1, "meta")
	tbl := metaTable(addr)
	schema := tbl.PersistedSchema()
	rec := metaRows(mem, schema)
	defer rec.Release()

	s, err := Sink.Open(context.Background(), connector.SinkSpec{Mem: mem, Table: tbl, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Process(context.Background(), 0, exec.Batch{Rec: rec}); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()

	if got := metaRecords(t, addr); got != metaWant {
		t.Errorf("records\n%s\nwant\n%s", got, metaWant)
	}

	// The source reads them back with every metadata column.
	src := *tbl
	src.Options = map[string]string{"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}
	for k, v := range tbl.Options {
		src.Options[k] = v
	}
	r := openReader(t, connector.SourceSpec{Mem: mem, Table: &src})
	rows := readAll(t, r)
	wantRows := []string{
		`1,a,2024-05-06 07:08:09.000,"{k1=x'7631', k2=NULL}",0,0,meta,CreateTime,0`,
		"2,b,2024-05-06 07:08:10.000,{},0,1,meta,CreateTime,0",
	}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("read back\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}
}

// metaRows are two rows of metaTable's persisted schema with timestamps and headers.
func metaRows(mem memory.Allocator, schema planner.Schema) arrow.Record {
	b := array.NewRecordBuilder(mem, exec.ArrowSchema(schema))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "b"}, nil)
	ts := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	b.Field(2).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{arrow.Timestamp(ts.UnixMilli()), arrow.Timestamp(ts.Add(time.Second).UnixMilli())}, nil)
	hb := b.Field(3).(*array.MapBuilder)
	hb.Append(true)
	hb.KeyBuilder().(*array.StringBuilder).AppendValues([]string{"k1", "k2"}, nil)
	hb.ItemBuilder().(*array.BinaryBuilder).AppendValues([][]byte{[]byte("v1"), nil}, []bool{true, false})
	hb.Append(true) // no headers
	return b.NewRecord()
}

// metaWant is how a Kafka client sees the records of metaRows: value, timestamp and
// headers (a header without value shows as k2=).
const metaWant = "1,a 2024-05-06T07:08:09Z [k1=v1 k2=]|2,b 2024-05-06T07:08:10Z []"

// metaRecords reads the records of topic meta as a read_committed Kafka client sees
// them, one "value timestamp [headers]" each, joined by "|".
func metaRecords(t *testing.T, addr string) string {
	t.Helper()
	var got []string
	for _, r := range consume(t, addr, "meta", true) {
		var hs []string
		for _, h := range r.Headers {
			hs = append(hs, h.Key+"="+string(h.Value))
		}
		got = append(got, r.Value+" "+r.Timestamp.UTC().Format(time.RFC3339)+" ["+strings.Join(hs, " ")+"]")
	}
	return strings.Join(got, "|")
}

// TestMetadataExactlyOnce: the exactly-once sink spools the records' timestamps and
// headers with their values, and a sink restored from the checkpoint (whose commit
// notice was lost) produces them in its transaction.
func TestMetadataExactlyOnce(t *testing.T) {
	mem := checkedMem(t)
	addr := cluster(t, 1, "meta")
	tbl := metaTable(addr)
	tbl.Options["sink.delivery-guarantee"] = "exactly-once"
	tbl.Options["sink.transactional-id-prefix"] = "meta"
	schema := tbl.PersistedSchema()
	rec := metaRows(mem, schema)
	defer rec.Release()
	ctx := context.Background()
	spec := connector.SinkSpec{Mem: mem, Table: tbl, Schema: schema, ID: "job-1-meta-0", Checkpointed: true, StateDir: t.TempDir()}
	a := openSinkT(t, spec)
	if err := a.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
		t.Fatal(err)
	}
	state, err := a.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(state), `"meta":[1]`) {
		t.Errorf("the state does not say checkpoint 1's records carry metadata: %s", state)
	}
	a.Close()
	if got := metaRecords(t, addr); got != "" {
		t.Fatalf("visible before the checkpoint completed: %s", got)
	}
	b := openSinkT(t, spec)
	if err := b.Restore(state); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(ctx); err != nil { // commits the restored checkpoint
		t.Fatal(err)
	}
	if got := metaRecords(t, addr); got != metaWant {
		t.Errorf("records\n%s\nwant\n%s", got, metaWant)
	}
}
