package state

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Store is a job's keyed state: one bbolt file. Its methods are safe for concurrent use
// (bbolt serializes writers).
type Store struct {
	db      *bolt.DB
	path    string
	id      string
	folding sync.Mutex // one Merge at a time: a fold spans transactions
}

// Open opens (creating it if needed) the state file at path. A file that is not a
// sound bbolt file is reported as ErrCorrupt, never a crash: the open and a consistency
// check run with faults turned into errors.
func Open(path string) (*Store, error) {
	if err := verify(path); err != nil {
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         5 * time.Second,
		InitialMmapSize: initialMmapSize(),
		FreelistType:    bolt.FreelistMapType,
		NoFreelistSync:  true,
	})
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	st := &Store{db: db, path: path}
	if err := st.initMeta(); err != nil {
		db.Close()
		return nil, err
	}
	return st, nil
}

// initialMmapSize is the range a state file maps up front: growing the map mid-transaction
// makes bbolt copy every key the transaction holds in memory, which dominated checkpoint
// time (past 1 GB, 4% of q9's CPU). On 64-bit Unix it is address space only; Windows
// would grow the file to it.
func initialMmapSize() int {
	if runtime.GOOS == "windows" {
		return 1 << 30
	}
	return min(math.MaxInt/2, 16<<30)
}

// verify checks an existing state file before it is opened for writing, since bbolt
// reads its pages in goroutines of its own there, where a damaged page would crash the
// process: read-only, it touches every page in this goroutine, where faults and bbolt's
// assertions become ErrCorrupt, then runs bbolt's own consistency check.
func verify(path string) error {
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		return nil // a new file; an emptied one is new too, and checkpoints say it is not theirs
	}
	return guard(path, func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		defer db.Close()
		return db.View(func(tx *bolt.Tx) error {
			if err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) }); err != nil {
				return err
			}
			var errs []error
			for err := range tx.Check() {
				errs = append(errs, err)
			}
			if len(errs) > 0 {
				return fmt.Errorf("%w: %v", ErrCorrupt, errs[0])
			}
			return nil
		})
	})
}

// walk reads every key and value of b and its nested buckets.
func walk(b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				return walk(nested)
			}
			return nil
		}
		if len(v) > 0 {
			touched ^= v[len(v)-1] // the value's last page, an overflow page for a large one
		}
		return nil
	})
}

var touched byte

// guard runs fn with memory faults (a truncated mapped file) and bbolt's panics on
// damaged pages turned into ErrCorrupt.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the file %s is damaged (%v)", ErrCorrupt, path, r)
		}
	}()
	return fn()
}

// The meta bucket records the store's identity, a random id made when the file is
// created, and the newest checkpoint whose state it holds completely (Seal). Checkpoint
// metadata names both, so a deleted, emptied, replaced or older file is detected.
var (
	metaBucket = []byte("\x00meta")
	keyID      = []byte("id")
	keySealed  = []byte("sealed")
)

func (s *Store) initMeta() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		if id := b.Get(keyID); id != nil {
			s.id = string(id)
			return nil
		}
		var r [12]byte
		if _, err := rand.Read(r[:]); err != nil {
			return err
		}
		s.id = hex.EncodeToString(r[:])
		return b.Put(keyID, []byte(s.id))
	})
}

// ID is the store's identity.
func (s *Store) ID() string { return s.id }

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Seal records that the store holds all the state of checkpoint id (every delta of it
// is written); it is synced before the checkpoint's metadata names the store.
func (s *Store) Seal(id int64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(metaBucket).Put(keySealed, binary.BigEndian.AppendUint64(nil, uint64(id)))
	})
}

