package format

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// products is the table of the examples in Flink's pages on the Debezium, Canal and
// Maxwell formats.
var products = planner.Schema{
	{Name: "id", Type: planner.TypeBigInt},
	{Name: "name", Type: planner.TypeString},
	{Name: "description", Type: planner.TypeString},
	{Name: "weight", Type: planner.DecimalType(10, 2)},
}

// decodeChanges decodes lines with a decoder of format and returns the rows in Flink's
// print form, with their kinds, and the errors of bad lines.
func decodeChanges(t *testing.T, format string, opts map[string]string, lines ...string) (string, []error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dec, err := NewDecoder(format, products, mem, opts, time.UTC)
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
		if k := dec.Kinds(); k != nil {
			t.Fatalf("kinds %v without rows", k)
		}
		return "", errs
	}
	defer rec.Release()
	b := exec.Batch{Rec: rec, Kinds: dec.Kinds()}
	if b.Kinds != nil && len(b.Kinds) != b.Len() {
		t.Fatalf("%d kinds for %d rows", len(b.Kinds), b.Len())
	}
	return string(AppendRows(nil, NewChangelogEncoder("", time.UTC), b)), errs
}

// Flink's example of an update captured by Debezium from MySQL's products table.
const debeziumUpdate = `{"before": {"id": 111, "name": "scooter", "description": "Big 2-wheel scooter", "weight": 5.18},
 "after": {"id": 111, "name": "scooter", "description": "Big 2-wheel scooter", "weight": 5.15},
 "source": {"version": "1.1.1.Final", "connector": "mysql", "name": "dbserver1", "ts_ms": 0, "db": "inventory", "table": "products"},
 "op": "u", "ts_ms": 1589362330904, "transaction": null}`

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "") }

func TestDebeziumDecode(t *testing.T) {
	got, errs := decodeChanges(t, Debezium, nil,
		`{"before":null,"after":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14},"op":"r","ts_ms":1589355606100}`,
		`{"before":null,"after":{"id":102,"name":"car battery","description":"12V car battery","weight":8.1},"op":"c"}`,
		oneLine(debeziumUpdate),
		`{"before":{"id":102,"name":"car battery","description":"12V car battery","weight":8.1},"after":null,"op":"d"}`,
		``, // blank: a Kafka tombstone after a delete carries no change
	)
	for _, err := range errs {
		t.Error(err)
	}
	checkRows(t, got, `+I[101, scooter, Small 2-wheel scooter, 3.14]
+I[102, car battery, 12V car battery, 8.10]
-U[111, scooter, Big 2-wheel scooter, 5.18]
+U[111, scooter, Big 2-wheel scooter, 5.15]
-D[102, car battery, 12V car battery, 8.10]
`)
}

func TestDebeziumSchemaInclude(t *testing.T) {
	msg := `{"schema":{"type":"struct","fields":[],"optional":false,"name":"dbserver1.inventory.products.Envelope"},"payload":` + oneLine(debeziumUpdate) + `}`
	got, errs := decodeChanges(t, Debezium, map[string]string{"debezium-json.schema-include": "true"}, msg)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, "-U[111, scooter, Big 2-wheel scooter, 5.18]\n+U[111, scooter, Big 2-wheel scooter, 5.15]\n")

	// Without the option the message is refused, saying which option to set.
	_, errs = decodeChanges(t, Debezium, nil, msg)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "'debezium-json.schema-include' = 'true'") {
		t.Fatalf("got %v", errs)
	}
	// With it, a message without a payload is refused.
	_, errs = decodeChanges(t, Debezium, map[string]string{"debezium-json.schema-include": "true"}, oneLine(debeziumUpdate))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `no "payload"`) {
		t.Fatalf("got %v", errs)
	}
}

// Flink's example of an update captured by Canal: the values are strings, and old holds
// only the field that changed.
const canalUpdate = `{"data":[{"id":"111","name":"scooter","description":"Big 2-wheel scooter","weight":"5.18"}],
 "database":"inventory","es":1589373560000,"id":9,"isDdl":false,
 "mysqlType":{"id":"INTEGER","name":"VARCHAR(255)","description":"VARCHAR(512)","weight":"FLOAT"},
 "old":[{"weight":"5.15"}],"pkNames":["id"],"sql":"",
 "sqlType":{"id":4,"name":12,"description":12,"weight":7},
 "table":"products","ts":1589373560798,"type":"UPDATE"}`

