package ops

import (
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

var (
	_ exec.Snapshotter      = (*sorter)(nil)
	_ exec.AsyncSnapshotter = (*sorter)(nil)
	_ exec.SnapshotMeter    = (*sorter)(nil)
	_ exec.Restorer         = (*sorter)(nil)
)

// A sort runs in one task, so its rows are all in key group 0, each under its arrival
// number: sortKey.
func sortKey(seq int64) []byte {
	return binary.BigEndian.AppendUint64(state.KeyPrefix(0), uint64(seq))
}

// Snapshot writes the rows changed since the previous checkpoint as checkpoint id's
// delta.
func (s *sorter) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	return snapshotNow(ctx, id, s)
}

// SnapshotAsync encodes each changed row, its count and values, under its arrival
// number, and deletes the rows emitted or taken out since; it returns the write of
// that delta, which the task runs in the background.
func (s *sorter) SnapshotAsync(_ context.Context, id int64) (func() ([]byte, error), error) {
	if s.state == nil {
		return nil, errors.New("sort: checkpoint without a state store")
	}
	var d state.Delta
	var written int64
	for seq, x := range s.dirty {
		k := sortKey(seq)
		if x.count == 0 {
			d.Deletes = append(d.Deletes, k)
			continue
		}
		v := binary.AppendVarint(nil, x.count)
		for _, val := range x.vals {
			v = appendValueBytes(v, val)
		}
		d.Puts = append(d.Puts, state.KV{Key: k, Value: v})
		written += int64(len(k) + len(v))
	}
	clear(s.dirty)
	s.lastBytes, s.lastKeys = written, int64(len(d.Puts))
	return persistDelta(s.state, id, d, s.wm), nil
}

// LastSnapshot reports the bytes and keys the last snapshot wrote.
func (s *sorter) LastSnapshot() (int64, int64) { return s.lastBytes, s.lastKeys }

// Restore loads the kept rows and the watermark as of the checkpoint in handle.
func (s *sorter) Restore(handle []byte) error {
	h, err := readHandle(handle, s.state, "sort")
	if err != nil {
		return err
	}
	s.wm = h.Watermark
	return s.state.Store.Read(h.Namespace, h.Checkpoint, s.state.FirstKG, s.state.LastKG, func(key, v []byte) error {
		if len(key) != 10 {
			return fmt.Errorf("%w: sort state key", state.ErrCorrupt)
		}
		x := &sortRow{seq: int64(binary.BigEndian.Uint64(key[2:])), vals: make([]value, s.width)}
		d := &decoder{buf: v}
		x.count = d.varint()
		for c := range x.vals {
			x.vals[c] = d.value()
		}
		if d.err != nil || len(d.buf) != 0 || x.count <= 0 {
			return fmt.Errorf("%w: sort state row", state.ErrCorrupt)
		}
		s.seq = max(s.seq, x.seq+1)
		if s.byTime {
			heap.Push(&s.pending, pendingSort{t: x.vals[s.time].i, row: x})
			return nil
		}
		var enc []byte
		for _, val := range x.vals {
			enc = appendValueBytes(enc, val)
		}
		x.enc = string(enc)
		s.rows[x.enc] = x
		return nil
	})
}
