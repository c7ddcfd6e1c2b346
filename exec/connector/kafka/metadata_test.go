package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
	"github.com/twmb/franz-go/pkg/kgo"
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
	rec := b.NewRecord()
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

	// The records as a Kafka client sees them.
	cl := client(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"meta": {0: kgo.NewOffset().AtStart()}}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for len(got) < 2 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var hs []string
			for _, h := range r.Headers {
				hs = append(hs, h.Key+"="+string(h.Value))
			}
			got = append(got, string(r.Value)+" "+r.Timestamp.UTC().Format(time.RFC3339)+" ["+strings.Join(hs, " ")+"]")
		})
	}
	want := "1,a 2024-05-06T07:08:09Z [k1=v1 k2=]|2,b 2024-05-06T07:08:10Z []"
	if strings.Join(got, "|") != want {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "|"), want)
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

// TestMetadataExactlyOnceRefused: the exactly-once sink has no place for metadata yet.
func TestMetadataExactlyOnceRefused(t *testing.T) {
	tbl := metaTable("127.0.0.1:1")
	tbl.Options["sink.delivery-guarantee"] = "exactly-once"
	tbl.Options["sink.transactional-id-prefix"] = "x"
	_, err := Sink.Open(context.Background(), connector.SinkSpec{Table: tbl, Schema: tbl.PersistedSchema(), Checkpointed: true, StateDir: t.TempDir()})
	want := "table meta: an exactly-once kafka sink does not write METADATA columns yet; declare them METADATA VIRTUAL or use 'sink.delivery-guarantee' = 'at-least-once'"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
