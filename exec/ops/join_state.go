package ops

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

var (
	_ exec.AsyncSnapshotter = (*join)(nil)
	_ exec.SnapshotMeter    = (*join)(nil)
	_ exec.Restorer         = (*join)(nil)
)

// A join keeps a state entry per stored row, as Flink's join state does, so that a
// checkpoint writes the rows stored, changed or removed since the last one, not every
// row of each key that changed: a key may hold many rows (every bid of a price, q7), and
// rewriting them all made each checkpoint cost as much as the whole state.
//
// A row's state key is its key group, 2 + its side, the length of its key's encoding,
// that encoding and the row's id (8 bytes); its value is its counts, times and its key's
// last access, then its values. State that earlier versions wrote holds an entry per
// key (side 0 or 1, no length, all the key's rows in its value); it restores, and the
// next checkpoint replaces it with rows.
const rowEntry = 2

// appendRowKey appends the state key of row r of side s to buf.
func appendRowKey(buf []byte, s int, r *joinRow) []byte {
	enc := r.key.enc
	buf = binary.BigEndian.AppendUint16(buf, r.key.kg)
	buf = append(buf, byte(rowEntry+s))
	buf = binary.AppendUvarint(buf, uint64(len(enc)))
	buf = append(buf, enc...)
	return binary.BigEndian.AppendUint64(buf, r.id)
}

// rowKeySize and rowValueSize are the bytes of row r's state key and value, so that a
// checkpoint sizes its key groups exactly (fresh room is zeroed, and paged in).
func rowKeySize(r *joinRow) int { return 3 + state.UvarintLen(len(r.key.enc)) + len(r.key.enc) + 8 }
func rowValueSize(r *joinRow) int {
	return varintLen(r.count) + varintLen(r.assoc) + varintLen(r.time) + varintLen(r.expire) +
		varintLen(r.key.access) + len(r.enc)
}

// varintLen is the length of x's varint (binary.AppendVarint).
func varintLen(x int64) int { return state.UvarintLen(int(uint64(x)<<1 ^ uint64(x>>63))) }

// Snapshot writes the rows changed since the previous checkpoint as checkpoint id's
// delta.
func (j *join) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	return snapshotNow(ctx, id, j)
}

// SnapshotAsync encodes the changed rows and returns the write of that delta, which the
// task runs in the background.
func (j *join) SnapshotAsync(_ context.Context, id int64) (func() ([]byte, error), error) {
	if j.state == nil {
		return nil, errors.New("join: checkpoint without a state store")
	}
	d := state.Delta{Deletes: j.legacy, Encoded: j.spare.take()}
	j.legacy = nil
	// The rows go straight into their key groups' encoding, each group sized up
	// front: a checkpoint may write millions of rows.
	var sizes []int
	for _, dr := range j.dirty {
		if r := dr.row; !r.removed || r.stored {
			kg := int(r.key.kg)
			if kg >= len(sizes) {
				sizes = slices.Grow(sizes, kg+1-len(sizes))[:kg+1]
			}
			sizes[kg] += state.ChangeSize(rowKeySize(r), rowValueSize(r))
		}
	}
	for kg, n := range sizes {
		if n > 0 {
			d.Encoded.Grow(kg, n)
		}
	}
	var written, entries int64
	var key, head []byte
	for _, dr := range j.dirty {
		r := dr.row
		r.dirty = false
		switch {
		case r.removed && r.stored:
			key = appendRowKey(key[:0], dr.side, r)
			d.Encoded.Delete(key)
			r.stored = false
			entries++
		case r.removed: // no checkpoint held it
		default:
			key = appendRowKey(key[:0], dr.side, r)
			head = binary.AppendVarint(head[:0], r.count)
			head = binary.AppendVarint(head, r.assoc)
			head = binary.AppendVarint(head, r.time)
			head = binary.AppendVarint(head, r.expire)
			head = binary.AppendVarint(head, r.key.access)
			d.Encoded.Put(key, head, r.enc)
			written += int64(len(key) + len(head) + len(r.enc))
			entries++
			r.stored = true
		}
	}
	clear(j.dirty)
	j.dirty, j.lostDirty = j.dirty[:0], 0
	j.lastBytes, j.lastKeys = written, entries+int64(len(d.Deletes))
	return j.spare.persist(j.state, id, d, j.watermark), nil
}

