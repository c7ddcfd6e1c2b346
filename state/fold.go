package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// A namespace's state is a stack of layers, oldest first: runs, then deltas. A delta is
// one checkpoint's changes; a run is the changes of several checkpoints folded together,
// stored as a delta is (one entry per key group) but sorted (see compare), one change a
// key.
//
// The runs are a size-tiered log-structured merge: once mergeAfter deltas may be folded,
// they become a run, together with each run before them that is no larger than what is
// folded into it, as a binary counter carries. Runs so shrink geometrically from the
// oldest to the newest, and a key is rewritten a logarithmic number of times however
// large the state grows.
// (Folding every delta into one keyed bbolt bucket instead cost a B+tree update per key
// and rewrote the whole bucket at each fold once it was large: 62% of q20's CPU with a
// checkpoint a second.) Only a fold into the oldest layer drops deletions, since no older
// layer is left whose keys they hide.
//
// A fold writes its run in several transactions, so that it never holds the whole run in
// memory, and only its last one lists the run in the namespace's manifest and deletes
// what it folded: a run the manifest does not list is the remnant of an interrupted fold,
// never read, and deleted by the next fold.
const mergeAfter = 8

var (
	manifestKey = []byte("runs")
	// baseBucket is the keyed bucket earlier versions folded deltas into: read as the
	// oldest layer, and folded into a run the first time the oldest run is folded.
	baseBucket = []byte("base")
)

// foldBatch is how many bytes of a run a transaction writes before it commits.
var foldBatch = 64 << 20

func runName(id int64) []byte { return binary.BigEndian.AppendUint64([]byte{'r'}, uint64(id)) }

func deltaName(id int64) []byte { return binary.BigEndian.AppendUint64([]byte{'d'}, uint64(id)) }

func deltaID(name []byte) (int64, bool) {
	if len(name) != 9 || name[0] != 'd' {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(name[1:])), true
}

// deltaNames returns the names of the delta buckets in top whose checkpoint id keep
// accepts, in id order (bucket names sort by id).
func deltaNames(top *bolt.Bucket, keep func(id int64) bool) [][]byte {
	var names [][]byte
	top.ForEachBucket(func(name []byte) error {
		if id, ok := deltaID(name); ok && keep(id) {
			names = append(names, bytes.Clone(name))
		}
		return nil
	})
	return names
}

// run is an entry of a namespace's manifest: the newest checkpoint a run holds, which
// names it, and its size in bytes.
type run struct{ id, size int64 }

func readManifest(top *bolt.Bucket) ([]run, error) {
	stored := top.Get(manifestKey)
	if stored == nil {
		return nil, nil
	}
	data, err := openValue(manifestKey, stored)
	if err != nil || len(data)%16 != 0 {
		return nil, fmt.Errorf("%w: the list of folded checkpoints is damaged", ErrCorrupt)
	}
	runs := make([]run, len(data)/16)
	for i := range runs {
		runs[i] = run{int64(binary.BigEndian.Uint64(data[16*i:])), int64(binary.BigEndian.Uint64(data[16*i+8:]))}
	}
	return runs, nil
}

func writeManifest(top *bolt.Bucket, runs []run) error {
	if len(runs) == 0 {
		return top.Delete(manifestKey)
	}
	var data []byte
	for _, r := range runs {
		data = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(data, uint64(r.id)), uint64(r.size))
	}
	return top.Put(manifestKey, sealValue(manifestKey, data))
}

// layer is one layer of a namespace opened in a transaction.
type layer struct {
	b     *bolt.Bucket
	keyed bool // baseBucket: one bbolt key per key
}

// layers opens a namespace's layers, oldest first: the base, the runs of its manifest,
// then the deltas up to checkpoint upTo.
func layers(top *bolt.Bucket, upTo int64) ([]layer, error) {
	var ls []layer
	if b := top.Bucket(baseBucket); b != nil {
		ls = append(ls, layer{b, true})
	}
	runs, err := readManifest(top)
	if err != nil {
		return nil, err
	}
	return appendLayers(ls, top, runs, deltaNames(top, func(id int64) bool { return id <= upTo }))
}

