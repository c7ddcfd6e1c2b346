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
	_ exec.Snapshotter      = (*over)(nil)
	_ exec.AsyncSnapshotter = (*over)(nil)
	_ exec.SnapshotMeter    = (*over)(nil)
	_ exec.Restorer         = (*over)(nil)
)

// markDirty notes that p changed since the last checkpoint.
func (o *over) markDirty(p *overPart) {
	if o.state != nil && !p.dirty {
		p.dirty = true
		o.dirty = append(o.dirty, p)
	}
}

// Snapshot writes the partitions changed since the previous checkpoint as checkpoint
// id's delta.
func (o *over) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	return snapshotNow(ctx, id, o)
}

// SnapshotAsync encodes each changed partition under its key group and encoded key:
// the time it last emitted, its accumulators, its frame's rows and its pending rows.
// It returns the write of that delta, which the task runs in the background.
func (o *over) SnapshotAsync(_ context.Context, id int64) (func() ([]byte, error), error) {
	if o.state == nil {
		return nil, errors.New("over aggregate: checkpoint without a state store")
	}
	var d state.Delta
	var written int64
	for _, p := range o.dirty {
		p.dirty = false
		sk := append(binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(p.enc)), p.kg), p.enc...)
		v := o.appendPart(nil, p)
		d.Puts = append(d.Puts, state.KV{Key: sk, Value: v})
		written += int64(len(sk) + len(v))
	}
	o.dirty = o.dirty[:0]
	o.lastBytes, o.lastKeys = written, int64(len(d.Puts))
	return persistDelta(o.state, id, d, o.watermark), nil
}

// LastSnapshot reports the bytes and keys the last snapshot wrote.
func (o *over) LastSnapshot() (int64, int64) { return o.lastBytes, o.lastKeys }

func (o *over) appendPart(buf []byte, p *overPart) []byte {
	buf = binary.AppendVarint(buf, p.last)
	for k, acc := range o.accs {
		if l := o.calls[k].lag; l != nil {
			buf = l.save(buf, p.g)
		} else {
			buf = acc.save(buf, p.g)
		}
	}
	for _, rows := range [][]*overRow{p.frame, p.pending} {
		buf = binary.AppendUvarint(buf, uint64(len(rows)))
		for _, x := range rows {
			buf = binary.AppendVarint(buf, x.seq)
			for _, v := range x.vals {
				buf = appendValueBytes(buf, v)
			}
		}
	}
	return buf
}

// Restore loads the partitions of this task's key groups as of the checkpoint in
// handle.
func (o *over) Restore(handle []byte) error {
	h, err := readHandle(handle, o.state, "over aggregate")
	if err != nil {
		return err
	}
	o.watermark = h.Watermark
	return o.state.Store.Read(h.Namespace, h.Checkpoint, o.state.FirstKG, o.state.LastKG, func(key, v []byte) error {
		if len(key) < 2 {
			return fmt.Errorf("%w: over aggregate state key", state.ErrCorrupt)
		}
		p := o.newPart(string(key[2:]), binary.BigEndian.Uint16(key))
		d := &decoder{buf: v}
		p.last = d.varint()
		for k, acc := range o.accs {
			if l := o.calls[k].lag; l != nil {
				l.load(d, p.g)
			} else {
				acc.load(d, p.g)
			}
		}
		for i := range 2 {
			n, size := binary.Uvarint(d.buf)
			if size <= 0 || n > uint64(len(d.buf)) {
				return fmt.Errorf("%w: over aggregate state rows", state.ErrCorrupt)
			}
			d.buf = d.buf[size:]
			rows := make([]*overRow, 0, n)
			for range n {
				x := &overRow{seq: d.varint(), vals: make([]value, o.width)}
				for c := range x.vals {
					x.vals[c] = d.value()
				}
				if d.err != nil {
					return d.err
				}
				x.t = x.vals[o.timeCol].i
				rows = append(rows, x)
				o.seq = max(o.seq, x.seq+1)
			}
			if n == 0 {
				rows = nil
			}
			if i == 0 {
				p.frame = rows
			} else {
				for _, x := range rows {
					o.addPending(p, x)
				}
			}
		}
		if d.err != nil || len(d.buf) != 0 {
			return fmt.Errorf("%w: over aggregate partition", state.ErrCorrupt)
		}
		o.parts[p.enc] = p
		return nil
	})
}
