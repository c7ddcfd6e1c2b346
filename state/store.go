package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Store is a job's keyed state: one bbolt file. Its methods are safe for concurrent use
// (bbolt serializes writers).
type Store struct {
	db *bolt.DB
}

// Open opens (creating it if needed) the state file at path.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o644, &bolt.Options{
		Timeout: 5 * time.Second,
		// Map a large range up front: growing the map mid-transaction makes bbolt copy
		// every key it holds in memory, which dominated checkpoint time.
		InitialMmapSize: 1 << 30,
		FreelistType:    bolt.FreelistMapType,
		NoFreelistSync:  true,
	})
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Layout: one top-level bucket per namespace, holding a "base" bucket and one bucket per
// delta, named "d" + the checkpoint id (8 bytes, big-endian, so deltas sort by id). A
// delta value starts with a marker byte: put or delete.
var baseBucket = []byte("base")

const (
	markPut    = 1
	markDelete = 0
)

func deltaName(id int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{'d'}, uint64(id))
}

func deltaID(name []byte) (int64, bool) {
	if len(name) != 9 || name[0] != 'd' {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(name[1:])), true
}

// Delta is the change of one namespace's state at one checkpoint: keys put with their
// values, and keys deleted. Keys begin with their key group (KeyPrefix).
type Delta struct {
	Puts    []KV
	Deletes [][]byte
}

// KV is a key and its value.
type KV struct{ Key, Value []byte }

// KeyPrefix is the first two bytes of every key: its key group, so a task can read just
// the key groups it owns.
func KeyPrefix(keyGroup int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(keyGroup)) }

// WriteDelta stores namespace ns's changes at checkpoint id durably (bbolt syncs on
// commit) and returns the bytes written.
func (s *Store) WriteDelta(ns string, id int64, d Delta) (int64, error) {
	var written int64
	err := s.db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucketIfNotExists([]byte(ns))
		if err != nil {
			return err
		}
		b, err := top.CreateBucketIfNotExists(deltaName(id))
		if err != nil {
			return err
		}
		// Keys go in sorted: bbolt inserts into a page in place, so random order within one
		// large transaction costs quadratic copying.
		entries := make([]KV, 0, len(d.Puts)+len(d.Deletes))
		size := 0
		for _, kv := range d.Puts {
			size += 1 + len(kv.Value)
		}
		marked := make([]byte, 0, size) // each value behind its marker, in one allocation
		for _, kv := range d.Puts {
			start := len(marked)
			marked = append(append(marked, markPut), kv.Value...)
			entries = append(entries, KV{Key: kv.Key, Value: marked[start:]})
		}
		for _, k := range d.Deletes {
			entries = append(entries, KV{Key: k, Value: []byte{markDelete}})
		}
		slices.SortFunc(entries, func(a, b KV) int { return bytes.Compare(a.Key, b.Key) })
		for _, e := range entries {
			if err := b.Put(e.Key, e.Value); err != nil {
				return err
			}
			written += int64(len(e.Key) + len(e.Value))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("state %s checkpoint %d: %w", ns, id, err)
	}
	return written, nil
}

// Read calls fn for every key of namespace ns in the key groups [firstKG, lastKG], as
// of checkpoint upTo: the base with the deltas up to upTo applied in order. The slices
// passed to fn are valid during the call only.
func (s *Store) Read(ns string, upTo int64, firstKG, lastKG int, fn func(key, value []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		top := tx.Bucket([]byte(ns))
		if top == nil {
			return nil
		}
		from, to := KeyPrefix(firstKG), KeyPrefix(lastKG+1)
		inRange := func(b *bolt.Bucket, apply func(k, v []byte) error) error {
			c := b.Cursor()
			for k, v := c.Seek(from); k != nil && (lastKG+1 > 0xffff || bytes.Compare(k, to) < 0); k, v = c.Next() {
				if err := apply(k, v); err != nil {
					return err
				}
			}
			return nil
		}
		// The deltas are small next to the base: fold them into a map first, then stream
		// the base, letting the map override it.
		changed := map[string][]byte{} // nil value: deleted
		err := top.ForEachBucket(func(name []byte) error {
			id, ok := deltaID(name)
			if !ok || id > upTo {
				return nil
			}
			return inRange(top.Bucket(name), func(k, v []byte) error {
				if len(v) > 0 && v[0] == markPut {
					changed[string(k)] = bytes.Clone(v[1:])
				} else {
					changed[string(k)] = nil
				}
				return nil
			})
		})
		if err != nil {
			return err
		}
		if base := top.Bucket(baseBucket); base != nil {
			err := inRange(base, func(k, v []byte) error {
				if _, ok := changed[string(k)]; ok {
					return nil
				}
				return fn(k, v)
			})
			if err != nil {
				return err
			}
		}
		for k, v := range changed {
			if v != nil {
				if err := fn([]byte(k), v); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Merge folds the deltas of checkpoints up to id into the base of every namespace:
// checkpoint id and later ones stay restorable, earlier ones no longer are.
func (s *Store) Merge(id int64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.ForEach(func(ns []byte, top *bolt.Bucket) error {
			var merge [][]byte
			err := top.ForEachBucket(func(name []byte) error {
				if d, ok := deltaID(name); ok && d <= id {
					merge = append(merge, bytes.Clone(name))
				}
				return nil
			})
			if err != nil || len(merge) == 0 {
				return err
			}
			base, err := top.CreateBucketIfNotExists(baseBucket)
			if err != nil {
				return err
			}
			for _, name := range merge { // in id order: bucket names sort by id
				err := top.Bucket(name).ForEach(func(k, v []byte) error {
					if len(v) > 0 && v[0] == markPut {
						return base.Put(k, bytes.Clone(v[1:]))
					}
					return base.Delete(k)
				})
				if err != nil {
					return err
				}
				if err := top.DeleteBucket(name); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// DiscardAfter deletes the deltas of checkpoints after id, which never completed: a
// restore from id must not see them, and neither may later checkpoints.
func (s *Store) DiscardAfter(id int64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.ForEach(func(ns []byte, top *bolt.Bucket) error {
			var drop [][]byte
			top.ForEachBucket(func(name []byte) error {
				if d, ok := deltaID(name); ok && d > id {
					drop = append(drop, bytes.Clone(name))
				}
				return nil
			})
			for _, name := range drop {
				if err := top.DeleteBucket(name); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// Reset deletes all state: a job starting from nothing.
func (s *Store) Reset() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		var names [][]byte
		tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			names = append(names, bytes.Clone(name))
			return nil
		})
		for _, n := range names {
			if err := tx.DeleteBucket(n); err != nil {
				return err
			}
		}
		return nil
	})
}

// ErrCorrupt says stored state could not be decoded.
var ErrCorrupt = errors.New("corrupt state")