// LastSnapshot reports the bytes and entries the last snapshot wrote.
func (j *join) LastSnapshot() (int64, int64) { return j.lastBytes, j.lastKeys }

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
	var legacy []*joinRow // rows of the earlier format, which get ids once all are read
	err = j.state.Store.Read(h.Namespace, h.Checkpoint, j.state.FirstKG, j.state.LastKG, func(key, v []byte) error {
		if len(key) < 3 || key[2] >= rowEntry+2 {
			return fmt.Errorf("%w: join state key", state.ErrCorrupt)
		}
		if key[2] < rowEntry {
			rows, err := j.restoreKey(key, v)
			legacy = append(legacy, rows...)
			return err
		}
		return j.restoreRow(key, v)
	})
	if err != nil {
		return err
	}
	for _, r := range legacy {
		r.id = j.newID()
	}
	for _, s := range j.sides {
		for k := range s.keys.all() {
			slices.SortFunc(k.rows, func(a, b *joinRow) int { return cmp.Compare(a.id, b.id) })
			if j.mode != regularJoin {
				for _, r := range k.rows {
					if r.expire != never {
						s.expiry.push(r)
					}
				}
			}
		}
	}
	return nil
}

// restoreRow restores one row's entry.
func (j *join) restoreRow(key, v []byte) error {
	s := j.sides[key[2]-rowEntry]
	n, size := binary.Uvarint(key[3:])
	if size <= 0 || uint64(len(key)-3-size) != n+8 {
		return fmt.Errorf("%w: join state row key", state.ErrCorrupt)
	}
	enc := key[3+size : 3+size+int(n)]
	d := &decoder{buf: v}
	r := &joinRow{count: d.varint(), assoc: d.varint(), time: d.varint(), expire: d.varint(), stored: true,
		id: binary.BigEndian.Uint64(key[len(key)-8:])}
	access := d.varint()
	vals := d.buf
	for range s.width {
		d.value() // checks the encoding, which decodeRow trusts
	}
	if d.err != nil || len(d.buf) != 0 {
		return fmt.Errorf("%w: join state row", state.ErrCorrupt)
	}
	r.enc = string(vals)
	k := s.key(string(enc), binary.BigEndian.Uint16(key))
	k.access = max(k.access, access)
	r.key = k
	k.rows = append(k.rows, r)
	j.nextID = max(j.nextID, r.id)
	return nil
}

// restoreKey restores a key's entry of the earlier format: the last access, then each
// row's counts, times and values. Its rows are listed to be written as rows, and the
// entry to be deleted, by the next checkpoint.
func (j *join) restoreKey(key, v []byte) ([]*joinRow, error) {
	s := j.sides[key[2]]
	k := s.key(string(key[3:]), binary.BigEndian.Uint16(key))
	d := &decoder{buf: v}
	k.access = d.varint()
	n, size := binary.Uvarint(d.buf)
	if size <= 0 {
		return nil, fmt.Errorf("%w: join state rows", state.ErrCorrupt)
	}
	d.buf = d.buf[size:]
	rows := make([]*joinRow, 0, n)
	for range n {
		r := &joinRow{count: d.varint(), assoc: d.varint(), time: d.varint(), expire: d.varint(), key: k}
		vals := d.buf
		for range s.width {
			d.value()
		}
		if d.err != nil {
			return nil, d.err
		}
		r.enc = string(vals[:len(vals)-len(d.buf)])
		k.rows = append(k.rows, r)
		rows = append(rows, r)
		j.markRow(s, r)
	}
	j.legacy = append(j.legacy, bytes.Clone(key))
	return rows, nil
}
