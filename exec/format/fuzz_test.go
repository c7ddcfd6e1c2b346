package format

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// fuzzDecode decodes one record into allTypes and checks the outcome: either one row,
// which survives an encode/decode round trip unchanged, or a *ParseError and no row.
func fuzzDecode(t *testing.T, format string, line []byte) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dec, err := NewDecoder(format, allTypes, mem, nil, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Release()
	if n := dec.RecordEnd(line); n >= len(line) || n < -1 {
		t.Fatalf("RecordEnd = %d for %d bytes", n, len(line))
	}
	if err := dec.Decode(line, 7); err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error %T: %v", err, err)
		}
		if pe.Line != 7 || pe.Msg == "" || err.Error() == "" {
			t.Fatalf("bad ParseError %+v", pe)
		}
		if dec.Rows() != 0 {
			t.Fatalf("a failed record left %d rows", dec.Rows())
		}
		return
	}
	rec := dec.Flush()
	if rec == nil {
		return // a blank line
	}
	defer rec.Release()
	if rec.NumRows() != 1 || int(rec.NumCols()) != len(allTypes) {
		t.Fatalf("record %dx%d", rec.NumRows(), rec.NumCols())
	}
	for _, c := range rec.Columns() {
		if c.Len() != 1 {
			t.Fatalf("column of %d rows", c.Len())
		}
	}
	want := render(rec, time.UTC)
	enc, err := NewEncoder(format, allTypes, nil, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	text := enc.AppendRow(nil, exec.Batch{Rec: rec}, 0)
	if end := dec.RecordEnd(text); end != len(text)-1 {
		t.Fatalf("encoded record %q ends at %d", text, end)
	}
	if err := dec.Decode(text[:len(text)-1], 1); err != nil {
		t.Fatalf("re-decoding %q (from %q): %v", text, line, err)
	}
	back := dec.Flush()
	if back == nil {
		t.Fatalf("re-decoding %q gave no row", text)
	}
	defer back.Release()
	if got := render(back, time.UTC); got != want {
		t.Fatalf("round trip of %q via %q:\n got %s\nwant %s", line, text, got, want)
	}
}

func FuzzCSV(f *testing.F) {
	for _, s := range []string{
		"true,1,2,3.5,12.5,hello,2019-01-17 09:43:19,2019-01-17T09:43:19.123,2019-01-17",
		"FALSE, -7 ,9223372036854775807,1e10,-0.005,,1547718199000,0,1970-01-01",
		",,,,,,,,",
		`true,0,0,0,0,"a ""quoted"", field",2019-01-17 09:43:19.5,2019-01-17 09:43:19Z,2000-02-29`,
		"false,1,1,NaN,1,\"multi\nline\",2019-01-17 00:00,1,2019-01-17\r",
		"a,b",
		`"unterminated`,
		"true,2147483648,1,1,99999999.995,x,9999-12-31 23:59:59.999,0000-01-01 00:00,0000-01-01",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { fuzzDecode(t, "csv", line) })
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{
		`{"b":true,"i":1,"l":2,"d":3.5,"m":12.5,"s":"hello","ts":"2019-01-17 09:43:19","lt":"2019-01-17T09:43:19.123Z","dt":"2019-01-17"}`,
		`{"dt":"1970-01-01","s":42,"l":"9223372036854775807","d":"1e10","m":"-0.005","i":" -7 ","b":"FALSE","ts":1547718199000,"lt":0}`,
		`{}`,
		`{"s":"esc \" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \ud800 x","extra":{"a":[1,2,{"b":"}]"}],"c":null},"n":-1.5e-3}`,
		`{"s":{"nested":[1,"two"]},"b":false,"s":null}`,
		`{"id":"sensor_1","ts":1547718199,"temperature":35.8}`,
		`[1,2]`,
		`{"x":[[[[]]]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { fuzzDecode(t, "json", line) })
}

// FuzzChangelog decodes one message of each changelog format into allTypes, for most
// lines with every metadata key of the format too: it is either rows with a kind (and
// metadata) each, or a *ParseError and no row; it never panics.
func FuzzChangelog(f *testing.F) {
	for _, s := range []string{
		`{"before":null,"after":{"i":1,"s":"a"},"op":"c"}`,
		`{"before":{"i":1},"after":{"i":2,"ts":"2019-01-17 09:43:19"},"op":"u"}`,
		`{"schema":{},"payload":{"before":{"i":1},"after":null,"op":"d"}}`,
		`{"data":[{"i":"1"},{"i":"2"}],"old":[{"s":"x"},{}],"type":"UPDATE"}`,
		`{"data":{"i":1},"old":{"b":true},"type":"update"}`,
		`{"data":null,"isDdl":true,"type":"ALTER"}`,
		`{"op":"x"}`,
		`[`,
		`{"after":{"i":1},"op":"r","ts_ms":1,"source":{"ts_ms":"2","db":"d","collection":"c","x":{"y":[1]}}}`,
		`{"data":[{"i":1}],"type":"INSERT","sqlType":{"i":4},"pkNames":["i",null],"ts":1,"es":"2","database":"d"}`,
		`{"data":{"i":1},"type":"insert","ts":1596684904,"primary_key_columns":["i"],"table":"t"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, format := range []string{Debezium, Canal, Maxwell} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			opts := map[string]string{}
			if format == Debezium && len(line) > 0 && line[0]%2 == 0 {
				opts[Debezium+".schema-include"] = "true"
			}
			var dec Decoder
			var err error
			if len(line)%4 == 0 {
				dec, err = NewDecoder(format, allTypes, mem, opts, time.UTC)
			} else {
				var keys []string
				for _, k := range planner.FormatMetadata(format) {
					keys = append(keys, k.Key)
				}
				dec, err = NewMetadataDecoder(format, allTypes, keys, mem, opts, time.UTC)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := dec.Decode(line, 7); err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != 7 || pe.Msg == "" {
					t.Fatalf("%s: error %T: %v", format, err, err)
				}
				if dec.Rows() != 0 {
					t.Fatalf("%s: a failed message left %d rows", format, dec.Rows())
				}
			}
			if rec := dec.Flush(); rec != nil {
				if k := dec.Kinds(); k != nil && len(k) != int(rec.NumRows()) {
					t.Fatalf("%s: %d kinds for %d rows", format, len(k), rec.NumRows())
				}
				rec.Release()
			}
			dec.Release()
			mem.AssertSize(t, 0)
		}
	})
}
