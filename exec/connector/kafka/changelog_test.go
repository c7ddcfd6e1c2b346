package kafka

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// A kafka table in debezium-json reads changes with their kinds (a tombstone after a
// delete is no change), and its sink writes an updating query's rows as messages.
func TestKafkaDebezium(t *testing.T) {
	addr := cluster(t, 1, "cdc", "out")
	produceKV(t, addr, "cdc", 0,
		kv{key: `{"id":1}`, value: `{"before":null,"after":{"id":1,"name":"a"},"op":"c"}`},
		kv{key: `{"id":1}`, value: `{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"},"op":"u"}`},
		kv{key: `{"id":1}`, value: `{"before":{"id":1,"name":"b"},"after":null,"op":"d"}`},
		kv{key: `{"id":1}`, tomb: true})
	mem := checkedMem(t)
	tbl := kafkaTable("cdc", addr, map[string]string{"topic": "cdc", "format": "debezium-json",
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
	r := openReader(t, connector.SourceSpec{Mem: mem, Table: tbl})
	checkChanges(t, readChanges(t, r, -1), "+I[1, a]\n-U[1, a]\n+U[1, b]\n-D[1, b]\n")

	out := kafkaTable("out", addr, map[string]string{"topic": "out", "format": "debezium-json"})
	s, err := Sink.Open(context.Background(), connector.SinkSpec{Mem: mem, Table: out})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, _, err := array.RecordFromJSON(mem, exec.ArrowSchema(out.PhysicalSchema()), strings.NewReader(`[{"id":1,"name":"a"},{"id":1,"name":"a"},{"id":1,"name":"b"}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if err := s.Process(context.Background(), 0, exec.Batch{Rec: rec, Kinds: []exec.RowKind{exec.Insert, exec.UpdateBefore, exec.UpdateAfter}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `{"before":null,"after":{"id":1,"name":"a"},"op":"c"}|{"before":{"id":1,"name":"a"},"after":null,"op":"d"}|{"before":null,"after":{"id":1,"name":"b"},"op":"c"}`
	if got := strings.Join(values(consume(t, addr, "out", false)), "|"); got != want {
		t.Errorf("sink wrote %s\nwant %s", got, want)
	}
}

// raw: a record's value is the column, its bytes as they are (a trailing line break
// included).
func TestKafkaRaw(t *testing.T) {
	addr := cluster(t, 1, "raw")
	produce(t, addr, "raw", 0, "one", "two\n", "")
	mem := checkedMem(t)
	tbl := kafkaTable("raw", addr, map[string]string{"topic": "raw", "format": "raw",
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
	tbl.Columns = []planner.TableColumn{{Name: "line", Type: planner.TypeString}}
	r := openReader(t, connector.SourceSpec{Mem: mem, Table: tbl})
	checkChanges(t, readChanges(t, r, -1), "+I[one]\n+I[two\n]\n+I[]\n")
}
