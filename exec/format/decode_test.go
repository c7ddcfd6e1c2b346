package format

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// allTypes holds a column of every type the formats read.
var allTypes = planner.Schema{
	{Name: "b", Type: planner.TypeBoolean},
	{Name: "i", Type: planner.TypeInt},
	{Name: "l", Type: planner.TypeBigInt},
	{Name: "d", Type: planner.TypeDouble},
	{Name: "m", Type: planner.DecimalType(10, 2)},
	{Name: "s", Type: planner.TypeString},
	{Name: "ts", Type: planner.TypeTS},
	{Name: "lt", Type: planner.TypeTSLTZ},
	{Name: "dt", Type: planner.TypeDate},
}

// namedColumns is a schema of STRING columns with the given names.
func namedColumns(names ...string) planner.Schema {
	s := make(planner.Schema, len(names))
	for i, n := range names {
		s[i] = planner.Column{Name: n, Type: planner.TypeString}
	}
	return s
}

var sensors = planner.Schema{
	{Name: "id", Type: planner.TypeString},
	{Name: "temperature", Type: planner.TypeDouble},
	{Name: "cnt", Type: planner.TypeInt},
}

// render prints a record in changelog form, one row a line.
func render(rec arrow.Record, loc *time.Location) string {
	if rec == nil {
		return ""
	}
	return string(AppendRows(nil, NewChangelogEncoder("", loc), exec.Batch{Rec: rec}))
}

// decodeLines decodes lines (numbered from 1) and returns the rendered rows and the
// error of each bad line.
func decodeLines(t *testing.T, dec Decoder, lines ...string) (string, []error) {
	t.Helper()
	var errs []error
	for i, l := range lines {
		if err := dec.Decode([]byte(l), int64(i+1)); err != nil {
			errs = append(errs, err)
		}
	}
	rec := dec.Flush()
	if rec != nil {
		defer rec.Release()
		if err := rec.Schema().Equal(rec.Schema()); !err {
			t.Fatal("schema")
		}
	}
	return render(rec, time.UTC), errs
}

func newCSV(t *testing.T, mem memory.Allocator, schema planner.Schema, opts map[string]string) Decoder {
	t.Helper()
	d, err := NewDecoder("csv", schema, mem, opts, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newJSON(t *testing.T, mem memory.Allocator, schema planner.Schema, opts map[string]string) Decoder {
	t.Helper()
	d, err := NewDecoder("json", schema, mem, opts, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func checkRows(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
}

func TestCSVDecodeTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newCSV(t, mem, allTypes, nil)
	defer d.Release()
	got, errs := decodeLines(t, d,
		"true,1,2,3.5,12.5,hello,2019-01-17 09:43:19,2019-01-17T09:43:19.123,2019-01-17",
		"FALSE, -7 ,9223372036854775807,1e10,-0.005,,1547718199000,0,1970-01-01",
		",,,,,,,,",
		"",
		`True,0,0,0,0,"a ""quoted"", field",2019-01-17 09:43:19.5,2019-01-17 09:43:19Z,2000-02-29`,
		`false,1,1,1,1,"multi
line",2019-01-17 00:00,1,2019-01-17`,
	)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, `+I[true, 1, 2, 3.5, 12.50, hello, 2019-01-17 09:43:19.000, 2019-01-17 09:43:19.123, 2019-01-17]
+I[false, -7, 9223372036854775807, 1.0E10, -0.01, , 2019-01-17 09:43:19.000, 1970-01-01 00:00:00.000, 1970-01-01]
+I[null, null, null, null, null, , null, null, null]
+I[true, 0, 0, 0.0, 0.00, a "quoted", field, 2019-01-17 09:43:19.500, 2019-01-17 09:43:19.000, 2000-02-29]
+I[false, 1, 1, 1.0, 1.00, multi
line, 2019-01-17 00:00:00.000, 1970-01-01 00:00:00.001, 2019-01-17]
`)
}

func TestCSVOptions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newCSV(t, mem, sensors, map[string]string{
		"csv.field-delimiter": `\t`, "csv.quote-character": "'", "csv.allow-comments": "true",
		"csv.null-literal": "n/a", "connector": "ignored",
	})
	defer d.Release()
	got, errs := decodeLines(t, d,
		"# a comment",
		"sensor_1\t35.8\t3",
		"n/a\tn/a\tn/a",
		"'n/a'\t1\t'2'",
		"\t\t",
		"'it''s'\t-1.5\t0",
	)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, `+I[sensor_1, 35.8, 3]
+I[null, null, null]
+I[n/a, 1.0, 2]
+I[, null, null]
+I[it's, -1.5, 0]
`)

	if _, err := NewDecoder("csv", sensors, mem, map[string]string{"csv.field-delimiter": "ab"}, nil); err == nil ||
		err.Error() != `option 'csv.field-delimiter' must be a single ASCII character other than a line break, got "ab"` {
		t.Errorf("bad delimiter: %v", err)
	}
	if _, err := NewDecoder("csv", sensors, mem, map[string]string{"csv.allow-comments": "yes"}, nil); err == nil ||
		err.Error() != `option 'csv.allow-comments' must be true or false, got "yes"` {
		t.Errorf("bad bool: %v", err)
	}
	if _, err := NewDecoder("avro", sensors, mem, nil, nil); err == nil || err.Error() != `unknown format "avro" (supported: csv, json, debezium-json, canal-json, maxwell-json, raw)` {
		t.Errorf("bad format: %v", err)
	}
	if _, err := NewDecoder("csv", planner.Schema{{Name: "x", Type: planner.TypeInterval}}, mem, nil, nil); err == nil ||
		err.Error() != "format csv cannot read column x of type INTERVAL DAY TO SECOND" {
		t.Errorf("bad type: %v", err)
	}
}

