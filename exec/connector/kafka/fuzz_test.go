package kafka

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

type spooled struct {
	key, value []byte
	meta       *recordMeta
}

// spoolFile writes recs with the sink's own spool writer and returns the file's bytes
// and the size the sink's state records of it.
func spoolFile(t testing.TB, recs []spooled) ([]byte, int64) {
	sp := &spool{s: &KafkaSink{table: "t"}, dir: t.TempDir(), name: "fuzz", run: "0123456789abcdef"}
	for _, r := range recs {
		if err := sp.write(r.key, r.value, r.meta); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.flush(); err != nil {
		t.Fatal(err)
	}
	sp.open.Close()
	data, err := os.ReadFile(sp.openPath())
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != sp.written {
		t.Fatalf("wrote %d bytes, counted %d", len(data), sp.written)
	}
	return data, sp.written
}

// FuzzSpool reads damaged spool files of the Kafka sink's exactly-once commit, which a
// restored sink produces into its transaction: damage is an error, never a panic, and
// with the size the sink's state records, a file read without error holds exactly the
// records written (a checksum catches a changed byte, the size a file cut short at a
// record's end). Read without a size, as a state of an older version is, it must not
// panic either.
func FuzzSpool(f *testing.F) {
	recs := []spooled{
		{nil, []byte("1,alice"), nil},
		{[]byte("k2"), []byte("2,bob"), nil},
		{[]byte{}, []byte{}, nil},
		{nil, bytes.Repeat([]byte("x"), 300), nil},
	}
	good, size := spoolFile(f, recs)
	first, _ := spoolFile(f, recs[:1])
	f.Add(good)
	f.Add(first)                                                              // cut at a record's end
	f.Add(good[:len(good)-1])                                                 // cut inside the checksum
	f.Add(append(good, 0))                                                    // a record too many
	f.Add([]byte{})                                                           // no record
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}) // a huge key length
	f.Add([]byte{0x80, 0x00, 0x07, '1', ',', 'a', 'l', 'i', 'c', 'e', 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, file []byte) {
		var got []spooled
		collect := func(key, value []byte, _ *recordMeta) error {
			got = append(got, spooled{key, value, nil})
			return nil
		}
		err := readSpool(bytes.NewReader(file), size, false, collect)
		if err == nil && !slices.EqualFunc(got, recs, func(a, b spooled) bool {
			return bytes.Equal(a.key, b.key) && (a.key == nil) == (b.key == nil) && bytes.Equal(a.value, b.value)
		}) {
			t.Fatalf("a damaged spool read without error: %+v", got)
		}
		got = nil
		readSpool(bytes.NewReader(file), -1, false, collect)
	})
}

// FuzzSpoolMeta is FuzzSpool for the spool of a sink with METADATA columns, whose
// records carry a timestamp and headers.
func FuzzSpoolMeta(f *testing.F) {
	recs := []spooled{
		{nil, []byte("1,alice"), &recordMeta{timestamp: 1714979289123, hasTimestamp: true,
			headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t-1")}, {Key: "none"}, {Key: "empty", Value: []byte{}}}}},
		{[]byte("k2"), []byte("2,bob"), &recordMeta{timestamp: -5, hasTimestamp: true}},
		{nil, []byte("3,carol"), &recordMeta{}},
	}
	good, size := spoolFile(f, recs)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append(good, 0))
	f.Add([]byte{})
	same := func(a, b spooled) bool {
		return bytes.Equal(a.key, b.key) && (a.key == nil) == (b.key == nil) && bytes.Equal(a.value, b.value) &&
			a.meta.timestamp == b.meta.timestamp && a.meta.hasTimestamp == b.meta.hasTimestamp &&
			slices.EqualFunc(a.meta.headers, b.meta.headers, func(x, y kgo.RecordHeader) bool {
				return x.Key == y.Key && bytes.Equal(x.Value, y.Value) && (x.Value == nil) == (y.Value == nil)
			})
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		var got []spooled
		collect := func(key, value []byte, m *recordMeta) error {
			if m == nil {
				t.Fatal("a record without its metadata")
			}
			c := *m // valid until collect returns
			got = append(got, spooled{key, value, &c})
			return nil
		}
		err := readSpool(bytes.NewReader(file), size, true, collect)
		if err == nil && !slices.EqualFunc(got, recs, same) {
			t.Fatalf("a damaged spool read without error: %+v", got)
		}
		got = nil
		readSpool(bytes.NewReader(file), -1, true, collect)
	})
}
