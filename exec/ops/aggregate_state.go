package ops

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

// KeyedState is where an aggregate task keeps its checkpointed state: a namespace (the
// operator's UID) in the job's store, and the key groups the task owns.
type KeyedState struct {
	Store           *state.Store
	Namespace       string
	FirstKG, LastKG int
}

var (
	_ exec.Snapshotter      = (*aggregate)(nil)
	_ exec.AsyncSnapshotter = (*aggregate)(nil)
	_ exec.SnapshotMeter    = (*aggregate)(nil)
	_ exec.Restorer         = (*aggregate)(nil)
)

// stateHandle is what a checkpoint records for an aggregate task.
type stateHandle struct {
	Namespace  string
	Checkpoint int64
	Watermark  int64 `json:",omitempty"` // a window aggregate's
}

// Snapshot writes the groups changed since the previous checkpoint, and the keys of
// those deleted, as checkpoint id's delta.
func (a *aggregate) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	return snapshotNow(ctx, id, a)
}

// SnapshotAsync encodes the changed groups (the synchronous part, proportional to what
// changed) and returns the write of that delta to the store, which the task runs in the
// background. The task has flushed the aggregate first, so every change is emitted and no
// group is half-updated.
func (a *aggregate) SnapshotAsync(_ context.Context, id int64) (func() ([]byte, error), error) {
	if a.state == nil {
		return nil, errors.New("aggregate: checkpoint without a state store")
	}
	spilled, err := a.spilledChanges()
	if err != nil {
		return nil, err
	}
	// Deletions first: a group deleted and made again since the last checkpoint is put.
	s := &a.scratch
	s.begin()
	for _, k := range a.dropped {
		start := len(s.buf)
		s.buf = append(s.buf, k...)
		s.add(start, len(s.buf), false)
	}
	for _, g := range a.dirty {
		if !a.dirtyFlag[g] {
			continue // dropped, or listed twice after its slot was reused
		}
		a.dirtyFlag[g] = false
		a.stored[g] = true
		start := len(s.buf)
		s.buf = encodeKey(binary.BigEndian.AppendUint16(s.buf, a.kgs[g]), a.keys.key(g))
		key := len(s.buf)
		s.buf = a.appendGroup(s.buf, g)
		s.add(start, key, true)
	}
	d := state.Delta{Encoded: a.spare.take(), Puts: spilled}
	written := s.writeTo(&d.Encoded)
	a.lastBytes, a.lastKeys = written, int64(len(s.changes)+len(spilled))
	a.dirty, a.dropped = a.dirty[:0], nil
	watermark := a.watermark
	if a.window < 0 {
		watermark = 0
	}
	return a.spare.persist(a.state, id, d, watermark), nil
}

// LastSnapshot reports the bytes and keys the last snapshot wrote.
func (a *aggregate) LastSnapshot() (int64, int64) { return a.lastBytes, a.lastKeys }

// Restore loads the groups of this task's key groups as of the checkpoint in handle.
func (a *aggregate) Restore(handle []byte) error {
	h, err := readHandle(handle, a.state, "aggregate")
	if err != nil {
		return err
	}
	if a.window >= 0 {
		a.watermark = h.Watermark
	}
	return a.state.Store.Read(h.Namespace, h.Checkpoint, a.state.FirstKG, a.state.LastKG, func(k, v []byte) error {
		if _, err := a.loadGroup(k, v); err != nil {
			return err
		}
		if a.cache.MaxGroups > 0 && a.liveGroups()%(64<<10) == 0 {
			return a.evictIfFull() // a state larger than the cache moves out as it loads
		}
		return nil
	})
}

// stateKey is a group's key in the store: its key group, then its encoded key values.
func (a *aggregate) stateKey(g int32) []byte {
	return encodeKey(state.KeyPrefix(int(a.kgs[g])), a.keys.key(g))
}

// appendGroup appends a group's state: its row count, then each accumulator's.
func (a *aggregate) appendGroup(buf []byte, g int32) []byte {
	buf = binary.AppendVarint(buf, a.rows[g])
	for _, i := range a.stateOrder {
		buf = a.accs[i].save(buf, g)
	}
	if a.emitCtl != nil {
		buf = a.emitCtl.appendShown(buf, g, a.stateOrder)
	}
	return buf
}

// decodeKey reads n key values written by encodeKey.
func decodeKey(b []byte, n int) ([]value, error) {
	d := &decoder{buf: b}
	key := make([]value, n)
	for i := range key {
		key[i] = d.value()
	}
	if d.err == nil && len(d.buf) > 0 {
		return nil, fmt.Errorf("%w: aggregate key has trailing bytes", state.ErrCorrupt)
	}
	return key, d.err
}