func TestCSVDisableQuote(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newCSV(t, mem, sensors, map[string]string{"csv.disable-quote-character": "true"})
	defer d.Release()
	got, errs := decodeLines(t, d, `"a",1,2`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, "+I[\"a\", 1.0, 2]\n")
}

func TestCSVErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := append(planner.Schema{}, sensors...)
	schema[2].Type.NotNull = true
	d := newCSV(t, mem, schema, nil)
	defer d.Release()
	got, errs := decodeLines(t, d,
		"sensor_1,abc,3",
		"sensor_1,1,2,3",
		"sensor_1,1",
		"sensor_1,1,",
		`"open,1,2`,
		`"a"b,1,2`,
		"s,1,99999999999",
		"ok,1,1",
		"s,1,1.5",
	)
	checkRows(t, got, "+I[ok, 1.0, 1]\n")
	want := []string{
		`line 1: cannot parse "abc" as DOUBLE for column temperature: "sensor_1,abc,3"`,
		`line 2: expected 3 fields, found 4: "sensor_1,1,2,3"`,
		`line 3: expected 3 fields, found 2: "sensor_1,1"`,
		`line 4: NULL is not allowed for column cnt: "sensor_1,1,"`,
		`line 5: unterminated quoted field starting at offset 0: "\"open,1,2"`,
		`line 6: unexpected 'b' after a closing quote at offset 3: "\"a\"b,1,2"`,
		`line 7: cannot parse "99999999999" as INT (out of range) for column cnt: "s,1,99999999999"`,
		`line 9: cannot parse "1.5" as INT for column cnt: "s,1,1.5"`,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors: %v", errs)
	}
	for i, err := range errs {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%T is not a *ParseError", err)
		}
		if err.Error() != want[i] {
			t.Errorf("error %d:\n got %s\nwant %s", i, err, want[i])
		}
	}
	var pe *ParseError
	errors.As(errs[0], &pe)
	if pe.Line != 1 || pe.Column != "temperature" || pe.Text != "sensor_1,abc,3" || pe.Msg != `cannot parse "abc" as DOUBLE` {
		t.Errorf("fields: %+v", pe)
	}
	long := &ParseError{Line: 1, Msg: "m", Text: strings.Repeat("é", 300)}
	if s := long.Error(); !strings.HasSuffix(s, `..."`) || len(s) > 260 {
		t.Errorf("long text not clipped: %d bytes", len(s))
	}
}

func TestCSVIgnoreParseErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newCSV(t, mem, sensors, map[string]string{"csv.ignore-parse-errors": "true"})
	defer d.Release()
	got, errs := decodeLines(t, d, "a,1,1", "b,x,1", "c,1", "d,2,2")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, "+I[a, 1.0, 1]\n+I[d, 2.0, 2]\n")
	if d.Skipped() != 2 {
		t.Errorf("skipped %d, want 2", d.Skipped())
	}
}

func TestCSVInvalidUTF8(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newCSV(t, mem, sensors, nil)
	defer d.Release()
	got, errs := decodeLines(t, d, "a\xffb,1,1")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, "+I[a\uFFFDb, 1.0, 1]\n")
}

// TestJSONBigInts: plain integers take a fast path; the longest, fractions and
// exponents go through the general one.
func TestJSONBigInts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newJSON(t, mem, planner.Schema{{Name: "n", Type: planner.TypeBigInt}}, nil)
	defer d.Release()
	got, errs := decodeLines(t, d,
		`{"n":0}`, `{"n":-0}`, `{"n":007}`, `{"n":123456789012345678}`, `{"n":-123456789012345678}`,
		`{"n":9223372036854775807}`, `{"n":-9223372036854775808}`, `{"n" : 42 }`,
		`{"n":9223372036854775808}`, `{"n":1.5}`, `{"n":1e3}`, `{"n":2E3}`, `{"n":-}`, `{"n":12x}`,
	)
	checkRows(t, got, "+I[0]\n+I[0]\n+I[7]\n+I[123456789012345678]\n+I[-123456789012345678]\n"+
		"+I[9223372036854775807]\n+I[-9223372036854775808]\n+I[42]\n")
	want := []string{
		`line 9: cannot parse "9223372036854775808" as BIGINT (out of range) for column n`,
		`line 10: cannot parse "1.5" as BIGINT for column n`,
		`line 11: cannot parse "1e3" as BIGINT for column n`,
		`line 12: cannot parse "2E3" as BIGINT for column n`,
		`line 13: invalid number at offset 5 for column n`,
		`line 14: expected ',' or '}' at offset 7`,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors: %v", errs)
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w+":") {
			t.Errorf("error %d:\n got %s\nwant %s", i, errs[i], w)
		}
	}
}

// TestJSONInvalidUTF8: invalid bytes in a string become U+FFFD, whether the string is a
// value, a field name, escaped, long or inside a nested value read as a STRING; outside
// a string they are a syntax error whose message is valid UTF-8.
func TestJSONInvalidUTF8(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newJSON(t, mem, sensors, nil)
	defer d.Release()
	got, errs := decodeLines(t, d,
		"{\"id\":\"a\xffb\",\"cnt\":1}",
		"{\"id\":\"\u00e9\\n\xfe\",\"cnt\":2}",
		"{\"id\":\"0123456789\xc3\xa9\xe2\x82\",\"cnt\":3}",
		"{\"id\":{\"k\":\"x\xffy\"},\"cnt\":4}",
		"{\"\xffid\":\"skipped\",\"id\":\"\xc3\xa9t\xc3\xa9\",\"cnt\":5}",
		"{\"id\":\"ok\",\"cnt\":6\xff}",
	)
	checkRows(t, got, "+I[a\uFFFDb, null, 1]\n"+
		"+I[\u00e9\n\uFFFD, null, 2]\n"+
		"+I[0123456789\u00e9\uFFFD\uFFFD, null, 3]\n"+
		"+I[{\"k\":\"x\uFFFDy\"}, null, 4]\n"+
		"+I[\u00e9t\u00e9, null, 5]\n")
	want := "line 6: expected ',' or '}' at offset 18: \"{\\\"id\\\":\\\"ok\\\",\\\"cnt\\\":6\uFFFD}\""
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("errors: %v\nwant %s", errs, want)
	}
}

func TestCSVManyBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newCSV(t, mem, sensors, nil)
	defer d.Release()
	for batch := 0; batch < 3; batch++ {
		for i := 0; i < 1000; i++ {
			if err := d.Decode([]byte("sensor_123456,35.8,3"), int64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
		if d.Rows() != 1000 {
			t.Fatalf("rows %d", d.Rows())
		}
		rec := d.Flush()
		if rec.NumRows() != 1000 || d.Rows() != 0 {
			t.Fatalf("flushed %d rows, %d left", rec.NumRows(), d.Rows())
		}
		rec.Release()
	}
	if d.Flush() != nil {
		t.Error("empty flush returned a record")
	}
}

func TestCSVTimestampLTZInZone(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := planner.Schema{{Name: "lt", Type: planner.TypeTSLTZ}, {Name: "ts", Type: planner.TypeTS}}
	shanghai := time.FixedZone("UTC+8", 8*3600)
	d, err := NewDecoder("csv", schema, mem, nil, shanghai)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if err := d.Decode([]byte("2019-01-17 09:43:19,2019-01-17 09:43:19"), 1); err != nil {
		t.Fatal(err)
	}
	rec := d.Flush()
	defer rec.Release()
	// LTZ is an instant: read in the session zone, printed in UTC it is 8 hours earlier;
	// TIMESTAMP is a wall clock and does not move.
	checkRows(t, render(rec, time.UTC), "+I[2019-01-17 01:43:19.000, 2019-01-17 09:43:19.000]\n")
	checkRows(t, render(rec, shanghai), "+I[2019-01-17 09:43:19.000, 2019-01-17 09:43:19.000]\n")
}

func TestJSONDecodeTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newJSON(t, mem, allTypes, nil)
	defer d.Release()
	got, errs := decodeLines(t, d,
		`{"b":true,"i":1,"l":2,"d":3.5,"m":12.5,"s":"hello","ts":"2019-01-17 09:43:19","lt":"2019-01-17T09:43:19.123Z","dt":"2019-01-17"}`,
		`  { "dt" : "1970-01-01", "s" : 42, "l" : "9223372036854775807", "d" : "1e10", "m" : "-0.005", "i" : " -7 ", "b" : "FALSE", "ts" : 1547718199000, "lt" : 0 }  `,
		`{}`,
		`{"b":null,"i":null,"l":null,"d":null,"m":null,"s":null,"ts":null,"lt":null,"dt":null}`,
		`{"s":"esc \" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \ud800 x","extra":{"a":[1,2,{"b":"}]"}],"c":null},"more":[[],{}],"n":-1.5e-3}`,
		`{"s":{"nested":[1, "two"]},"b":false}`,
		`{"s":"first","s":"second"}`,
		``,
		`   `,
	)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, `+I[true, 1, 2, 3.5, 12.50, hello, 2019-01-17 09:43:19.000, 2019-01-17 09:43:19.123, 2019-01-17]
+I[false, -7, 9223372036854775807, 1.0E10, -0.01, 42, 2019-01-17 09:43:19.000, 1970-01-01 00:00:00.000, 1970-01-01]
+I[null, null, null, null, null, null, null, null, null]
+I[null, null, null, null, null, null, null, null, null]
+I[null, null, null, null, null, esc " \ / `+"\b\f\n\r\t"+` é 😀 `+"\uFFFD"+` x, null, null, null]
+I[false, null, null, null, null, {"nested":[1,"two"]}, null, null, null]
+I[null, null, null, null, null, second, null, null, null]
`)
}

func TestJSONErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newJSON(t, mem, sensors, nil)
	defer d.Release()
	got, errs := decodeLines(t, d,
		`{"id":"sensor_1","temperature":"abc","cnt":3}`,
		`{"id":"sensor_1","temperature":1.5,"cnt":true}`,
		`{"id":"sensor_1"`,
		`{"id":"sensor_1"} x`,
		`[1,2]`,
		`{"id":"a\q"}`,
		`{"id":"ok","cnt":1}`,
		`{"x":[1,}`,
		`{"id":"unterminated}`,
		`{"cnt":{"a":1}}`,
		`{"cnt":1.0}`,
		`{"id" 1}`,
		`{"id":nul}`,
		`{"id":-}`,
		`{"x":`+strings.Repeat("[", 2000)+strings.Repeat("]", 2000)+`}`,
	)
	checkRows(t, got, "+I[ok, null, 1]\n")
	want := []string{
		`line 1: cannot parse "abc" as DOUBLE for column temperature: "{\"id\":\"sensor_1\",\"temperature\":\"abc\",\"cnt\":3}"`,
		`line 2: cannot parse "true" as INT for column cnt: "{\"id\":\"sensor_1\",\"temperature\":1.5,\"cnt\":true}"`,
		`line 3: expected ',' or '}' at offset 16: "{\"id\":\"sensor_1\""`,
		`line 4: unexpected data after the object at offset 18: "{\"id\":\"sensor_1\"} x"`,
		`line 5: expected a JSON object: "[1,2]"`,
		`line 6: invalid escape "\\q" at offset 8 for column id: "{\"id\":\"a\\q\"}"`,
		`line 8: invalid value at offset 8: "{\"x\":[1,}"`,
		`line 9: unterminated string starting at offset 6 for column id: "{\"id\":\"unterminated}"`,
		`line 10: cannot parse "{\"a\":1}" as INT for column cnt: "{\"cnt\":{\"a\":1}}"`,
		`line 11: cannot parse "1.0" as INT for column cnt: "{\"cnt\":1.0}"`,
		`line 12: expected ':' at offset 6: "{\"id\" 1}"`,
		`line 13: invalid literal at offset 6 for column id: "{\"id\":nul}"`,
		`line 14: invalid number at offset 6 for column id: "{\"id\":-}"`,
	}
	if len(errs) != len(want)+1 {
		t.Fatalf("errors: %v", errs)
	}
	for i, w := range want {
		if errs[i].Error() != w {
			t.Errorf("error %d:\n got %s\nwant %s", i, errs[i], w)
		}
	}
	if !strings.Contains(errs[len(want)].Error(), "nesting too deep") {
		t.Errorf("deep nesting: %v", errs[len(want)])
	}
}

func TestJSONMissingFieldAndIgnore(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newJSON(t, mem, sensors, map[string]string{"json.fail-on-missing-field": "true"})
	defer d.Release()
	got, errs := decodeLines(t, d, `{"id":"a","temperature":1,"cnt":null}`, `{"id":"a","cnt":2}`)
	checkRows(t, got, "+I[a, 1.0, null]\n")
	if len(errs) != 1 || errs[0].Error() != `line 2: missing field for column temperature: "{\"id\":\"a\",\"cnt\":2}"` {
		t.Errorf("errors: %v", errs)
	}

	d2 := newJSON(t, mem, sensors, map[string]string{"json.ignore-parse-errors": "true"})
	defer d2.Release()
	got, errs = decodeLines(t, d2, `{"id":"a"}`, `{"id":1,"cnt":"x"}`, `not json`, `{"cnt":5}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, "+I[a, null, null]\n+I[null, null, 5]\n")
	if d2.Skipped() != 2 {
		t.Errorf("skipped %d", d2.Skipped())
	}

	if _, err := NewDecoder("json", sensors, mem, map[string]string{"json.fail-on-missing-field": "true", "json.ignore-parse-errors": "true"}, nil); err == nil {
		t.Error("both options accepted")
	}
}

func TestJSONFieldNamesAreCaseSensitive(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newJSON(t, mem, sensors, nil)
	defer d.Release()
	got, errs := decodeLines(t, d, `{"ID":"a","cnt":1,"id":"b","Cnt":2}`, `{"c\u006et":7}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, "+I[b, null, 1]\n+I[null, null, 7]\n")
}

