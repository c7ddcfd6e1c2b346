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
	_ exec.Snapshotter      = (*match)(nil)
	_ exec.AsyncSnapshotter = (*match)(nil)
	_ exec.SnapshotMeter    = (*match)(nil)
	_ exec.Restorer         = (*match)(nil)
)

// markDirty notes that p changed since the last checkpoint.
func (m *match) markDirty(p *matchPart) {
	if m.state != nil && !p.dirty {
		p.dirty = true
		m.dirty = append(m.dirty, p)
	}
}

// Snapshot writes the partitions changed since the previous checkpoint as checkpoint
// id's delta.
func (m *match) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	return snapshotNow(ctx, id, m)
}

// SnapshotAsync encodes each changed partition under its key group and encoded key:
// the time of the last row it took, its row numbers, the rows its threads read, its
// pending rows, its threads and its waiting matches (their start, instruction and
// variables). It returns
// the write of that delta, which the task runs in the background.
func (m *match) SnapshotAsync(_ context.Context, id int64) (func() ([]byte, error), error) {
	if m.state == nil {
		return nil, errors.New("match recognize: checkpoint without a state store")
	}
	var d state.Delta
	var written int64
	for _, p := range m.dirty {
		p.dirty = false
		sk := append(binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(p.enc)), p.kg), p.enc...)
		v := m.appendPart(nil, p)
		d.Puts = append(d.Puts, state.KV{Key: sk, Value: v})
		written += int64(len(sk) + len(v))
	}
	m.dirty = m.dirty[:0]
	m.lastBytes, m.lastKeys = written, int64(len(d.Puts))
	return persistDelta(m.state, id, d, m.watermark), nil
}

// LastSnapshot reports the bytes and keys the last snapshot wrote.
func (m *match) LastSnapshot() (int64, int64) { return m.lastBytes, m.lastKeys }

func (m *match) appendPart(buf []byte, p *matchPart) []byte {
	buf = binary.AppendVarint(buf, p.last)
	buf = binary.AppendVarint(buf, p.taken)
	buf = binary.AppendVarint(buf, p.base)
	for _, rows := range [][]*overRow{p.rows, p.pending} {
		buf = binary.AppendUvarint(buf, uint64(len(rows)))
		for _, x := range rows {
			buf = binary.AppendVarint(buf, x.seq)
			for _, v := range x.vals {
				buf = appendValueBytes(buf, v)
			}
		}
	}
	for _, threads := range [][]*mthread{p.threads, p.done} {
		buf = binary.AppendUvarint(buf, uint64(len(threads)))
		for _, th := range threads {
			buf = binary.AppendVarint(buf, th.start)
			buf = binary.AppendVarint(buf, int64(th.pc))
			vars := th.path.vars()
			buf = binary.AppendUvarint(buf, uint64(len(vars)))
			for _, v := range vars {
				buf = binary.AppendVarint(buf, int64(v))
			}
		}
	}
	return buf
}

// Restore loads the partitions of this task's key groups as of the checkpoint in
// handle.
func (m *match) Restore(handle []byte) error {
	h, err := readHandle(handle, m.state, "match recognize")
	if err != nil {
		return err
	}
	m.watermark = h.Watermark
	return m.state.Store.Read(h.Namespace, h.Checkpoint, m.state.FirstKG, m.state.LastKG, func(key, v []byte) error {
		if len(key) < 2 {
			return fmt.Errorf("%w: match recognize state key", state.ErrCorrupt)
		}
		p := &matchPart{enc: string(key[2:]), kg: binary.BigEndian.Uint16(key)}
		if err := m.loadPart(p, &decoder{buf: v}); err != nil {
			return err
		}
		m.parts[p.enc] = p
		return nil
	})
}

func (m *match) loadPart(p *matchPart, d *decoder) error {
	corrupt := fmt.Errorf("%w: match recognize partition", state.ErrCorrupt)
	p.last, p.taken, p.base = d.varint(), d.varint(), d.varint()
	count := func() (int, bool) {
		n, size := binary.Uvarint(d.buf)
		if size <= 0 || n > uint64(len(d.buf)) {
			return 0, false
		}
		d.buf = d.buf[size:]
		return int(n), true
	}
	for i := range 2 {
		n, ok := count()
		if !ok {
			return corrupt
		}
		var rows []*overRow
		for range n {
			x := &overRow{seq: d.varint(), vals: make([]value, m.width)}
			for c := range x.vals {
				x.vals[c] = d.value()
			}
			if d.err != nil {
				return d.err
			}
			x.t = x.vals[m.n.TimeCol].i
			rows = append(rows, x)
			m.seq = max(m.seq, x.seq+1)
		}
		if i == 0 {
			p.rows = rows
			continue
		}
		for _, x := range rows {
			m.addPending(p, x)
		}
	}
	for i := range 2 {
		n, ok := count()
		if !ok {
			return corrupt
		}
		for range n {
			th := &mthread{start: d.varint(), pc: int(d.varint())}
			k, ok := count()
			if !ok || th.pc < 0 || th.pc >= len(m.prog) || th.start < p.base || th.start+int64(k) > p.base+int64(len(p.rows)) {
				return corrupt
			}
			for j := range k {
				v := int(d.varint())
				if v < 0 || v >= len(m.n.Vars) {
					return corrupt
				}
				th.path = &mstep{v: v, n: j + 1, prev: th.path}
			}
			if i == 0 {
				p.threads = append(p.threads, th)
			} else {
				p.done = append(p.done, th)
			}
		}
	}
	if d.err != nil || len(d.buf) != 0 {
		return corrupt
	}
	return nil
}
