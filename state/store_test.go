package state

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func key(kg int, k string) []byte { return append(KeyPrefix(kg), k...) }

func read(t *testing.T, s *Store, ns string, upTo int64, first, last int) string {
	t.Helper()
	var out []string
	err := s.Read(ns, upTo, first, last, func(k, v []byte) error {
		out = append(out, fmt.Sprintf("%d/%s=%s", int(k[0])<<8|int(k[1]), k[2:], v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestDeltasMergeAndDiscard(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(id int64, d Delta) {
		if _, err := s.WriteDelta("agg", id, d); err != nil {
			t.Fatal(err)
		}
	}
	write(1, Delta{Puts: []KV{{key(3, "a"), []byte("1")}, {key(70, "b"), []byte("1")}}})
	write(2, Delta{Puts: []KV{{key(3, "a"), []byte("2")}}, Deletes: [][]byte{key(70, "b")}})
	write(3, Delta{Puts: []KV{{key(5, "c"), []byte("9")}}}) // never completes

	if got := read(t, s, "agg", 1, 0, 127); got != "3/a=1 70/b=1" {
		t.Errorf("as of 1: %s", got)
	}
	if got := read(t, s, "agg", 2, 0, 127); got != "3/a=2" {
		t.Errorf("as of 2: %s", got)
	}
	if got := read(t, s, "agg", 1, 64, 127); got != "70/b=1" {
		t.Errorf("key groups 64..127 as of 1: %s", got)
	}
	if err := s.Merge(1); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "agg", 2, 0, 127); got != "3/a=2" {
		t.Errorf("as of 2 after merging 1: %s", got)
	}
	if err := s.DiscardAfter(2); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "agg", 10, 0, 127); got != "3/a=2" {
		t.Errorf("delta 3 survived its discard: %s", got)
	}
	if err := s.Merge(2); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "agg", 2, 0, 127); got != "3/a=2" {
		t.Errorf("after merging 2: %s", got)
	}
	if got := read(t, s, "other", 2, 0, 127); got != "" {
		t.Errorf("unknown namespace: %s", got)
	}
}

// TestMergeFoldsSeveralDeltasAtOnce: deltas wait until mergeAfter of them can be folded
// into the base together; every retained checkpoint reads the same before and after,
// and the folded ones are gone.
func TestMergeFoldsSeveralDeltasAtOnce(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[int64]string{}
	for id := int64(1); id <= 2*mergeAfter+1; id++ {
		d := Delta{Puts: []KV{{key(1, "hot"), []byte(fmt.Sprint(id))}, {key(int(id), fmt.Sprint("k", id)), []byte("x")}}}
		if id > 1 {
			d.Deletes = [][]byte{key(int(id-1), fmt.Sprint("k", id-1))}
		}
		if _, err := s.WriteDelta("agg", id, d); err != nil {
			t.Fatal(err)
		}
		want[id] = read(t, s, "agg", id, 0, 127)
		if err := s.Merge(id - 1); err != nil { // the previous checkpoint stays restorable
			t.Fatal(err)
		}
		for r := max(id-1, 1); r <= id; r++ {
			if got := read(t, s, "agg", r, 0, 127); got != want[r] {
				t.Fatalf("after merge up to %d, checkpoint %d reads %s, want %s", id-1, r, got, want[r])
			}
		}
	}
	if got := want[2*mergeAfter+1]; got != fmt.Sprintf("1/hot=%d %d/k%d=x", 2*mergeAfter+1, 2*mergeAfter+1, 2*mergeAfter+1) {
		t.Errorf("final state %s", got)
	}
	deltas := 0
	s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("agg")).ForEachBucket(func(name []byte) error {
			if _, ok := deltaID(name); ok {
				deltas++
			}
			return nil
		})
	})
	if deltas >= mergeAfter+2 {
		t.Errorf("%d deltas left unmerged", deltas)
	}
}

// A key deleted and put again between two checkpoints (a group dropped, then made
// again) is in one delta both ways: it holds the new value.
func TestDeltaPutWinsOverDelete(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.WriteDelta("agg", 1, Delta{Puts: []KV{{key(3, "a"), []byte("1")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteDelta("agg", 2, Delta{Puts: []KV{{key(3, "a"), []byte("2")}}, Deletes: [][]byte{key(3, "a")}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "agg", 2, 0, 127); got != "3/a=2" {
		t.Errorf("as of 2: %q, want 3/a=2", got)
	}
	if err := s.Merge(2); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "agg", 2, 0, 127); got != "3/a=2" {
		t.Errorf("after merging: %q, want 3/a=2", got)
	}
}

// An encoded delta is read as the same changes given as Puts and Deletes would be: its
// last change of a key wins, and the Deletes and Puts after it override it.
func TestEncodedDelta(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.WriteDelta("join", 1, Delta{Puts: []KV{{key(2, "old"), []byte("1")}, {key(9, "gone"), []byte("1")}}}); err != nil {
		t.Fatal(err)
	}
	var d Delta
	d.Encoded.Grow(2, ChangeSize(5, 3)) // the others grow as they are written
	d.Encoded.Put(key(2, "new"), []byte("h"), "t")
	d.Encoded.Put(key(70, "far"), []byte("x"), "")
	d.Encoded.Delete(key(2, "old"))
	d.Encoded.Put(key(2, "new"), []byte("h2"), "t2")
	d.Encoded.Delete(key(9, "gone"))
	d.Puts = []KV{{key(70, "far"), []byte("y")}}
	d.Deletes = [][]byte{key(5, "none")}
	if _, err := s.WriteDelta("join", 2, d); err != nil {
		t.Fatal(err)
	}
	want := "2/new=h2t2 70/far=y"
	if got := read(t, s, "join", 2, 0, 127); got != want {
		t.Errorf("as of 2: %q, want %q", got, want)
	}
	if got := read(t, s, "join", 1, 0, 127); got != "2/old=1 9/gone=1" {
		t.Errorf("as of 1: %q", got)
	}
	if err := s.Merge(2); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "join", 2, 0, 127); got != want {
		t.Errorf("after merging: %q, want %q", got, want)
	}
}

// An encoded delta's room is reused once it is written, and the delta written from it
// before reads as it did.
func TestEncodedDeltaReused(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var e EncodedDelta
	var room *byte // the first delta's buffer
	reused := true
	for id := int64(1); id <= 3; id++ {
		e.Reset()
		e.Grow(4, 2*ChangeSize(3, 2))
		e.Put(key(4, fmt.Sprint("k", id)), []byte("v"), fmt.Sprint(id))
		e.Put(key(4, "all"), []byte("v"), fmt.Sprint(id))
		if room == nil {
			room = &e.groups[4][0]
		}
		reused = reused && &e.groups[4][0] == room
		if _, err := s.WriteDelta("join", id, Delta{Encoded: e}); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, s, "join", 1, 0, 127); got != "4/all=v1 4/k1=v1" {
		t.Errorf("as of 1: %q", got)
	}
	if got := read(t, s, "join", 3, 0, 127); got != "4/all=v3 4/k1=v1 4/k2=v2 4/k3=v3" {
		t.Errorf("as of 3: %q", got)
	}
	if !reused {
		t.Error("the group's room was not kept")
	}
}
