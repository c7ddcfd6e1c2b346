package format

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

// csvText writes n random csv records of the bytes that matter to splitting: quoted
// fields holding delimiters, line breaks and doubled quotes, quotes inside unquoted
// fields, comment lines with quotes, "\r\n" endings, blank lines and a byte-order mark.
func csvText(r *rand.Rand, n int) string {
	pieces := []string{"a", "bc", ",", ",", `"x,y"`, "\"l1\nl2\"", `"say ""hi"""`, `a"b`, `""`, `"`, "#", "\r"}
	var b strings.Builder
	if r.IntN(2) == 0 {
		b.WriteString("\xef\xbb\xbf")
	}
	for range n {
		if r.IntN(6) == 0 {
			b.WriteString(`# a comment, "quoted`)
		} else {
			for range r.IntN(6) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// recordStarts lists where RecordEnd, from the file's start, says records start.
func recordStarts(t *testing.T, d *CSVDecoder, text []byte) []int {
	t.Helper()
	starts := []int{0}
	for at := 0; at < len(text); {
		n := d.RecordEnd(text[at:])
		if n < 0 { // the last record runs to the end
			break
		}
		at += n + 1
		starts = append(starts, at)
	}
	return starts
}

// RecordStarts, reading a file in chunks of any size, finds for every offset the
// first record that starts at or after it, as RecordEnd splits the file from its
// start.
func TestRecordStartsAgreeWithRecordEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	schema := planner.Schema{{Name: "a", Type: planner.TypeString}}
	for _, opts := range []map[string]string{
		{},
		{"csv.allow-comments": "true"},
		{"csv.quote-character": "'", "csv.field-delimiter": ";"},
		{"csv.disable-quote-character": "true", "csv.allow-comments": "true"},
	} {
		o, err := ParseCSVOptions(opts)
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewCSVDecoder(schema, memory.DefaultAllocator, o)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Release()
		for range 40 {
			text := csvText(r, 30)
			if o.QuoteCharacter == '\'' {
				text = strings.NewReplacer(`"`, "'", ",", ";").Replace(text)
			}
			want := recordStarts(t, d, []byte(text))
			for lo := 0; lo <= len(text); lo++ {
				s, err := NewRecordStarts("csv", opts)
				if err != nil {
					t.Fatal(err)
				}
				got := find(s, []byte(text), lo, 1+r.IntN(9))
				i, _ := slices.BinarySearch(want, lo)
				w := len(text)
				if i < len(want) {
					w = want[i]
				}
				if got != w {
					t.Fatalf("options %v, offset %d of %q: record starts at %d, want %d", opts, lo, text, got, w)
				}
			}
		}
	}
}

// find reads text in chunks of size bytes up to lo, then to the first record start.
func find(s *RecordStarts, text []byte, lo, size int) int {
	at := 0
	for at < lo {
		n := min(size, lo-at)
		s.Read(text[at:at+n], false)
		at += n
	}
	if s.AtStart() {
		return at
	}
	for at < len(text) {
		n := min(size, len(text)-at)
		if i := s.Read(text[at:at+n], true); i >= 0 {
			return at + i
		}
		at += n
	}
	return len(text)
}