func TestCanalDecode(t *testing.T) {
	got, errs := decodeChanges(t, Canal, nil,
		oneLine(canalUpdate),
		`{"data":[{"id":"101","name":"scooter","description":"Small 2-wheel scooter","weight":"3.14"},{"id":"102","name":"car battery","description":"12V car battery","weight":"8.1"}],"database":"inventory","table":"products","isDdl":false,"type":"INSERT"}`,
		`{"data":[{"id":"102","name":"car battery","description":"12V car battery","weight":"8.1"}],"old":null,"database":"inventory","table":"products","isDdl":false,"type":"DELETE"}`,
		`{"data":null,"database":"inventory","table":"products","isDdl":true,"sql":"ALTER TABLE products ADD c INT","type":"ALTER"}`,
		`{"data":null,"database":"inventory","table":"products","type":"CREATE"}`,
		`{"data":[{"id":"103","name":"x","description":null,"weight":"1"}],"old":[{"description":"was","weight":null}],"database":"inventory","table":"products","type":"UPDATE"}`,
	)
	for _, err := range errs {
		t.Error(err)
	}
	// old's weight 5.15 is the before row's; its other fields are data's. A field old
	// holds as null is NULL in the before row.
	checkRows(t, got, `-U[111, scooter, Big 2-wheel scooter, 5.15]
+U[111, scooter, Big 2-wheel scooter, 5.18]
+I[101, scooter, Small 2-wheel scooter, 3.14]
+I[102, car battery, 12V car battery, 8.10]
-D[102, car battery, 12V car battery, 8.10]
-U[103, x, was, null]
+U[103, x, null, 1.00]
`)
}

func TestCanalInclude(t *testing.T) {
	opts := map[string]string{"canal-json.database.include": "inv.*", "canal-json.table.include": "products"}
	got, errs := decodeChanges(t, Canal, opts,
		`{"data":[{"id":"1"}],"database":"inventory","table":"products","type":"INSERT"}`,
		`{"data":[{"id":"2"}],"database":"other","table":"products","type":"INSERT"}`,
		`{"data":[{"id":"3"}],"database":"inventory","table":"products_old","type":"INSERT"}`,
	)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, "+I[1, null, null, null]\n")
	if _, err := NewDecoder(Canal, products, memory.NewGoAllocator(), map[string]string{"canal-json.table.include": "("}, nil); err == nil {
		t.Fatal("a bad pattern was accepted")
	}
}

// Flink's example of an update captured by Maxwell.
const maxwellUpdate = `{"database":"test","table":"e","type":"update","ts":1477053217,"xid":23396,"commit":true,
 "position":"master.000006:800911","server_id":23042,"thread_id":108,
 "primary_key":[1,"2016-10-21 05:33:37.523000"],"primary_key_columns":["id","c"],
 "data":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15},
 "old":{"weight":5.18}}`

func TestMaxwellDecode(t *testing.T) {
	got, errs := decodeChanges(t, Maxwell, nil,
		`{"database":"test","table":"e","type":"insert","ts":1477053217,"data":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18}}`,
		oneLine(maxwellUpdate),
		`{"database":"test","table":"e","type":"delete","data":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15}}`,
	)
	for _, err := range errs {
		t.Error(err)
	}
	checkRows(t, got, `+I[111, scooter, Big 2-wheel scooter, 5.18]
-U[111, scooter, Big 2-wheel scooter, 5.18]
+U[111, scooter, Big 2-wheel scooter, 5.15]
-D[111, scooter, Big 2-wheel scooter, 5.15]
`)
}

// Malformed messages fail naming the line, the part and the column, and add no row of
// theirs; with <format>.ignore-parse-errors they are skipped and counted.
func TestChangelogMalformed(t *testing.T) {
	cases := []struct {
		format, msg, want string
	}{
		{Debezium, `{"before":null,"after":{"id":1},"op":"x"}`, `line 1: unknown "op" "x" (expected c, r, u or d)`},
		{Debezium, `{"before":null,"after":{"id":1}}`, `line 1: the message has no "op" string`},
		{Debezium, `{"before":null,"after":{"id":1},"op":"u"}`, `line 1: the "before" row of an update ("op": "u") is null (for Debezium's PostgreSQL connector, set the table's REPLICA IDENTITY to FULL)`},
		{Debezium, `{"before":null,"after":null,"op":"d"}`, `line 1: the "before" row of a delete`},
		{Debezium, `{"before":{"id":1},"after":{"id":"x"},"op":"u"}`, `line 1: cannot parse "x" as BIGINT for column id (in after)`},
		{Debezium, `{"before":{"id":1},"after":{"id":2},"op":"u"`, `line 1: expected ',' or '}' at offset`},
		{Debezium, `[1]`, `line 1: expected a JSON object`},
		{Canal, `{"data":[{"id":"1"},{"id":"y"}],"type":"INSERT"}`, `line 1: cannot parse "y" as BIGINT for column id (in data row 2)`},
		{Canal, `{"data":[{"id":"1"}],"old":[],"type":"UPDATE"}`, `line 1: an UPDATE has 1 "data" rows but 0 "old" rows`},
		{Canal, `{"data":[{"id":"1"}],"type":"TRUNCATE"}`, `line 1: unknown "type" "TRUNCATE" (expected INSERT, UPDATE or DELETE)`},
		{Canal, `{"data":{"id":"1"},"type":"INSERT"}`, `line 1: expected an array of rows (in data)`},
		{Maxwell, `{"type":"insert"}`, `line 1: the message has no "data" row`},
		{Maxwell, `{"data":{"id":1},"old":{"weight":"heavy"},"type":"update"}`, `line 1: cannot parse "heavy" as DECIMAL(10, 2) for column weight (in old)`},
		{Maxwell, `{"data":{"id":1},"type":"bootstrap-insert"}`, `line 1: unknown "type" "bootstrap-insert"`},
	}
	for _, c := range cases {
		got, errs := decodeChanges(t, c.format, nil, c.msg)
		if got != "" {
			t.Errorf("%s %s: added rows %q", c.format, c.msg, got)
		}
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), c.want) {
			t.Errorf("%s %s:\n got %v\nwant %s", c.format, c.msg, errs, c.want)
			continue
		}
		if !strings.HasSuffix(errs[0].Error(), ": "+quoteClipped(c.msg)) {
			t.Errorf("%s: the error does not quote the message: %v", c.format, errs[0])
		}
		// Skipped with ignore-parse-errors, between good messages.
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		dec, err := NewDecoder(c.format, products, mem, map[string]string{c.format + ".ignore-parse-errors": "true"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := dec.Decode([]byte(c.msg), 1); err != nil {
			t.Errorf("%s: ignore-parse-errors: %v", c.format, err)
		}
		if dec.Skipped() != 1 || dec.Rows() != 0 {
			t.Errorf("%s: skipped %d, rows %d", c.format, dec.Skipped(), dec.Rows())
		}
		dec.Release()
		mem.AssertSize(t, 0)
	}
}

