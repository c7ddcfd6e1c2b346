package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func openTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func modelString(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%d/%s=%s", int(k[0])<<8|int(k[1]), k[2:], v))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// wordDiff says which of two space-separated lists' words only one holds.
func wordDiff(got, want string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, s := range strings.Fields(got) {
		g[s] = true
	}
	for _, s := range strings.Fields(want) {
		w[s] = true
	}
	var extra, missing []string
	for s := range g {
		if !w[s] {
			extra = append(extra, s)
		}
	}
	for s := range w {
		if !g[s] {
			missing = append(missing, s)
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	return fmt.Sprintf("%d words, want %d; extra %v, missing %v", len(g), len(w), extra, missing)
}

// layout counts a namespace's runs and deltas.
func layout(t *testing.T, s *Store, ns string) (runs []run, deltas int) {
	t.Helper()
	err := s.db.View(func(tx *bolt.Tx) error {
		top := tx.Bucket([]byte(ns))
		var err error
		if runs, err = readManifest(top); err != nil {
			return err
		}
		deltas = len(deltaNames(top, func(int64) bool { return true }))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return runs, deltas
}

// TestFoldAgreesWithModel writes random checkpoints of puts and deletes, some keys
// changed at every checkpoint and most once, and folds after each one as a job does:
// every retained checkpoint reads what a map holding the same changes holds, runs stay
// few and shrink from the oldest to the newest, and deleted keys leave no trace once
// folded into the oldest run.
func TestFoldAgreesWithModel(t *testing.T) {
	s := openTestStore(t)
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[string]string{}
	want := map[int64]string{}
	next := 0
	const checkpoints = 300
	mostRuns := 0
	for id := int64(1); id <= checkpoints; id++ {
		var d Delta
		hot := string(key(1, "hot"))
		for k := range model { // a delta's deletions are of what keys held before it
			if k != hot && rng.IntN(30) == 0 {
				d.Deletes = append(d.Deletes, []byte(k))
				delete(model, k)
			}
		}
		for range 20 + rng.IntN(200) {
			k := string(key(rng.IntN(8), fmt.Sprint("new", next)))
			next++
			v := fmt.Sprint(id, "-", rng.IntN(1000))
			d.Puts = append(d.Puts, KV{[]byte(k), []byte(v)})
			model[k] = v
		}
		d.Puts = append(d.Puts, KV{[]byte(hot), []byte(fmt.Sprint(id))})
		model[hot] = fmt.Sprint(id)
		if rng.IntN(10) == 0 && id > 1 { // deleted and put again
			for k := range model {
				d.Deletes = append(d.Deletes, []byte(k))
				d.Puts = append(d.Puts, KV{[]byte(k), []byte("again")})
				model[k] = "again"
				break
			}
		}
		if _, err := s.WriteDelta("agg", id, d); err != nil {
			t.Fatal(err)
		}
		want[id] = modelString(model)
		if err := s.Merge(id - 1); err != nil {
			t.Fatal(err)
		}
		for r := max(id-1, 1); r <= id; r++ {
			if got := read(t, s, "agg", r, 0, 127); got != want[r] {
				t.Fatalf("after folding up to %d, checkpoint %d reads %s", id-1, r, wordDiff(got, want[r]))
			}
		}
		runs, deltas := layout(t, s, "agg")
		mostRuns = max(mostRuns, len(runs))
		if deltas > mergeAfter+1 || len(runs) > 7 {
			t.Fatalf("checkpoint %d: %d runs and %d deltas", id, len(runs), deltas)
		}
		for i := 1; i < len(runs); i++ {
			if runs[i].size >= runs[i-1].size {
				t.Fatalf("checkpoint %d: run %d (%d bytes) is not smaller than the one before it (%d bytes)", id, i, runs[i].size, runs[i-1].size)
			}
		}
	}
	if mostRuns < 3 {
		t.Errorf("at most %d runs: the state did not grow enough to keep older runs", mostRuns)
	}
	// Delete everything, then churn a small state: the deletions must reach the oldest
	// run and go, so the runs shrink to about the small state's size.
	runBytes := func() (n int64) {
		runs, _ := layout(t, s, "agg")
		for _, r := range runs {
			n += r.size
		}
		return n
	}
	peak := runBytes()
	var d Delta
	for k := range model {
		d.Deletes = append(d.Deletes, []byte(k))
	}
	clear(model)
	id := int64(checkpoints + 1)
	for ; ; id++ {
		for i := range 100 {
			k := key(i%128, fmt.Sprint("churn", id, "-", i))
			d.Puts = append(d.Puts, KV{k, []byte("c")})
			model[string(k)] = "c"
		}
		if _, err := s.WriteDelta("agg", id, d); err != nil {
			t.Fatal(err)
		}
		if err := s.Merge(id); err != nil {
			t.Fatal(err)
		}
		if got, want := read(t, s, "agg", id, 0, 127), modelString(model); got != want {
			t.Fatalf("churning, checkpoint %d reads %s", id, wordDiff(got, want))
		}
		if runBytes() < peak/10 {
			break
		}
		if id > 3*checkpoints {
			t.Fatalf("after %d checkpoints of churn the runs hold %d bytes, %d at most before", id-checkpoints, runBytes(), peak)
		}
		d = Delta{}
		for k := range model {
			d.Deletes = append(d.Deletes, []byte(k))
		}
		clear(model)
	}
}

// An interrupted fold (a crash between its transactions) leaves the state as it was; the
// next fold deletes what it wrote and folds again.
func TestInterruptedFold(t *testing.T) {
	s := openTestStore(t)
	foldBatch = 1
	defer func() { foldBatch = 64 << 20; foldInterrupt = nil }()
	for id := int64(1); id <= mergeAfter; id++ {
		d := Delta{Puts: []KV{{key(int(id), "k"), []byte(fmt.Sprint(id))}, {key(0, "hot"), []byte(fmt.Sprint(id))}}}
		if _, err := s.WriteDelta("agg", id, d); err != nil {
			t.Fatal(err)
		}
	}
	want := read(t, s, "agg", mergeAfter, 0, 127)
	crash := errors.New("crash")
	calls := 0
	foldInterrupt = func() error {
		if calls++; calls == 3 {
			return crash
		}
		return nil
	}
	if err := s.Merge(mergeAfter); !errors.Is(err, crash) {
		t.Fatalf("merge: %v, want the crash", err)
	}
	if got := read(t, s, "agg", mergeAfter, 0, 127); got != want {
		t.Errorf("after the interrupted fold: %s, want %s", got, want)
	}
	if runs, deltas := layout(t, s, "agg"); len(runs) != 0 || deltas != mergeAfter {
		t.Errorf("after the interrupted fold: %d runs, %d deltas", len(runs), deltas)
	}
	foldInterrupt = nil
	if err := s.Merge(mergeAfter); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "agg", mergeAfter, 0, 127); got != want {
		t.Errorf("after folding again: %s, want %s", got, want)
	}
	if runs, deltas := layout(t, s, "agg"); len(runs) != 1 || deltas != 0 {
		t.Errorf("after folding again: %d runs, %d deltas", len(runs), deltas)
	}
}

// A state file of an earlier version holds a keyed base: it is read under the deltas,
// and folded into the first run that becomes the oldest.
func TestKeyedBaseIsReadAndFolded(t *testing.T) {
	s := openTestStore(t)
	err := s.db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucket([]byte("agg"))
		if err != nil {
			return err
		}
		base, err := top.CreateBucket(baseBucket)
		if err != nil {
			return err
		}
		for _, kv := range []KV{{key(2, "a"), []byte("base")}, {key(2, "b"), []byte("base")}, {key(9, "c"), []byte("base")}} {
			if err := base.Put(kv.Key, sealValue(kv.Key, kv.Value)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= mergeAfter; id++ {
		d := Delta{Puts: []KV{{key(2, "a"), []byte(fmt.Sprint(id))}}}
		if id == 3 {
			d.Deletes = [][]byte{key(9, "c")}
		}
		if _, err := s.WriteDelta("agg", id, d); err != nil {
			t.Fatal(err)
		}
	}
	want := fmt.Sprintf("2/a=%d 2/b=base", mergeAfter)
	if got := read(t, s, "agg", mergeAfter, 0, 127); got != want {
		t.Errorf("before folding: %s, want %s", got, want)
	}
	if err := s.Merge(mergeAfter); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "agg", mergeAfter, 0, 127); got != want {
		t.Errorf("after folding: %s, want %s", got, want)
	}
	s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("agg")).Bucket(baseBucket) != nil {
			t.Error("the keyed base was not folded")
		}
		return nil
	})
}

// A damaged list of runs is an error, never state read without them.
func TestDamagedManifest(t *testing.T) {
	s := openTestStore(t)
	for id := int64(1); id <= mergeAfter; id++ {
		if _, err := s.WriteDelta("agg", id, Delta{Puts: []KV{{key(1, "a"), []byte("x")}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Merge(mergeAfter); err != nil {
		t.Fatal(err)
	}
	s.db.Update(func(tx *bolt.Tx) error {
		top := tx.Bucket([]byte("agg"))
		v := append([]byte(nil), top.Get(manifestKey)...)
		v[3] ^= 1
		return top.Put(manifestKey, v)
	})
	err := s.Read("agg", mergeAfter, 0, 127, func(_, _ []byte) error { return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("read with a damaged manifest: %v, want ErrCorrupt", err)
	}
}

// BenchmarkFoldGrowingState takes 40 checkpoints of a state that grows by 20K rows of
// 100 bytes each, keyed as a regular join keys its rows, folding as a job does. Only the
// folds are timed.
func BenchmarkFoldGrowingState(b *testing.B) {
	value := make([]byte, 100)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := openTestStore(b)
		n := 0
		for id := int64(1); id <= 40; id++ {
			var d Delta
			for range 20000 {
				// A join row's key: its side and key length, a price, a row id.
				k := append(KeyPrefix(int(uint32(n)*2654435761%128)), 2, 8)
				k = binary.BigEndian.AppendUint64(k, uint64(uint32(n)*2654435761%10000))
				d.Puts = append(d.Puts, KV{binary.BigEndian.AppendUint64(k, uint64(n)), value})
				n++
			}
			if _, err := s.WriteDelta("join", id, d); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := s.Merge(id - 1); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
		}
		b.StartTimer() // b.Loop wants it running
	}
}
