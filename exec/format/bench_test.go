package format

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

const benchBatch = 1024

// benchDecode decodes lines in batches of benchBatch rows; one op is one batch.
func benchDecode(b *testing.B, dec Decoder, lines [][]byte) {
	var size int64
	for _, l := range lines[:benchBatch] {
		size += int64(len(l)) + 1
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	rows := 0
	for n := 0; n < b.N; n++ {
		for i, l := range lines[:benchBatch] {
			if err := dec.Decode(l, int64(i+1)); err != nil {
				b.Fatal(err)
			}
		}
		rec := dec.Flush()
		rows += int(rec.NumRows())
		rec.Release()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkCSVDecode(b *testing.B) {
	schema := planner.Schema{
		{Name: "id", Type: planner.TypeString},
		{Name: "seq", Type: planner.TypeBigInt},
		{Name: "temperature", Type: planner.TypeDouble},
		{Name: "ts", Type: planner.TypeTS},
		{Name: "cnt", Type: planner.TypeInt},
	}
	lines := make([][]byte, benchBatch)
	for i := range lines {
		lines[i] = []byte(fmt.Sprintf("sensor_%d,%d,%d.%d,2019-01-17 09:%02d:%02d.%03d,%d",
			i%100, 1547718199000+int64(i), 20+i%15, i%10, i%60, (i*7)%60, i%1000, i%7))
	}
	mem := memory.NewGoAllocator()
	dec, err := NewCSVDecoder(schema, mem, DefaultCSVOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Release()
	benchDecode(b, dec, lines)
}

func BenchmarkJSONDecode(b *testing.B) {
	schema := planner.Schema{
		{Name: "id", Type: planner.TypeString},
		{Name: "ts", Type: planner.TypeBigInt},
		{Name: "temperature", Type: planner.TypeDouble},
	}
	lines := make([][]byte, benchBatch)
	for i := range lines {
		lines[i] = []byte(fmt.Sprintf(`{"id":"sensor_%d","ts":%d,"temperature":%d.%d}`, i%100, 1547718199+i, 20+i%15, i%10))
	}
	mem := memory.NewGoAllocator()
	dec, err := NewJSONDecoder(schema, mem, JSONOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Release()
	benchDecode(b, dec, lines)
}

func BenchmarkCSVEncode(b *testing.B) {
	schema := planner.Schema{
		{Name: "id", Type: planner.TypeString},
		{Name: "seq", Type: planner.TypeBigInt},
		{Name: "temperature", Type: planner.TypeDouble},
		{Name: "ts", Type: planner.TypeTS},
		{Name: "cnt", Type: planner.TypeInt},
	}
	mem := memory.NewGoAllocator()
	dec, err := NewCSVDecoder(schema, mem, DefaultCSVOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Release()
	for i := 0; i < benchBatch; i++ {
		line := fmt.Sprintf("sensor_%d,%d,%d.%d,2019-01-17 09:%02d:%02d.%03d,%d",
			i%100, 1547718199000+int64(i), 20+i%15, i%10, i%60, (i*7)%60, i%1000, i%7)
		if err := dec.Decode([]byte(line), 1); err != nil {
			b.Fatal(err)
		}
	}
	rec := dec.Flush()
	defer rec.Release()
	enc := NewCSVEncoder(CSVOptions{FieldDelimiter: ',', QuoteCharacter: '"', Location: time.UTC})
	batch := exec.Batch{Rec: rec}
	buf := AppendRows(nil, enc, batch)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		buf = AppendRows(buf[:0], enc, batch)
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkChangelogDecode decodes the same rows as plain json objects (the baseline),
// as debezium-json inserts, and as debezium-json updates (two rows a message), canal-json
// and maxwell-json inserts; one op is a batch of 1024 messages.
func BenchmarkChangelogDecode(b *testing.B) {
	schema := planner.Schema{
		{Name: "id", Type: planner.TypeString},
		{Name: "ts", Type: planner.TypeBigInt},
		{Name: "temperature", Type: planner.TypeDouble},
	}
	row := func(i int) string {
		return fmt.Sprintf(`{"id":"sensor_%d","ts":%d,"temperature":%d.%d}`, i%100, 1547718199+i, 20+i%15, i%10)
	}
	for _, c := range []struct {
		name, format string
		msg          func(i int) string
	}{
		{"json", "json", row},
		{"debezium-insert", Debezium, func(i int) string {
			return `{"before":null,"after":` + row(i) + `,"source":{"db":"inventory","table":"sensors"},"op":"c","ts_ms":1589362330904}`
		}},
		{"debezium-update", Debezium, func(i int) string {
			return `{"before":` + row(i) + `,"after":` + row(i+1) + `,"source":{"db":"inventory","table":"sensors"},"op":"u","ts_ms":1589362330904}`
		}},
		{"canal-insert", Canal, func(i int) string {
			return `{"data":[` + row(i) + `],"database":"inventory","table":"sensors","isDdl":false,"type":"INSERT","ts":1589373560798}`
		}},
		{"maxwell-insert", Maxwell, func(i int) string {
			return `{"database":"inventory","table":"sensors","type":"insert","ts":1477053217,"data":` + row(i) + `}`
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lines := make([][]byte, benchBatch)
			for i := range lines {
				lines[i] = []byte(c.msg(i))
			}
			dec, err := NewDecoder(c.format, schema, memory.NewGoAllocator(), nil, time.UTC)
			if err != nil {
				b.Fatal(err)
			}
			defer dec.Release()
			benchDecode(b, dec, lines)
		})
	}
}

// bidSchema and bidLine are Nexmark's bid as a table and as a line of each format, for
// the decoders' benchmarks: three integers, three strings and a timestamp.
var bidSchema = planner.Schema{
	{Name: "auction", Type: planner.TypeBigInt},
	{Name: "bidder", Type: planner.TypeBigInt},
	{Name: "price", Type: planner.TypeBigInt},
	{Name: "channel", Type: planner.TypeString},
	{Name: "url", Type: planner.TypeString},
	{Name: "dateTime", Type: planner.TypeTS},
	{Name: "extra", Type: planner.TypeString},
}

func bidLine(i int, json bool) []byte {
	auction, bidder, price := 1000+i/17, 1001+i%1000, 100+(i*7919)%10000000
	channel, url := "Google", "https://www.nexmark.com/google/item.htm?query=1"
	if i%2 == 1 {
		channel, url = fmt.Sprintf("channel-%d", i%10000), fmt.Sprintf("https://www.nexmark.com/abcde/fghij/klmno/item.htm?query=1&channel_id=%d", i%997)
	}
	ts := fmt.Sprintf("2015-07-15 00:%02d:%02d.%03d", i/60000%60, i/1000%60, i%1000)
	extra := "abcdefghijklmnopqrstuvwxyz"[:i%24]
	if json {
		return []byte(fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d,"channel":"%s","url":"%s","dateTime":"%s","extra":"%s"}`,
			auction, bidder, price, channel, url, ts, extra))
	}
	return []byte(fmt.Sprintf("%d,%d,%d,%s,%s,%s,%s", auction, bidder, price, channel, url, ts, extra))
}

// BenchmarkBidDecode decodes Nexmark's bids as JSON lines and as CSV, every column and
// (json) the columns of Nexmark's q1, whose decoder skips channel and url.
func BenchmarkBidDecode(b *testing.B) {
	q1 := planner.Schema{bidSchema[0], bidSchema[1], bidSchema[2], bidSchema[5], bidSchema[6]}
	for _, c := range []struct {
		name, format string
		schema       planner.Schema
	}{
		{"json", "json", bidSchema},
		{"json-q1", "json", q1},
		{"csv", "csv", bidSchema},
	} {
		b.Run(c.name, func(b *testing.B) {
			lines := make([][]byte, benchBatch)
			for i := range lines {
				lines[i] = bidLine(i, c.format == "json")
			}
			dec, err := NewDecoder(c.format, c.schema, memory.NewGoAllocator(), nil, time.UTC)
			if err != nil {
				b.Fatal(err)
			}
			defer dec.Release()
			benchDecode(b, dec, lines)
		})
	}
}
