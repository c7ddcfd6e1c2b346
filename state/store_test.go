package state

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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
