package ops

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// changes builds an operator's output: rows appended column by column, each with its
// kind, and emitted as one batch (without kinds when every row is an insert).
type changes struct {
	pool    *exec.BufferPool // of the batches' buffers
	schema  *arrow.Schema
	builder *array.RecordBuilder // of the columns but STRING ones
	texts   []*texts             // the STRING columns', by column (nil for others)
	col     []func(value)        // appends to column i
	kinds   []exec.RowKind
	allIns  bool
}

func newChanges(mem memory.Allocator, schema planner.Schema) *changes {
	// The batches' buffers come back to the pool as their holders release them, as a
	// source's do: fresh ones, zeroed and then collected, cost a join's wide rows a
	// tenth of building them.
	pool := exec.NewBufferPool(mem, true)
	s := exec.ArrowSchema(schema)
	c := &changes{pool: pool, schema: s, builder: array.NewRecordBuilder(pool, s), allIns: true, texts: make([]*texts, len(schema))}
	for i, f := range c.builder.Fields() {
		if s.Field(i).Type.ID() == arrow.STRING {
			t := &texts{w: arrowbuf.NewWriter(pool, s.Field(i).Type, 0)}
			c.texts[i] = t
			c.col = append(c.col, t.append)
			continue
		}
		c.col = append(c.col, appender(f))
	}
	return c
}

// texts builds a STRING column of changes straight into the Arrow buffers of the
// batch. An Arrow builder grows its buffers from nothing for every batch, zeroing and
// copying them as they double, which for a join's wide rows cost more than the rest of
// building them; a copy kept aside cost a second copy of every string.
type texts struct {
	w    *arrowbuf.Writer
	rows int
}

func (t *texts) append(v value) {
	if v.null {
		t.w.PutNull(t.rows)
	} else {
		t.w.PutString(t.rows, v.s)
	}
	t.rows++
}

// array returns the rows appended since the last call as an array, and starts anew
// with room for as many.
func (t *texts) array() arrow.Array {
	arr := t.w.Finish(t.rows)
	t.rows = 0
	return arr
}

// record returns the rows built so far as a record, and starts anew.
func (c *changes) record() arrow.Record {
	cols := make([]arrow.Array, len(c.col))
	for i := range cols {
		if t := c.texts[i]; t != nil {
			cols[i] = t.array()
		} else {
			cols[i] = c.builder.Field(i).NewArray()
		}
	}
	rows := int64(len(c.kinds))
	if len(cols) > 0 {
		rows = int64(cols[0].Len()) // also of a user that ends no rows (match's parts)
	}
	rec := array.NewRecord(c.schema, cols, rows)
	for _, a := range cols {
		a.Release()
	}
	return rec
}

// row ends a row whose columns were appended, as kind.
func (c *changes) row(kind exec.RowKind) {
	c.kinds = append(c.kinds, kind)
	c.allIns = c.allIns && kind == exec.Insert
}

// emit sends the rows built so far to out.
func (c *changes) emit(ctx context.Context, out exec.Output) error {
	if len(c.kinds) == 0 {
		return nil
	}
	b := exec.Batch{Rec: c.record()}
	c.reserve(b.Rec)
	if !c.allIns {
		b.Kinds = c.kinds
	}
	err := out.Emit(ctx, b)
	b.Release()
	c.kinds, c.allIns = c.kinds[:0], true
	return err
}

// reserve sizes the builders for a batch like rec, the last one: they would otherwise
// grow from nothing again for every batch, copying their buffers as they double. So an
// operator holds about a batch's buffers until it closes.
func (c *changes) reserve(rec arrow.Record) {
	for i, col := range rec.Columns() {
		if c.texts[i] != nil {
			continue // it keeps its own buffers
		}
		c.builder.Field(i).Reserve(int(rec.NumRows()))
		if a, ok := col.(*array.Binary); ok {
			if offsets := a.ValueOffsets(); len(offsets) > 1 {
				c.builder.Field(i).(*array.BinaryBuilder).ReserveData(int(offsets[len(offsets)-1] - offsets[0]))
			}
		}
	}
}

// discard drops the rows built so far: the operator failed.
func (c *changes) discard() {
	c.record().Release()
	c.kinds, c.allIns = c.kinds[:0], true
}

func (c *changes) release() {
	c.builder.Release()
	for _, t := range c.texts {
		if t != nil {
			t.w.Release()
		}
	}
	c.pool.Close()
}

// snapshotNow takes a snapshot's synchronous and slow parts at once.
func snapshotNow(ctx context.Context, id int64, s exec.AsyncSnapshotter) ([]byte, error) {
	persist, err := s.SnapshotAsync(ctx, id)
	if err != nil {
		return nil, err
	}
	return persist()
}

// persistDelta returns the slow part of a keyed operator's snapshot: writing its delta
// for checkpoint id, then returning the handle that restores it, with the operator's
// watermark.
func persistDelta(st *KeyedState, id int64, d state.Delta, watermark int64) func() ([]byte, error) {
	return func() ([]byte, error) {
		if _, err := st.Store.WriteDelta(st.Namespace, id, d); err != nil {
			return nil, err
		}
		return json.Marshal(stateHandle{Namespace: st.Namespace, Checkpoint: id, Watermark: watermark})
	}
}

// readHandle reads the handle a keyed operator's snapshot returned, which must name the
// operator's own namespace.
func readHandle(handle []byte, st *KeyedState, operator string) (stateHandle, error) {
	var h stateHandle
	if err := json.Unmarshal(handle, &h); err != nil {
		return h, fmt.Errorf("%s state handle: %w", operator, err)
	}
	if st == nil || h.Namespace != st.Namespace {
		return h, fmt.Errorf("%s state handle names %q, not this operator", operator, h.Namespace)
	}
	return h, nil
}

// RescaleHandles returns the handles of a keyed operator's tasks restored at another
// parallelism, tasks, from those its old tasks snapshotted. Every task reads its own
// key groups from the same namespace and checkpoint; a window's watermark is the
// least of the old tasks', so no window that one of them had yet to fire is lost, and
// none fires twice (a fired window's state is gone).
func RescaleHandles(old [][]byte, tasks int) ([][]byte, error) {
	var merged stateHandle
	for i, data := range old {
		var h stateHandle
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, fmt.Errorf("state handle of task %d: %w", i, err)
		}
		if i == 0 {
			merged = h
			continue
		}
		if h.Namespace != merged.Namespace || h.Checkpoint != merged.Checkpoint {
			return nil, fmt.Errorf("the tasks' state handles name different state (%s@%d, %s@%d)", merged.Namespace, merged.Checkpoint, h.Namespace, h.Checkpoint)
		}
		merged.Watermark = min(merged.Watermark, h.Watermark)
	}
	data, err := json.Marshal(merged)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, tasks)
	for i := range out {
		out[i] = data
	}
	return out, nil
}
