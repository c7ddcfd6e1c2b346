package kafka

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/exec/connector"
)

// TestSourceBatchesNameTheirRecords: each row of a batch names the topic, partition and
// offset it was decoded from, so that an expression failing on it can say so; skipped
// records (tombstones, malformed ones under ignore-parse-errors) take no row.
func TestSourceBatchesNameTheirRecords(t *testing.T) {
	addr := cluster(t, 2, "in")
	produce(t, addr, "in", 0, "1,a", "bad", "2,b")
	produce(t, addr, "in", 1, "3,c")
	mem := checkedMem(t)
	r := openReader(t, connector.SourceSpec{Mem: mem, BatchSize: 100, Table: kafkaTable("k", addr, map[string]string{
		"topic": "in", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset",
		"csv.ignore-parse-errors": "true"})})
	var got []string
	for {
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Rec == nil {
			continue
		}
		if b.Origin == nil {
			t.Fatal("a batch without origin")
		}
		for i := range b.Len() {
			got = append(got, b.Origin.Row(i))
		}
		b.Release()
	}
	slices.Sort(got)
	want := []string{
		"table k, topic in, partition 0, offset 0",
		"table k, topic in, partition 0, offset 2",
		"table k, topic in, partition 1, offset 0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("origins:\n got %q\nwant %q", got, want)
	}
}
