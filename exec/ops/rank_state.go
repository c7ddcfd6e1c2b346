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
	_ exec.AsyncSnapshotter = (*rank)(nil)
	_ exec.SnapshotMeter    = (*rank)(nil)
	_ exec.Restorer         = (*rank)(nil)
)

// markDirty notes that p changed since the last checkpoint.
func (r *rank) markDirty(p *rankPart) {
	if r.state != nil && !p.dirty {
		p.dirty = true
		r.dirty = append(r.dirty, p)
	}
}

// Snapshot writes the partitions changed since the previous checkpoint as checkpoint
// id's delta.
func (r *rank) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	return snapshotNow(ctx, id, r)
}

// SnapshotAsync encodes the changed partitions, each with all its rows, under their key
// group and encoded partition key, and returns the write of that delta, which the task
// runs in the background. A partition gone (emptied, or its window fired) is deleted.
func (r *rank) SnapshotAsync(_ context.Context, id int64) (func() ([]byte, error), error) {
	if r.state == nil {
		return nil, errors.New("rank: checkpoint without a state store")
	}
	s := &r.encoded
	s.begin()
	r.snapshots++
	for _, changed := range r.dirty {
		changed.dirty = false
		p := r.parts[changed.enc]
		put := p != nil && len(p.rows) > 0
		if put && p.snap == r.snapshots {
			continue // a partition dropped and made again is listed twice
		}
		if put {
			p.snap = r.snapshots
		}
		start := len(s.buf)
		s.buf = append(binary.BigEndian.AppendUint16(s.buf, changed.kg), changed.enc...)
		key := len(s.buf)
		if put {
			s.buf = r.appendPart(s.buf, p)
		}
		s.add(start, key, put)
	}
	d := state.Delta{Encoded: r.spare.take()}
	written := s.writeTo(&d.Encoded)
	clear(r.dirty)
	r.dirty = r.dirty[:0]
	r.lastBytes, r.lastKeys = written, int64(len(s.changes))
	return r.spare.persist(r.state, id, d, r.watermark), nil
}

// LastSnapshot reports the bytes and keys the last snapshot wrote.
func (r *rank) LastSnapshot() (int64, int64) { return r.lastBytes, r.lastKeys }

// appendPart encodes a partition: whether its row was emitted (keep-first), its window
// end (window Top-N), then each row's arrival number and values, in rank order.
func (r *rank) appendPart(buf []byte, p *rankPart) []byte {
	done := byte(0)
	if p.done {
		done = 1
	}
	buf = append(buf, done)
	buf = binary.AppendVarint(buf, p.end)
	buf = binary.AppendUvarint(buf, uint64(len(p.rows)))
	for _, x := range p.rows {
		buf = binary.AppendVarint(buf, x.seq)
		for _, v := range x.vals {
			buf = appendValueBytes(buf, v)
		}
	}
	return buf
}

// Restore loads the partitions of this task's key groups as of the checkpoint in
// handle, and the watermark that made windows and first rows final.
func (r *rank) Restore(handle []byte) error {
	h, err := readHandle(handle, r.state, "rank")
	if err != nil {
		return err
	}
	if r.mode != topN {
		r.watermark = h.Watermark
	}
	return r.state.Store.Read(h.Namespace, h.Checkpoint, r.state.FirstKG, r.state.LastKG, func(key, v []byte) error {
		if len(key) < 2 || len(v) < 1 {
			return fmt.Errorf("%w: rank state key", state.ErrCorrupt)
		}
		p := &rankPart{enc: string(key[2:]), kg: binary.BigEndian.Uint16(key), done: v[0] == 1}
		d := &decoder{buf: v[1:]}
		p.end = d.varint()
		n, size := binary.Uvarint(d.buf)
		if size <= 0 || n > uint64(len(d.buf)) {
			return fmt.Errorf("%w: rank state rows", state.ErrCorrupt)
		}
		d.buf = d.buf[size:]
		for range n {
			x := &rankRow{seq: d.varint(), vals: make([]value, r.width)}
			for c := range x.vals {
				x.vals[c] = d.value()
			}
			if d.err != nil {
				return d.err
			}
			p.rows = append(p.rows, x)
			r.seq = max(r.seq, x.seq+1)
		}
		if len(p.rows) == 0 {
			return fmt.Errorf("%w: rank partition without rows", state.ErrCorrupt)
		}
		r.parts[p.enc] = p
		switch {
		case r.mode == windowTopN:
			r.byEnd[p.end] = append(r.byEnd[p.end], p)
		case r.mode == keepFirst && !p.done:
			r.pending[p] = true
		}
		return nil
	})
}
