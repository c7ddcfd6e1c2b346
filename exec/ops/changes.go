package ops

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// changes builds an operator's output: rows appended column by column, each with its
// kind, and emitted as one batch (without kinds when every row is an insert).
type changes struct {
	builder *array.RecordBuilder
	col     []func(value) // appends to column i
	kinds   []exec.RowKind
	allIns  bool
}

func newChanges(mem memory.Allocator, schema planner.Schema) *changes {
	c := &changes{builder: array.NewRecordBuilder(mem, exec.ArrowSchema(schema)), allIns: true}
	for _, f := range c.builder.Fields() {
		c.col = append(c.col, appender(f))
	}
	return c
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
	b := exec.Batch{Rec: c.builder.NewRecord()}
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
	c.builder.Reserve(int(rec.NumRows()))
	for i, col := range rec.Columns() {
		var offsets []int32
		switch a := col.(type) {
		case *array.String:
			offsets = a.ValueOffsets()
		case *array.Binary:
			offsets = a.ValueOffsets()
		default:
			continue
		}
		if len(offsets) > 1 {
			size := int(offsets[len(offsets)-1] - offsets[0])
			c.builder.Field(i).(interface{ ReserveData(int) }).ReserveData(size)
		}
	}
}

// discard drops the rows built so far: the operator failed.
func (c *changes) discard() {
	c.builder.NewRecord().Release()
	c.kinds, c.allIns = c.kinds[:0], true
}

func (c *changes) release() { c.builder.Release() }

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
