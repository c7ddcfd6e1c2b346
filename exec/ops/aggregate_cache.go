package ops

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/state"
)

// Cache bounds the groups an aggregate keeps in memory. Past MaxGroups, the groups used
// least recently move to a scratch file at SpillPath and come back when their key
// returns; MaxGroups 0 keeps every group in memory.
type Cache struct {
	MaxGroups int
	SpillPath string
}

// spill is an aggregate's groups out of memory.
type spill struct {
	scratch *state.Scratch // opened at the first eviction
	any     bool           // some group may be in the scratch file
	// dirty are the state keys of groups moved out since the last checkpoint with
	// changes it has not written yet; the next snapshot reads them back.
	dirty map[string]struct{}
	keys  [][]byte // scratch for lookups
	seen  map[string]bool
}

// liveGroups is the number of groups in memory.
func (a *aggregate) liveGroups() int { return len(a.rows) - len(a.free) }

// evictIfFull moves the least recently used groups out of memory when there are more
// than the cache holds, down to nine tenths of it so evictions come in rounds. It runs
// between mini-batches, when no group is being changed.
func (a *aggregate) evictIfFull() error {
	limit := a.cache.MaxGroups
	if limit <= 0 || a.liveGroups() <= limit {
		return nil
	}
	if a.spill.scratch == nil {
		s, err := state.OpenScratch(a.cache.SpillPath)
		if err != nil {
			return err
		}
		a.spill.scratch = s
	}
	var live []int32
	for g := range a.rows {
		if a.rows[g] > 0 {
			live = append(live, int32(g))
		}
	}
	slices.SortFunc(live, func(x, y int32) int {
		if a.stamp[x] != a.stamp[y] {
			return int(int64(a.stamp[x]) - int64(a.stamp[y]))
		}
		return int(x - y)
	})
	victims := live[:len(live)-limit*9/10]
	kvs := make([]state.KV, len(victims))
	var buf []byte
	ends := make([]int, 0, 2*len(victims))
	for _, g := range victims {
		buf = a.appendStateKey(buf, g)
		ends = append(ends, len(buf))
		buf = a.appendGroup(buf, g)
		ends = append(ends, len(buf))
	}
	start := 0
	for i, g := range victims {
		kvs[i] = state.KV{Key: buf[start:ends[2*i]], Value: buf[ends[2*i]:ends[2*i+1]]}
		start = ends[2*i+1]
		if a.state != nil && a.dirtyFlag[g] {
			if a.spill.dirty == nil {
				a.spill.dirty = map[string]struct{}{}
			}
			a.spill.dirty[string(kvs[i].Key)] = struct{}{}
		}
		a.forget(g)
	}
	slices.SortFunc(kvs, func(x, y state.KV) int { return bytes.Compare(x.Key, y.Key) })
	if err := a.spill.scratch.Put(kvs); err != nil {
		return fmt.Errorf("aggregate: moving groups out of memory: %w", err)
	}
	a.spill.any = true
	return nil
}

// forget frees a group's slot, without recording a deletion.
func (a *aggregate) forget(g int32) {
	a.groups.remove(a.keys.key(g))
	a.freeGroup(g)
}

// freeGroup gives a group's room back, which no index finds any more.
func (a *aggregate) freeGroup(g int32) {
	a.dirtyFlag[g] = false
	for _, acc := range a.accs {
		acc.reset(g)
	}
	a.rows[g] = 0
	a.free = append(a.free, g)
	if a.emitCtl != nil {
		a.emitCtl.forget(g)
	}
}

// appendStateKey appends a group's key in the store: its key group, then its key values.
func (a *aggregate) appendStateKey(buf []byte, g int32) []byte {
	return encodeKey(binary.BigEndian.AppendUint16(buf, a.kgs[g]), a.keys.key(g))
}

// loadSpilled brings back the groups of rec's keys that were moved out of memory, so
// that assigning rows to groups finds them.
func (a *aggregate) loadSpilled(rec arrow.Record) error {
	if !a.spill.any {
		return nil
	}
	keyReaders, err := readers(rec, a.keyCols, a.keyReaders[:0])
	if err != nil {
		return err
	}
	a.keyReaders = keyReaders
	if a.spill.seen == nil {
		a.spill.seen = map[string]bool{}
	}
	clear(a.spill.seen)
	keys := a.spill.keys[:0]
	for i := 0; i < int(rec.NumRows()); i++ {
		key := a.keyScratch[:0]
		for _, r := range keyReaders {
			key = append(key, r(i))
		}
		a.keyScratch = key
		if _, found := a.groups.find(key, &a.keyBuf); found {
			continue
		}
		sk := encodeKey(binary.BigEndian.AppendUint16(nil, a.keyGroup(rec, i)), key)
		if !a.spill.seen[string(sk)] {
			a.spill.seen[string(sk)] = true
			keys = append(keys, sk)
		}
	}
	a.spill.keys = keys
	if len(keys) == 0 {
		return nil
	}
	return a.spill.scratch.Take(keys, func(i int, v []byte) error {
		_, err := a.loadGroup(keys[i], v)
		return err
	})
}

// loadGroup recreates a group from its state key and value, as encoded by
// appendStateKey and appendGroup.
func (a *aggregate) loadGroup(k, v []byte) (int32, error) {
	if len(k) < 2 {
		return 0, fmt.Errorf("%w: aggregate key too short", state.ErrCorrupt)
	}
	key, err := decodeKey(k[2:], len(a.keyCols))
	if err != nil {
		return 0, err
	}
	var encoded []byte
	if _, ok := a.groups.(*bytesIndex); ok {
		encoded = k[2:]
	}
	g := a.newGroup(key, encoded, binary.BigEndian.Uint16(k))
	a.stored[g] = true
	dec := &decoder{buf: v}
	a.rows[g] = dec.varint()
	for _, i := range a.stateOrder {
		a.accs[i].load(dec, g)
	}
	if a.emitCtl != nil {
		a.emitCtl.loadShown(dec, g, a.stateOrder)
	}
	if _, ok := a.spill.dirty[string(k)]; ok {
		delete(a.spill.dirty, string(k))
		a.dirtyFlag[g] = true
		a.dirty = append(a.dirty, g)
	}
	return g, dec.err
}

// spilledChanges returns the groups moved out of memory with changes since the last
// checkpoint, for the snapshot to write.
func (a *aggregate) spilledChanges() ([]state.KV, error) {
	if len(a.spill.dirty) == 0 {
		return nil, nil
	}
	keys := make([][]byte, 0, len(a.spill.dirty))
	for k := range a.spill.dirty {
		keys = append(keys, []byte(k))
	}
	clear(a.spill.dirty)
	var kvs []state.KV
	err := a.spill.scratch.Get(keys, func(i int, v []byte) error {
		kvs = append(kvs, state.KV{Key: keys[i], Value: bytes.Clone(v)})
		return nil
	})
	return kvs, err
}