// appendLayers appends the layers of runs, then of deltas, to ls.
func appendLayers(ls []layer, top *bolt.Bucket, runs []run, deltas [][]byte) ([]layer, error) {
	for _, r := range runs {
		b := top.Bucket(runName(r.id))
		if b == nil {
			return nil, fmt.Errorf("%w: the state folded up to checkpoint %d is missing", ErrCorrupt, r.id)
		}
		ls = append(ls, layer{b: b})
	}
	for _, name := range deltas {
		ls = append(ls, layer{b: top.Bucket(name)})
	}
	return ls, nil
}

// change is one key's put or deletion; its slices point into the transaction's pages.
// head is the key's last 8 bytes (after its key group), so that most comparisons are of
// integers: the order of changes need not be the keys' byte order, only the same in
// every layer, and keys end in what tells them apart (a join row's id, an integer key's
// low bytes). seq is the change's place in its layer.
type change struct {
	key, value []byte
	head       uint64
	seq        int32
	put        bool
}

func newChange(key, value []byte, put bool, seq int) change {
	var head [8]byte
	if len(key) > 2 {
		tail := key[max(2, len(key)-8):]
		copy(head[8-len(tail):], tail)
	}
	return change{key, value, binary.BigEndian.Uint64(head[:]), int32(seq), put}
}

// compare orders the changes of one key group by head and key, then by their place.
func compare(a, b change) int {
	if a.head != b.head {
		if a.head < b.head {
			return -1
		}
		return 1
	}
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c
	}
	return int(a.seq - b.seq)
}

// before says whether a's key comes before b's, in compare's order.
func before(a, b change) bool {
	if a.head != b.head {
		return a.head < b.head
	}
	return bytes.Compare(a.key, b.key) < 0
}