func TestRecordEnd(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	csv := newCSV(t, mem, sensors, nil)
	defer csv.Release()
	comments := newCSV(t, mem, sensors, map[string]string{"csv.allow-comments": "true"})
	defer comments.Release()
	js := newJSON(t, mem, sensors, nil)
	defer js.Release()
	for _, tc := range []struct {
		dec  Decoder
		in   string
		want int
	}{
		{csv, "a,1,1\nb,2,2\n", 5},
		{csv, "a,1,1", -1},
		{csv, "\"a\nb\",1,1\nc", 9},
		{csv, "\"a\"\"\n\"\"b\",1,1\n", 13},
		{csv, "a\"b,1\n", 5},    // a quote inside a field opens nothing
		{csv, "x,\"open\n", -1}, // the quoted field goes on
		{csv, "x,\"\"\n", 4},    // an empty quoted field
		{comments, "# it's \"quoted\nx\n", 14},
		{js, `{"a":"x\ny"}` + "\n", 12},
	} {
		if got := tc.dec.RecordEnd([]byte(tc.in)); got != tc.want {
			t.Errorf("RecordEnd(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestJSONExpectedNames reads fields by the name expected next (the columns' order)
// and by lookup otherwise: a name that only starts with the expected one, fields out of
// order, an escaped name, and a column whose name a JSON string must escape.
func TestJSONExpectedNames(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newJSON(t, mem, namedColumns("a", "ab", `q"x`, "é"), nil)
	defer d.Release()
	got, errs := decodeLines(t, d,
		`{"a":"1","ab":"2","q\"x":"3","é":"4"}`,
		`{"ab":"2","a":"1"}`,
		`{"abc":"no","ab":"2"}`,
		`{"a":"1","a":"again","é":"4"}`,
		`{"\u0061":"1","\u0061b":"2"}`,
		`{"é":"4","q\"x":"3","ab":"2","a":"1"}`,
	)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, `+I[1, 2, 3, 4]
+I[1, 2, null, null]
+I[null, 2, null, null]
+I[again, null, null, 4]
+I[1, 2, null, null]
+I[1, 2, 3, 4]
`)
}

// TestJSONExpectedLongNames: names compared as words (up to 16 bytes with the quote)
// and past them, against names that differ in their last byte, and names near the end
// of a record.
func TestJSONExpectedLongNames(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newJSON(t, mem, namedColumns("abcdefg", "abcdefghijklmno", "abcdefghijklmnopq"), nil)
	defer d.Release()
	got, errs := decodeLines(t, d,
		`{"abcdefg":"1","abcdefghijklmno":"2","abcdefghijklmnopq":"3"}`,
		`{"abcdefh":"x","abcdefghijklmnp":"y","abcdefghijklmnopr":"z"}`,
		`{"abcdefgh":"x","abcdefghijklmnoq":"y","abcdefghijklmnopqr":"z"}`,
		`{"abcdefg":"1"}`,
		`{"x":0,"abcdefghijklmno":2}`,
		`{"abcdefg":"1","abcdefghijklmnp":"y"}`,
		`{"abcdefg":"1","abcdefghijklmno":"2","abcdefghijklmnopr":"z"}`,
	)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkRows(t, got, `+I[1, 2, 3]
+I[null, null, null]
+I[null, null, null]
+I[1, null, null]
+I[null, 2, null]
+I[1, null, null]
+I[1, 2, null]
`)
}

// TestTimestampMinuteCache reads timestamps whose minute the column has seen and some
// it has not, and bad ones that share a good one's minute.
func TestTimestampMinuteCache(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := planner.Schema{{Name: "ts", Type: planner.TypeTS}, {Name: "lt", Type: planner.TypeTSLTZ}}
	d, err := NewDecoder("csv", schema, mem, nil, time.FixedZone("UTC+8", 8*3600))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	got, errs := decodeLines(t, d,
		"2015-07-15 00:00:01.100,2015-07-15 08:00:01.100",
		"2015-07-15 00:00:59.999,2015-07-15 08:00:59",
		"2015-07-15 00:00:60,2015-07-15 08:00:00",
		"2015-07-15 00:00:05x,2015-07-15 08:00:00",
		"2015-07-15T00:00:02,2015-07-15 08:00:02Z",
		"2015-07-15 00:01,2015-07-15 08:01",
		"2015-07-15 00:02:00,2015-07-15 08:02:00",
		"2016-02-29 23:59:30.5,2016-02-29 23:59:30.5",
		"2015-07-15 00:00:03,2015-07-15 08:00:03",
	)
	if len(errs) != 2 {
		t.Fatalf("errors %v, want the two bad seconds", errs)
	}
	checkRows(t, got, `+I[2015-07-15 00:00:01.100, 2015-07-15 00:00:01.100]
+I[2015-07-15 00:00:59.999, 2015-07-15 00:00:59.000]
+I[2015-07-15 00:00:02.000, 2015-07-15 08:00:02.000]
+I[2015-07-15 00:01:00.000, 2015-07-15 00:01:00.000]
+I[2015-07-15 00:02:00.000, 2015-07-15 00:02:00.000]
+I[2016-02-29 23:59:30.500, 2016-02-29 15:59:30.500]
+I[2015-07-15 00:00:03.000, 2015-07-15 00:00:03.000]
`)
}

// TestDecodeBatchesOfChangingSize fills builders past the room reserved for them:
// batches of 1, 1000 and 3 rows of strings of growing length, with NULLs.
func TestDecodeBatchesOfChangingSize(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newCSV(t, mem, bidSchema, nil)
	defer d.Release()
	for _, n := range []int{1, 1000, 3} {
		var want strings.Builder
		for i := 0; i < n; i++ {
			s := strings.Repeat("x", i%300)
			line := fmt.Sprintf("%d,,%d,c,%s,2015-07-15 00:00:%02d,", i, i*3, s, i%60)
			if err := d.Decode([]byte(line), int64(i+1)); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&want, "+I[%d, null, %d, c, %s, 2015-07-15 00:00:%02d.000, ]\n", i, i*3, s, i%60)
		}
		rec := d.Flush()
		checkRows(t, render(rec, time.UTC), want.String())
		rec.Release()
	}
}

// TestColumnWritersWithNulls decodes batches of changing size whose columns of every
// kind with a writer hold NULLs from a random row on (or none), into a pool that hands
// out dirty buffers, and checks every value and validity bit: the bitmap that appears
// with the first NULL must keep the rows before it valid.
func TestColumnWritersWithNulls(t *testing.T) {
	schema := planner.Schema{
		{Name: "l", Type: planner.TypeBigInt}, {Name: "i", Type: planner.TypeInt},
		{Name: "d", Type: planner.TypeDouble}, {Name: "s", Type: planner.TypeString},
		{Name: "ts", Type: planner.TypeTS}, {Name: "dt", Type: planner.TypeDate},
		{Name: "y", Type: planner.Type{Kind: planner.Binary}},
	}
	mem := memory.NewCheckedAllocator(&dirtyAllocator{memory.NewGoAllocator()})
	defer mem.AssertSize(t, 0)
	d := newCSV(t, mem, schema, map[string]string{"csv.null-literal": "N"})
	defer d.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 64, 65, 300, 1000, 2, 129} {
		firstNull := make([]int, len(schema)) // per column: the first NULL row, n for none
		for c := range firstNull {
			firstNull[c] = n
			if rng.IntN(3) > 0 {
				firstNull[c] = rng.IntN(n)
			}
		}
		isNull := func(c, r int) bool { return r >= firstNull[c] && (r == firstNull[c] || rng.IntN(3) == 0) }
		var want strings.Builder
		for r := 0; r < n; r++ {
			vals := []string{strconv.Itoa(r * 1001), strconv.Itoa(-r), strconv.Itoa(r) + ".5",
				strings.Repeat("s", r%70), fmt.Sprintf("2015-07-15 00:00:%02d", r%60), "2015-07-15", "eHk="}
			shown := []string{vals[0], vals[1], vals[2], vals[3], vals[4] + ".000", vals[5], "x'7879'"}
			for c := range vals {
				if isNull(c, r) {
					vals[c], shown[c] = "N", "null"
				}
			}
			if err := d.Decode([]byte(strings.Join(vals, ",")), int64(r+1)); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&want, "+I[%s]\n", strings.Join(shown, ", "))
		}
		rec := d.Flush()
		checkRows(t, render(rec, time.UTC), want.String())
		for c, col := range rec.Columns() {
			nulls := 0
			for r := 0; r < n; r++ {
				if col.IsNull(r) {
					nulls++
				}
			}
			if col.NullN() != nulls {
				t.Errorf("batch of %d, column %s: NullN %d, %d nulls", n, schema[c].Name, col.NullN(), nulls)
			}
		}
		rec.Release()
	}
}