// Rows encoded in a changelog format decode to the same changes, but for the kind of an
// update's rows: Flink writes -U as a delete and +U as an insert.
func TestChangelogEncode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := recordFromJSON(t, mem, exec.ArrowSchema(products), `[
		{"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": "3.14"},
		{"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": "3.14"},
		{"id": 101, "name": "scooter", "description": null, "weight": "5.17"},
		{"id": 102, "name": "car \"battery\"", "description": "12V", "weight": "8.10"}]`)
	defer rec.Release()
	b := exec.Batch{Rec: rec, Kinds: []exec.RowKind{exec.Insert, exec.UpdateBefore, exec.UpdateAfter, exec.Delete}}
	want := map[string]string{
		Debezium: `{"before":null,"after":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14},"op":"c"}
{"before":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14},"after":null,"op":"d"}
{"before":null,"after":{"id":101,"name":"scooter","description":null,"weight":5.17},"op":"c"}
{"before":{"id":102,"name":"car \"battery\"","description":"12V","weight":8.10},"after":null,"op":"d"}
`,
		Canal: `{"data":[{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14}],"type":"INSERT"}
{"data":[{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14}],"type":"DELETE"}
{"data":[{"id":101,"name":"scooter","description":null,"weight":5.17}],"type":"INSERT"}
{"data":[{"id":102,"name":"car \"battery\"","description":"12V","weight":8.10}],"type":"DELETE"}
`,
		Maxwell: `{"data":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14},"type":"insert"}
{"data":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14},"type":"delete"}
{"data":{"id":101,"name":"scooter","description":null,"weight":5.17},"type":"insert"}
{"data":{"id":102,"name":"car \"battery\"","description":"12V","weight":8.10},"type":"delete"}
`,
	}
	for _, f := range []string{Debezium, Canal, Maxwell} {
		enc, err := NewEncoder(f, namedColumns("id", "name", "description", "weight"), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := string(AppendRows(nil, enc, b))
		if out != want[f] {
			t.Errorf("%s:\n got %s\nwant %s", f, out, want[f])
		}
		got, errs := decodeChanges(t, f, nil, strings.Split(strings.TrimSuffix(out, "\n"), "\n")...)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		checkRows(t, got, `+I[101, scooter, Small 2-wheel scooter, 3.14]
-D[101, scooter, Small 2-wheel scooter, 3.14]
+I[101, scooter, null, 5.17]
-D[102, car "battery", 12V, 8.10]
`)
	}
}

func TestChangelogOptions(t *testing.T) {
	keys, ok := OptionKeys(Debezium)
	if !ok || strings.Join(keys, " ") != "debezium-json.ignore-parse-errors debezium-json.schema-include debezium-json.timestamp-format.standard" {
		t.Fatalf("debezium keys %v", keys)
	}
	if _, err := ParseChangelogOptions(Maxwell, map[string]string{"maxwell-json.timestamp-format.standard": "RFC"}); err == nil ||
		err.Error() != `option 'maxwell-json.timestamp-format.standard' must be 'SQL' or 'ISO-8601', got "RFC"` {
		t.Fatalf("got %v", err)
	}
	if _, err := ParseChangelogOptions(Debezium, map[string]string{"debezium-json.schema-include": "yes"}); err == nil {
		t.Fatal("accepted schema-include = yes")
	}
}
