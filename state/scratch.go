package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Scratch holds what an operator moved out of memory to stay within its cache: a bbolt
// file of its own that belongs to no checkpoint and is never synced. A new Scratch
// starts empty; Close deletes it.
type Scratch struct {
	db   *bolt.DB
	path string
}

var scratchBucket = []byte("scratch")

// OpenScratch creates an empty scratch file at path, replacing one a crashed run left.
func OpenScratch(path string) (*Scratch, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("scratch %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("scratch %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("scratch %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket(scratchBucket)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("scratch %s: %w", path, err)
	}
	return &Scratch{db: db, path: path}, nil
}

// Put stores values by key, in one transaction.
func (s *Scratch) Put(kvs []KV) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(scratchBucket)
		for _, kv := range kvs {
			if err := b.Put(kv.Key, kv.Value); err != nil {
				return err
			}
		}
		return nil
	})
}

// Get calls fn with the value of each key it holds (i indexes keys); the value is valid
// during the call only.
func (s *Scratch) Get(keys [][]byte, fn func(i int, value []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(scratchBucket)
		for i, k := range keys {
			if v := b.Get(k); v != nil {
				if err := fn(i, v); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Take is Get, and removes the keys found.
func (s *Scratch) Take(keys [][]byte, fn func(i int, value []byte) error) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(scratchBucket)
		for i, k := range keys {
			v := b.Get(k)
			if v == nil {
				continue
			}
			if err := fn(i, v); err != nil {
				return err
			}
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close closes and deletes the file.
func (s *Scratch) Close() error {
	err := s.db.Close()
	if rerr := os.Remove(s.path); err == nil {
		err = rerr
	}
	return err
}