// dirtyAllocator hands out buffers full of garbage, as a pool's reused buffers may be.
type dirtyAllocator struct{ memory.Allocator }

func (a *dirtyAllocator) Allocate(size int) []byte {
	b := a.Allocator.Allocate(size)
	for i := range b {
		b[i] = 0xa5
	}
	return b
}

func (a *dirtyAllocator) Reallocate(size int, b []byte) []byte {
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// TestCSVBadRecordsLeaveNoValues: a csv record writes its values as it reads them; a
// bad one (a bad value after NULLs and strings, too many or too few fields, a bad
// quote) takes them back, NULL counts included.
func TestCSVBadRecordsLeaveNoValues(t *testing.T) {
	schema := planner.Schema{
		{Name: "s", Type: planner.TypeString}, {Name: "l", Type: planner.TypeBigInt},
		{Name: "d", Type: planner.TypeDouble}, {Name: "m", Type: planner.DecimalType(10, 2)},
		{Name: "n", Type: planner.TypeInt},
	}
	lines := []string{
		"a,1,1.5,2.25,7",
		"bad,N,N,1,x",
		"long,2,N,1,1,extra",
		"short,N",
		`N,"q"x,N,N,N`,
		"N,N,N,N,N",
		"b,3,N,3.5,N",
		"bad,x,N,1,2", // the columns after the bad one are not read
		"bad,4,N,1,2147483648",
		"c,5,6,N,8",
	}
	for _, ignore := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		d := newCSV(t, mem, schema, map[string]string{"csv.ignore-parse-errors": strconv.FormatBool(ignore), "csv.null-literal": "N"})
		errs := 0
		for i, l := range lines {
			if err := d.Decode([]byte(l), int64(i+1)); err != nil {
				errs++
			}
		}
		if want := map[bool]int{false: 6, true: 0}[ignore]; errs != want || d.Skipped() != int64(6-want) {
			t.Errorf("ignore %v: %d errors, %d skipped", ignore, errs, d.Skipped())
		}
		rec := d.Flush()
		checkRows(t, render(rec, time.UTC), "+I[a, 1, 1.5, 2.25, 7]\n+I[null, null, null, null, null]\n+I[b, 3, null, 3.50, null]\n+I[c, 5, 6.0, null, 8]\n")
		for c, want := range []int{1, 1, 2, 2, 2} {
			if n := rec.Column(c).NullN(); n != want {
				t.Errorf("ignore %v, column %s: %d NULLs, want %d", ignore, schema[c].Name, n, want)
			}
		}
		rec.Release()
		d.Release()
		mem.AssertSize(t, 0)
	}
}
