package format

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// rawRoundTrip decodes records with a raw decoder of one column of type typ, prints the
// rows, and encodes them back.
func rawRoundTrip(t *testing.T, typ planner.Type, opts map[string]string, records ...string) (string, []string, []error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := planner.Schema{{Name: "v", Type: typ}}
	dec, err := NewDecoder(Raw, schema, mem, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Release()
	var errs []error
	for i, r := range records {
		if err := dec.Decode([]byte(r), int64(i+1)); err != nil {
			errs = append(errs, err)
		}
	}
	rec := dec.Flush()
	if rec == nil {
		return "", nil, errs
	}
	defer rec.Release()
	b := exec.Batch{Rec: rec}
	enc, err := NewEncoder(Raw, namedColumns("v"), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	var back []string
	for i := range b.Len() {
		back = append(back, strings.TrimSuffix(string(enc.AppendRow(nil, b, i)), "\n"))
	}
	return string(AppendRows(nil, NewChangelogEncoder("", time.UTC), b)), back, errs
}

func TestRawNumbers(t *testing.T) {
	got, back, errs := rawRoundTrip(t, planner.TypeInt, nil, "\x00\x00\x01\x02", "\xff\xff\xff\xfe", "\x01\x02")
	if len(errs) != 1 || errs[0].Error() != `line 3: a raw INT is 4 bytes, the record has 2 for column v: "\x01\x02"` {
		t.Errorf("errors %v", errs)
	}
	checkRows(t, got, "+I[258]\n+I[-2]\n")
	if strings.Join(back, "|") != "\x00\x00\x01\x02|\xff\xff\xff\xfe" {
		t.Errorf("encoded back %q", back)
	}
	got, back, _ = rawRoundTrip(t, planner.TypeBigInt, map[string]string{"raw.endianness": "little-endian"}, "\x02\x01\x00\x00\x00\x00\x00\x00")
	checkRows(t, got, "+I[258]\n")
	if back[0] != "\x02\x01\x00\x00\x00\x00\x00\x00" {
		t.Errorf("encoded back %q", back)
	}
	got, _, _ = rawRoundTrip(t, planner.TypeDouble, nil, "\x3f\xf8\x00\x00\x00\x00\x00\x00")
	checkRows(t, got, "+I[1.5]\n")
	got, _, _ = rawRoundTrip(t, planner.TypeBoolean, nil, "\x01", "\x00")
	checkRows(t, got, "+I[true]\n+I[false]\n")
}

func TestRawText(t *testing.T) {
	got, back, _ := rawRoundTrip(t, planner.TypeString, nil, "héllo, \"world\"", "")
	checkRows(t, got, "+I[héllo, \"world\"]\n+I[]\n")
	if back[0] != "héllo, \"world\"" {
		t.Errorf("encoded back %q", back)
	}
	got, back, _ = rawRoundTrip(t, planner.TypeString, map[string]string{"raw.charset": "ISO-8859-1"}, "caf\xe9")
	checkRows(t, got, "+I[café]\n")
	if back[0] != "caf\xe9" {
		t.Errorf("latin-1 encoded back %q", back)
	}
	got, _, _ = rawRoundTrip(t, planner.Type{Kind: planner.Binary}, nil, "\x00\xff")
	checkRows(t, got, "+I[x'00ff']\n")
}

func TestRawOptions(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, c := range []struct {
		schema planner.Schema
		opts   map[string]string
		want   string
	}{
		{planner.Schema{{Name: "a", Type: planner.TypeString}, {Name: "b", Type: planner.TypeString}}, nil,
			"format raw needs exactly one physical column, the table has 2"},
		{planner.Schema{{Name: "d", Type: planner.TypeDate}}, nil,
			"format raw cannot read column d of type DATE (it reads STRING, BYTES, BOOLEAN and the integer and floating-point types)"},
		{planner.Schema{{Name: "s", Type: planner.TypeString}}, map[string]string{"raw.charset": "EBCDIC"},
			`option 'raw.charset' must be 'UTF-8', 'ISO-8859-1' or 'US-ASCII', got "EBCDIC"`},
		{planner.Schema{{Name: "s", Type: planner.TypeInt}}, map[string]string{"raw.endianness": "middle"},
			`option 'raw.endianness' must be 'big-endian' or 'little-endian', got "middle"`},
	} {
		if _, err := NewDecoder(Raw, c.schema, mem, c.opts, nil); err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}