// group appends to dst the layer's changes of one key group, sorted (see compare) and one
// per key (the last, for a delta that holds a key twice), and returns them with their
// encoded size.
func (l layer) group(prefix []byte, dst []change) ([]change, int, error) {
	start, size := len(dst), 0
	if l.keyed {
		c := l.b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			v, err := openValue(k, v)
			if err != nil {
				return nil, 0, err
			}
			dst = append(dst, newChange(k, v, true, 0))
			size += changeSize(k, v, true)
		}
	} else if stored := l.b.Get(prefix); stored != nil {
		data, err := openValue(prefix, stored)
		if err != nil {
			return nil, 0, err
		}
		err = forEachChange(data, func(k, v []byte) error {
			dst = append(dst, newChange(k, v, v != nil, len(dst)-start))
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
		size = len(data)
	}
	if cs := dst[start:]; !slices.IsSortedFunc(cs, compare) {
		slices.SortFunc(cs, compare)
	}
	// Keep the last change of each key: a delta's deletion comes before its put.
	out := start
	for i := start; i < len(dst); i++ {
		if i+1 < len(dst) && dst[i].head == dst[i+1].head && bytes.Equal(dst[i].key, dst[i+1].key) {
			continue
		}
		dst[out] = dst[i]
		out++
	}
	return dst[:out], size, nil
}

// groupChanges reads one key group of every layer into scratch, one slice per layer.
func groupChanges(ls []layer, prefix []byte, scratch [][]change) ([][]change, int, error) {
	for len(scratch) < len(ls) {
		scratch = append(scratch, nil)
	}
	scratch = scratch[:len(ls)]
	total := 0
	for i, l := range ls {
		cs, n, err := l.group(prefix, scratch[i][:0])
		if err != nil {
			return nil, 0, err
		}
		scratch[i], total = cs, total+n
	}
	return scratch, total, nil
}

// mergeChanges calls emit for every key of the layers' changes, in their order, with its
// change in the newest layer holding it. A layer whose next key is below every other
// layer's is emitted from without comparing again, so that merging a large run with
// small ones costs about one comparison per key.
func mergeChanges(layers [][]change, emit func(change) error) error {
	heads := slices.Clone(layers)
	for {
		lo := -1 // the layer with the smallest next key, the newest of equal ones
		for i, h := range heads {
			if len(h) > 0 && (lo < 0 || !before(heads[lo][0], h[0])) {
				lo = i
			}
		}
		if lo < 0 {
			return nil
		}
		first := heads[lo][0]
		if err := emit(first); err != nil {
			return err
		}
		var next *change // the smallest next change of the other layers
		for i, h := range heads {
			if len(h) > 0 && h[0].head == first.head && bytes.Equal(h[0].key, first.key) {
				heads[i] = h[1:]
			}
			if i != lo && len(heads[i]) > 0 && (next == nil || before(heads[i][0], *next)) {
				next = &heads[i][0]
			}
		}
		for h := heads[lo]; len(h) > 0 && (next == nil || before(h[0], *next)); h = heads[lo] {
			if err := emit(h[0]); err != nil {
				return err
			}
			heads[lo] = h[1:]
		}
	}
}

// Read calls fn for every key of namespace ns in the key groups [firstKG, lastKG], as
// of checkpoint upTo: the runs with the deltas up to upTo applied in order, key group by
// key group (in no set order within one). The slices passed to fn are valid during the
// call only.
func (s *Store) Read(ns string, upTo int64, firstKG, lastKG int, fn func(key, value []byte) error) error {
	return guard(s.path, func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			top := tx.Bucket([]byte(ns))
			if top == nil {
				return nil
			}
			ls, err := layers(top, upTo)
			if err != nil {
				return err
			}
			var scratch [][]change
			for kg := firstKG; kg <= lastKG; kg++ {
				if scratch, _, err = groupChanges(ls, KeyPrefix(kg), scratch); err != nil {
					return err
				}
				err := mergeChanges(scratch, func(c change) error {
					if !c.put {
						return nil
					}
					return fn(c.key, c.value)
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// Merge allows the deltas of checkpoints up to id to be folded: checkpoint id and later
// ones stay restorable, earlier ones may not. Each namespace folds them once mergeAfter
// have accumulated (see the top of this file).
func (s *Store) Merge(id int64) error {
	s.folding.Lock()
	defer s.folding.Unlock()
	var folds []fold
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(ns []byte, top *bolt.Bucket) error {
			if bytes.Equal(ns, metaBucket) {
				return nil
			}
			f, err := planFold(top, id)
			if err == nil && f != nil {
				f.ns = bytes.Clone(ns)
				folds = append(folds, *f)
			}
			return err
		})
	})
	if err != nil {
		return err
	}
	for _, f := range folds {
		if err := s.fold(f); err != nil {
			return fmt.Errorf("state %s: folding checkpoints up to %d: %w", f.ns, id, err)
		}
	}
	return nil
}

// A fold folds the newest layers of a namespace into one run.
type fold struct {
	ns     []byte
	keep   []run    // the runs left as they are, oldest first
	runs   []run    // the runs folded
	deltas [][]byte // the deltas folded
	base   bool     // the keyed base is folded too
	into   int64    // the run made: the newest checkpoint folded
}

// final says whether the fold makes the oldest layer, so drops deletions.
func (f *fold) final() bool { return len(f.keep) == 0 }

func planFold(top *bolt.Bucket, upTo int64) (*fold, error) {
	deltas := deltaNames(top, func(id int64) bool { return id <= upTo })
	if len(deltas) < mergeAfter {
		return nil, nil
	}
	runs, err := readManifest(top)
	if err != nil {
		return nil, err
	}
	var size int64
	for _, name := range deltas {
		top.Bucket(name).ForEach(func(_, v []byte) error {
			size += int64(len(v))
			return nil
		})
	}
	i := len(runs)
	for i > 0 && size >= runs[i-1].size {
		i--
		size += runs[i].size
	}
	last, _ := deltaID(deltas[len(deltas)-1])
	f := &fold{keep: runs[:i], runs: runs[i:], deltas: deltas, into: last}
	f.base = i == 0 && top.Bucket(baseBucket) != nil
	return f, nil
}

// fold writes f's run key group by key group, committing every foldBatch bytes, and in
// its last transaction lists the run and deletes what it folded.
func (s *Store) fold(f fold) error {
	var groups [][]byte // the key groups of the folded layers, in order
	var size int64
	var scratch [][]change
	for next, first := 0, true; first || next < len(groups); first = false {
		err := s.db.Update(func(tx *bolt.Tx) error {
			top := tx.Bucket(f.ns)
			ls, err := f.layers(top)
			if err != nil {
				return err
			}
			if first {
				if err := deleteUnlisted(top, slices.Concat(f.keep, f.runs)); err != nil {
					return err
				}
				groups = keyGroups(ls)
			}
			out, err := top.CreateBucketIfNotExists(runName(f.into))
			if err != nil {
				return err
			}
			for written := 0; next < len(groups) && written < foldBatch; next++ {
				var total int
				if scratch, total, err = groupChanges(ls, groups[next], scratch); err != nil {
					return err
				}
				enc := make([]byte, 0, total+checksumSize)
				err := mergeChanges(scratch, func(c change) error {
					if c.put || !f.final() {
						enc = appendChange(enc, c.key, c.value, c.put)
					}
					return nil
				})
				if err != nil {
					return err
				}
				if len(enc) == 0 {
					continue
				}
				sealed := binary.BigEndian.AppendUint32(enc, checksum(groups[next], enc))
				if err := out.Put(groups[next], sealed); err != nil {
					return err
				}
				written += len(sealed)
				size += int64(len(sealed))
			}
			if next < len(groups) {
				return nil
			}
			return f.finish(top, size)
		})
		if err != nil {
			return err
		}
		if next < len(groups) && foldInterrupt != nil {
			if err := foldInterrupt(); err != nil {
				return err
			}
		}
	}
	return nil
}

// foldInterrupt, set by tests, runs between a fold's transactions.
var foldInterrupt func() error

// layers opens the layers f folds, oldest first.
func (f *fold) layers(top *bolt.Bucket) ([]layer, error) {
	var ls []layer
	if f.base {
		ls = append(ls, layer{top.Bucket(baseBucket), true})
	}
	return appendLayers(ls, top, f.runs, f.deltas)
}

// finish lists f's run in place of what it folded, and deletes that.
func (f *fold) finish(top *bolt.Bucket, size int64) error {
	if err := writeManifest(top, append(slices.Clone(f.keep), run{f.into, size})); err != nil {
		return err
	}
	for _, r := range f.runs {
		if err := top.DeleteBucket(runName(r.id)); err != nil {
			return err
		}
	}
	for _, name := range f.deltas {
		if err := top.DeleteBucket(name); err != nil {
			return err
		}
	}
	if f.base {
		return top.DeleteBucket(baseBucket)
	}
	return nil
}

// deleteUnlisted deletes the runs of top not in listed: remnants of interrupted folds.
func deleteUnlisted(top *bolt.Bucket, listed []run) error {
	var stale [][]byte
	top.ForEachBucket(func(name []byte) error {
		if len(name) == 9 && name[0] == 'r' && !slices.ContainsFunc(listed, func(r run) bool { return bytes.Equal(runName(r.id), name) }) {
			stale = append(stale, bytes.Clone(name))
		}
		return nil
	})
	for _, name := range stale {
		if err := top.DeleteBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// keyGroups returns the key groups the layers hold, in order.
func keyGroups(ls []layer) [][]byte {
	seen := map[string]bool{}
	for _, l := range ls {
		c := l.b.Cursor()
		for k, _ := c.First(); k != nil; {
			if len(k) < 2 {
				k, _ = c.Next()
				continue
			}
			seen[string(k[:2])] = true
			if !l.keyed {
				k, _ = c.Next()
				continue
			}
			after := binary.BigEndian.Uint16(k) + 1 // the base: skip to the next group
			if after == 0 {
				break
			}
			k, _ = c.Seek(binary.BigEndian.AppendUint16(nil, after))
		}
	}
	groups := make([][]byte, 0, len(seen))
	for g := range seen {
		groups = append(groups, []byte(g))
	}
	slices.SortFunc(groups, bytes.Compare)
	return groups
}
