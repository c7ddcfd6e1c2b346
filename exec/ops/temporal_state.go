package ops

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

var (
	_ exec.Snapshotter      = (*temporalJoin)(nil)
	_ exec.AsyncSnapshotter = (*temporalJoin)(nil)
	_ exec.SnapshotMeter    = (*temporalJoin)(nil)
	_ exec.Restorer         = (*temporalJoin)(nil)
)

// Snapshot writes the keys changed since the previous checkpoint as checkpoint id's
// delta.
func (j *temporalJoin) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	return snapshotNow(ctx, id, j)
}

// SnapshotAsync encodes each changed key under its key group and encoded key: its
// waiting left rows, then its versions. A key left without either is deleted. It
// returns the write of that delta, which the task runs in the background.
func (j *temporalJoin) SnapshotAsync(_ context.Context, id int64) (func() ([]byte, error), error) {
	if j.state == nil {
		return nil, errors.New("temporal join: checkpoint without a state store")
	}
	var d state.Delta
	var written int64
	done := make(map[string]bool, len(j.dirty)) // a key dropped and made again is listed twice
	for _, k := range j.dirty {
		k.dirty = false
		if done[k.enc] {
			continue
		}
		done[k.enc] = true
		sk := append(binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(k.enc)), k.kg), k.enc...)
		if cur := j.keys[k.enc]; cur != nil && (len(cur.left) > 0 || len(cur.versions) > 0) {
			v := j.appendKey(nil, cur)
			d.Puts = append(d.Puts, state.KV{Key: sk, Value: v})
			written += int64(len(sk) + len(v))
		} else {
			d.Deletes = append(d.Deletes, sk)
		}
	}
	clear(j.dirty)
	j.dirty = j.dirty[:0]
	j.lastBytes, j.lastKeys = written, int64(len(d.Puts)+len(d.Deletes))
	return persistDelta(j.state, id, d, j.watermark), nil
}

// LastSnapshot reports the bytes and keys the last snapshot wrote.
func (j *temporalJoin) LastSnapshot() (int64, int64) { return j.lastBytes, j.lastKeys }

func (j *temporalJoin) appendKey(buf []byte, k *tjKey) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(k.left)))
	for _, x := range k.left {
		buf = binary.AppendVarint(buf, x.seq)
		for _, v := range x.vals {
			buf = appendValueBytes(buf, v)
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(k.versions)))
	for _, x := range k.versions {
		buf = binary.AppendVarint(buf, x.seq)
		deleted := byte(0)
		if x.deleted {
			deleted = 1
		}
		buf = append(buf, deleted)
		for _, v := range x.vals {
			buf = appendValueBytes(buf, v)
		}
	}
	return buf
}

// Restore loads the keys of this task's key groups as of the checkpoint in handle.
func (j *temporalJoin) Restore(handle []byte) error {
	h, err := readHandle(handle, j.state, "temporal join")
	if err != nil {
		return err
	}
	j.watermark = h.Watermark
	return j.state.Store.Read(h.Namespace, h.Checkpoint, j.state.FirstKG, j.state.LastKG, func(key, v []byte) error {
		if len(key) < 2 {
			return fmt.Errorf("%w: temporal join state key", state.ErrCorrupt)
		}
		k := &tjKey{enc: string(key[2:]), kg: binary.BigEndian.Uint16(key)}
		d := &decoder{buf: v}
		for side, width := range []int{j.lw, j.rw} {
			n, size := binary.Uvarint(d.buf)
			if size <= 0 || n > uint64(len(d.buf)) {
				return fmt.Errorf("%w: temporal join state rows", state.ErrCorrupt)
			}
			d.buf = d.buf[size:]
			for range n {
				x := &tjRow{seq: d.varint(), vals: make([]value, width)}
				if side == 1 {
					x.deleted = d.byte() == 1
				}
				for c := range x.vals {
					x.vals[c] = d.value()
				}
				if d.err != nil {
					return d.err
				}
				j.seq = max(j.seq, x.seq+1)
				if side == 0 {
					x.t = x.vals[j.ltime].i
					k.left = append(k.left, x)
					j.pending.push(timed[*tjKey]{t: x.t, seq: x.seq, p: k})
				} else {
					x.t = x.vals[j.rtime].i
					k.versions = append(k.versions, x)
				}
			}
		}
		if d.err != nil || len(d.buf) != 0 {
			return fmt.Errorf("%w: temporal join key", state.ErrCorrupt)
		}
		j.keys[k.enc] = k
		return nil
	})
}