// Sealed is the newest checkpoint sealed, 0 if none.
func (s *Store) Sealed() int64 {
	var id int64
	s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(metaBucket).Get(keySealed); len(v) == 8 {
			id = int64(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	return id
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Layout: one top-level bucket per namespace, holding one bucket per delta, named "d" +
// the checkpoint id (8 bytes, big-endian, so deltas sort by id), and the runs deltas are
// folded into (see fold.go). A delta holds one entry per key group it changed, keyed by
// KeyPrefix: the group's changes encoded one after another (see appendChange). Writing a
// checkpoint thus costs a handful of large puts, not one per key.

const (
	markPut    = 1
	markDelete = 0
)

// appendChange encodes a put (value != nil) or a delete of key.
func appendChange(dst, key, value []byte, put bool) []byte {
	dst = appendChangeHead(dst, key, len(value), put)
	if put {
		dst = append(dst, value...)
	}
	return dst
}

// appendChangeHead appends a change up to its value, which is valueLen bytes long.
func appendChangeHead(dst, key []byte, valueLen int, put bool) []byte {
	mark := byte(markDelete)
	if put {
		mark = markPut
	}
	dst = binary.AppendUvarint(append(dst, mark), uint64(len(key)))
	dst = append(dst, key...)
	if put {
		dst = binary.AppendUvarint(dst, uint64(valueLen))
	}
	return dst
}

// changeSize is the length appendChange adds.
func changeSize(key, value []byte, put bool) int {
	if !put {
		return 1 + UvarintLen(len(key)) + len(key)
	}
	return ChangeSize(len(key), len(value))
}

// UvarintLen is the length of n's unsigned varint (binary.AppendUvarint).
func UvarintLen(n int) int { return (bits.Len64(uint64(n)|1) + 6) / 7 }

// forEachChange decodes the changes of one key group's entry; value is nil for a delete.
func forEachChange(data []byte, fn func(key, value []byte) error) error {
	for len(data) > 0 {
		mark := data[0]
		n, w := binary.Uvarint(data[1:])
		if w <= 0 || uint64(len(data)-1-w) < n {
			return ErrCorrupt
		}
		key := data[1+w : 1+w+int(n)]
		data = data[1+w+int(n):]
		var value []byte
		if mark == markPut {
			n, w := binary.Uvarint(data)
			if w <= 0 || uint64(len(data)-w) < n {
				return ErrCorrupt
			}
			value, data = data[w:w+int(n)], data[w+int(n):]
		} else if mark != markDelete {
			return ErrCorrupt
		}
		if err := fn(key, value); err != nil {
			return err
		}
	}
	return nil
}

// Delta is the change of one namespace's state at one checkpoint: keys put with their
// values, and keys deleted. Keys begin with their key group (KeyPrefix). A key both
// deleted and put is put: the deletion was of what the key held before.
type Delta struct {
	Puts    []KV
	Deletes [][]byte
	// Encoded holds changes already encoded by key group, ahead of Deletes and Puts.
	Encoded EncodedDelta
}

// EncodedDelta is changes encoded by key group as WriteDelta stores them: an operator
// that writes millions of rows at a checkpoint (a join's) appends them here rather than
// collecting KVs, which WriteDelta would copy once more. A key's last change wins.
type EncodedDelta struct {
	groups [][]byte
}

// Grow makes room for n more bytes of changes in key group kg (see ChangeSize).
func (e *EncodedDelta) Grow(kg, n int) {
	if kg >= len(e.groups) {
		e.groups = slices.Grow(e.groups, kg+1-len(e.groups))[:kg+1]
	}
	g := e.groups[kg]
	if len(g) == 0 {
		n += checksumSize // WriteDelta seals the group in place
		if cap(g) < n {
			// New room, not slices.Grow's copy of the stale bytes of the old.
			e.groups[kg] = make([]byte, 0, n)
			return
		}
	}
	e.groups[kg] = slices.Grow(g, n)
}

// Reset empties e for another delta. A group keeps its room if its changes filled at
// least a quarter of it, so that the memory kept follows the recent deltas' size.
func (e *EncodedDelta) Reset() {
	for kg, g := range e.groups {
		if 4*len(g) < cap(g) {
			e.groups[kg] = nil
		} else {
			e.groups[kg] = g[:0]
		}
	}
}

// ChangeSize is the bytes a put of a key and value of these lengths takes (a deletion
// of the key takes fewer).
func ChangeSize(keyLen, valueLen int) int {
	return 1 + UvarintLen(keyLen) + keyLen + UvarintLen(valueLen) + valueLen
}

// Put adds a put of key (which begins with its key group) whose value is head then
// tail.
func (e *EncodedDelta) Put(key, head []byte, tail string) {
	g := e.group(key)
	*g = append(append(appendChangeHead(*g, key, len(head)+len(tail), true), head...), tail...)
}

// Delete adds a deletion of key.
func (e *EncodedDelta) Delete(key []byte) {
	g := e.group(key)
	*g = appendChange(*g, key, nil, false)
}

func (e *EncodedDelta) group(key []byte) *[]byte {
	kg := int(binary.BigEndian.Uint16(key))
	if kg >= len(e.groups) {
		e.Grow(kg, 0)
	}
	return &e.groups[kg]
}

// KV is a key and its value.
type KV struct{ Key, Value []byte }

// KeyPrefix is the first two bytes of every key: its key group, so a task can read just
// the key groups it owns.
func KeyPrefix(keyGroup int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(keyGroup)) }

// WriteDelta stores namespace ns's changes at checkpoint id durably (bbolt syncs on
// commit) and returns the bytes written. It consumes d's Puts and Deletes, dropping each
// once it has encoded it, so that a large delta is not held twice; d.Encoded's buffers
// are written in place and the caller's again once it returns (EncodedDelta.Reset).
func (s *Store) WriteDelta(ns string, id int64, d Delta) (int64, error) {
	// Encode the changes by key group, in one buffer per group. Deletes come first: a key
	// deleted and put again since the last checkpoint is there with its new value.
	// Each group's buffer is sized first, so that it is allocated once, not grown; groups
	// are found by index, as key groups are few and small numbers.
	sizes := make([]int, len(d.Encoded.groups))
	for kg, g := range d.Encoded.groups {
		sizes[kg] = len(g)
	}
	add := func(k, v []byte, put bool) error {
		if len(k) < 2 {
			return fmt.Errorf("state %s checkpoint %d: key without a key group", ns, id)
		}
		kg := int(binary.BigEndian.Uint16(k))
		if kg >= len(sizes) {
			sizes = slices.Grow(sizes, kg+1-len(sizes))[:kg+1]
		}
		sizes[kg] += changeSize(k, v, put)
		return nil
	}
	for _, k := range d.Deletes {
		if err := add(k, nil, false); err != nil {
			return 0, err
		}
	}
	for _, kv := range d.Puts {
		if err := add(kv.Key, kv.Value, true); err != nil {
			return 0, err
		}
	}
	groups := make([][]byte, len(sizes))
	for kg, n := range sizes {
		switch {
		case kg < len(d.Encoded.groups) && len(d.Encoded.groups[kg]) > 0:
			groups[kg] = slices.Grow(d.Encoded.groups[kg], n-len(d.Encoded.groups[kg])+checksumSize)
		case n > 0:
			groups[kg] = make([]byte, 0, n+checksumSize)
		}
	}
	for i, k := range d.Deletes {
		kg := binary.BigEndian.Uint16(k)
		groups[kg] = appendChange(groups[kg], k, nil, false)
		d.Deletes[i] = nil
	}
	for i, kv := range d.Puts {
		kg := binary.BigEndian.Uint16(kv.Key)
		groups[kg] = appendChange(groups[kg], kv.Key, kv.Value, true)
		d.Puts[i] = KV{}
	}
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
		for kg, g := range groups {
			if g == nil {
				continue
			}
			prefix := KeyPrefix(kg)
			sealed := binary.BigEndian.AppendUint32(g, checksum(prefix, g)) // sealValue, in place
			if err := b.Put(prefix, sealed); err != nil {
				return err
			}
			written += int64(2 + len(sealed))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("state %s checkpoint %d: %w", ns, id, err)
	}
	return written, nil
}

// DiscardAfter deletes the deltas of checkpoints after id, which never completed: a
// restore from id must not see them, and neither may later checkpoints.
func (s *Store) DiscardAfter(id int64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.ForEach(func(ns []byte, top *bolt.Bucket) error {
			for _, name := range deltaNames(top, func(d int64) bool { return d > id }) {
				if err := top.DeleteBucket(name); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// Reset deletes all state: a job starting from nothing. The store keeps its identity,
// and nothing is sealed any more.
func (s *Store) Reset() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		var names [][]byte
		tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			if !bytes.Equal(name, metaBucket) {
				names = append(names, bytes.Clone(name))
			}
			return nil
		})
		for _, n := range names {
			if err := tx.DeleteBucket(n); err != nil {
				return err
			}
		}
		return tx.Bucket(metaBucket).Delete(keySealed)
	})
}

// ErrCorrupt says stored state could not be decoded, or failed its checksum.
var ErrCorrupt = errors.New("corrupt state")

// Every stored value ends with a CRC-32C of its key and value, so a flipped byte is
// detected when the value is read, never restored.
const checksumSize = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(key, value []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, value)
}

// sealValue returns a copy of value with its checksum appended.
func sealValue(key, value []byte) []byte {
	out := make([]byte, len(value), len(value)+checksumSize)
	copy(out, value)
	return binary.BigEndian.AppendUint32(out, checksum(key, value))
}

// openValue checks a stored value's checksum and returns the value without it.
func openValue(key, stored []byte) ([]byte, error) {
	n := len(stored) - checksumSize
	if n < 0 || binary.BigEndian.Uint32(stored[n:]) != checksum(key, stored[:n]) {
		return nil, fmt.Errorf("%w: checksum mismatch at key %x", ErrCorrupt, key)
	}
	return stored[:n], nil
}
