package format

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
)

// decodeMeta decodes lines with a metadata decoder of format reading the keys meta,
// and returns the rows (products' columns, then the metadata) in Flink's print form
// and the errors of bad lines.
func decodeMeta(t *testing.T, format string, meta []string, opts map[string]string, lines ...string) (string, []error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dec, err := NewMetadataDecoder(format, products, meta, mem, opts, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Release()
	var errs []error
	for i, l := range lines {
		if err := dec.Decode([]byte(l), int64(i+1)); err != nil {
			errs = append(errs, err)
		}
	}
	rec := dec.Flush()
	if rec == nil {
		return "", errs
	}
	defer rec.Release()
	if got, want := int(rec.NumCols()), len(products)+len(meta); got != want {
		t.Fatalf("%d columns, want %d", got, want)
	}
	return string(AppendRows(nil, NewChangelogEncoder("", time.UTC), exec.Batch{Rec: rec, Kinds: dec.Kinds()})), errs
}

func TestDebeziumMetadata(t *testing.T) {
	meta := []string{"ingestion-timestamp", "source.timestamp", "source.database", "source.schema", "source.table", "source.properties", "schema"}
	got, errs := decodeMeta(t, Debezium, meta, nil, oneLine(debeziumUpdate),
		`{"before":null,"after":{"id":1,"name":"a","description":null,"weight":1},"op":"c","source":{"ts_ms":"1589362330000","schema":"public","collection":"c"}}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := `-U[111, scooter, Big 2-wheel scooter, 5.18, 2020-05-13 09:32:10.904, 1970-01-01 00:00:00.000, inventory, null, products, {version=1.1.1.Final, connector=mysql, name=dbserver1, ts_ms=0, db=inventory, table=products}, null]
+U[111, scooter, Big 2-wheel scooter, 5.15, 2020-05-13 09:32:10.904, 1970-01-01 00:00:00.000, inventory, null, products, {version=1.1.1.Final, connector=mysql, name=dbserver1, ts_ms=0, db=inventory, table=products}, null]
+I[1, a, null, 1.00, null, 2020-05-13 09:32:10.000, null, public, c, {ts_ms=1589362330000, schema=public, collection=c}, null]
`
	checkRows(t, got, want)

	// With schema-include, the metadata is in the payload and schema is the schema.
	got, errs = decodeMeta(t, Debezium, []string{"schema", "ingestion-timestamp", "source.table"}, map[string]string{"debezium-json.schema-include": "true"},
		`{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":1},"op":"r","ts_ms":1000,"source":{"table":"t"}}}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, `+I[1, null, null, null, {"type":"struct"}, 1970-01-01 00:00:01.000, t]`+"\n")
}

func TestCanalMaxwellMetadata(t *testing.T) {
	got, errs := decodeMeta(t, Canal, []string{"database", "table", "sql-type", "pk-names", "ingestion-timestamp", "event-timestamp"}, nil,
		`{"data":[{"id":1},{"id":2}],"database":"inventory","table":"products","sqlType":{"id":-5,"name":12},"pkNames":["id"],"type":"INSERT","es":1589373560000,"ts":1589373560798}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, `+I[1, null, null, null, inventory, products, {id=-5, name=12}, [id], 2020-05-13 12:39:20.798, 2020-05-13 12:39:20.000]
+I[2, null, null, null, inventory, products, {id=-5, name=12}, [id], 2020-05-13 12:39:20.798, 2020-05-13 12:39:20.000]
`)
	got, errs = decodeMeta(t, Maxwell, []string{"database", "table", "primary-key-columns", "ingestion-timestamp"}, nil,
		`{"database":"test","table":"product","type":"update","ts":1596684904,"data":{"id":111,"weight":5.15},"old":{"weight":5.18},"primary_key_columns":["id"]}`,
		`{"type":"delete","data":{"id":1}}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, `-U[111, null, null, 5.18, test, product, [id], 2020-08-06 03:35:04.000]
+U[111, null, null, 5.15, test, product, [id], 2020-08-06 03:35:04.000]
-D[1, null, null, null, null, null, null, null]
`)
}

// Metadata of the wrong type makes its message malformed: an error naming the key,
// or, with ignore-parse-errors, a skipped message; no row of it is added.
func TestChangelogMetadataMalformed(t *testing.T) {
	bad := []struct{ format, key, line, want string }{
		{Debezium, "ingestion-timestamp", `{"after":{"id":1},"op":"c","ts_ms":"soon"}`, `metadata 'ingestion-timestamp': field ts_ms: cannot parse "soon" as BIGINT`},
		{Debezium, "source.properties", `{"after":{"id":1},"op":"c","source":[1]}`, `metadata 'source.properties': field source: expected a JSON object`},
		{Canal, "sql-type", `{"data":[{"id":1}],"type":"INSERT","sqlType":{"id":"big"}}`, `metadata 'sql-type': field sqlType.id: cannot parse "big" as INT`},
		{Maxwell, "primary-key-columns", `{"data":{"id":1},"type":"insert","primary_key_columns":"id"}`, `metadata 'primary-key-columns': field primary_key_columns: expected a JSON array`},
	}
	for _, tc := range bad {
		got, errs := decodeMeta(t, tc.format, []string{tc.key}, nil, tc.line, tc.line)
		if got != "" || len(errs) != 2 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s %s: rows %q, errors %v, want %s", tc.format, tc.key, got, errs, tc.want)
		}
		got, errs = decodeMeta(t, tc.format, []string{tc.key}, map[string]string{tc.format + ".ignore-parse-errors": "true"}, tc.line)
		if got != "" || len(errs) != 0 {
			t.Errorf("%s %s ignoring errors: rows %q, errors %v", tc.format, tc.key, got, errs)
		}
	}
	if _, err := NewMetadataDecoder(Canal, products, []string{"source.table"}, memory.NewGoAllocator(), nil, nil); err == nil ||
		err.Error() != "format canal-json has no metadata key 'source.table'" {
		t.Errorf("an unknown key: %v", err)
	}
}
