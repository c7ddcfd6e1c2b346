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
	_ exec.AsyncSnapshotter = (*join)(nil)
	_ exec.SnapshotMeter    = (*join)(nil)
	_ exec.Restorer         = (*join)(nil)
)

// stateKey is a side's key in the store: its key group, the side, the encoded key.
func (j *join) stateKey(s *joinSide, k *joinKey) []byte {
	buf := binary.BigEndian.AppendUint16(make([]byte, 0, 3+len(k.enc)), k.kg)
	return append(append(buf, byte(s.index)), k.enc...)
}

// Snapshot writes the keys changed since the previous checkpoint as checkpoint id's
// delta.
func (j *join) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	return snapshotNow(ctx, id, j)
}

// SnapshotAsync encodes the changed keys, each with all its rows, and returns the write
// of that delta, which the task runs in the background.
func (j *join) SnapshotAsync(_ context.Context, id int64) (func() ([]byte, error), error) {
	if j.state == nil {
		return nil, errors.New("join: checkpoint without a state store")
	}
	var d state.Delta
	var written int64
	done := make(map[string]bool, len(j.dirty)) // a key dropped and made again is listed twice
	for _, dk := range j.dirty {
		dk.key.dirty = false
		if dk.key.gone {
			continue // no checkpoint holds it, and it holds nothing now
		}
		s := j.sides[dk.side]
		sk := j.stateKey(s, dk.key)
		if done[string(sk)] {
			continue
		}
		done[string(sk)] = true
		if k := s.keys[dk.key.enc]; k != nil && len(k.rows) > 0 {
			k.stored = true
			v := j.appendKey(nil, s, k)
			d.Puts = append(d.Puts, state.KV{Key: sk, Value: v})
			written += int64(len(sk) + len(v))
		} else {
			d.Deletes = append(d.Deletes, sk)
		}
	}
	clear(j.dirty)
	j.dirty, j.goneDirty = j.dirty[:0], 0
	j.lastBytes, j.lastKeys = written, int64(len(d.Puts)+len(d.Deletes))
	return persistDelta(j.state, id, d, j.watermark), nil
}

// LastSnapshot reports the bytes and keys the last snapshot wrote.
func (j *join) LastSnapshot() (int64, int64) { return j.lastBytes, j.lastKeys }

// appendKey encodes a key's rows: the last access, then each row's counts, times and
// values.
func (j *join) appendKey(buf []byte, s *joinSide, k *joinKey) []byte {
	buf = binary.AppendVarint(buf, k.access)
	buf = binary.AppendUvarint(buf, uint64(len(k.rows)))
	for _, r := range k.rows {
		buf = binary.AppendVarint(buf, r.count)
		buf = binary.AppendVarint(buf, r.assoc)
		buf = binary.AppendVarint(buf, r.time)
		buf = binary.AppendVarint(buf, r.expire)
		buf = append(buf, r.enc...) // the values, as appendValueBytes wrote them
	}
	return buf
}

// Restore loads the rows of this task's key groups as of the checkpoint in handle.
func (j *join) Restore(handle []byte) error {
	h, err := readHandle(handle, j.state, "join")
	if err != nil {
		return err
	}
	j.watermark = h.Watermark
	if j.mode == regularJoin {
		j.watermark = exec.MinWatermark
	}
	return j.state.Store.Read(h.Namespace, h.Checkpoint, j.state.FirstKG, j.state.LastKG, func(key, v []byte) error {
		if len(key) < 3 || key[2] > 1 {
			return fmt.Errorf("%w: join state key", state.ErrCorrupt)
		}
		s := j.sides[key[2]]
		k := &joinKey{enc: string(key[3:]), kg: binary.BigEndian.Uint16(key), stored: true}
		d := &decoder{buf: v}
		k.access = d.varint()
		n, size := binary.Uvarint(d.buf)
		if size <= 0 {
			return fmt.Errorf("%w: join state rows", state.ErrCorrupt)
		}
		d.buf = d.buf[size:]
		for range n {
			r := &joinRow{count: d.varint(), assoc: d.varint(), time: d.varint(), expire: d.varint(), key: k}
			vals := d.buf
			for range s.width {
				d.value() // checks the encoding, which decodeRow trusts
			}
			if d.err != nil {
				return d.err
			}
			r.enc = string(vals[:len(vals)-len(d.buf)])
			k.rows = append(k.rows, r)
			if j.mode != regularJoin {
				heap.Push(&s.expiry, r)
			}
		}
		s.keys[k.enc] = k
		return nil
	})
}
