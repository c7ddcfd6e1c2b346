package ops

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// expand emits each batch once per grouping set, with the keys the set drops as NULL and
// the set's number as a last column. Each copy keeps the batch's row kinds, so a
// retraction reaches every set its row was counted in. The NULL and set-number columns
// depend only on the batch's length: they are kept for the next batch of that length.
type expand struct {
	mem    memory.Allocator
	schema *arrow.Schema
	keys   int
	sets   [][]bool
	out    exec.Output
	rows   int           // the length the cached columns have
	nulls  []arrow.Array // by key: an all-NULL column
	ids    []arrow.Array // by set: its number, on every row
	cols   []arrow.Array // a copy's columns, reused
}

var (
	_ exec.Operator = (*expand)(nil)
	_ exec.Closer   = (*expand)(nil)
)

// NewExpand returns the operator of a plan's Expand node.
func NewExpand(mem memory.Allocator, n *planner.Expand, out exec.Output) exec.Operator {
	s := exec.ArrowSchema(n.Schema())
	return &expand{mem: mem, schema: s, keys: n.Keys, sets: n.Sets, out: out,
		nulls: make([]arrow.Array, n.Keys), ids: make([]arrow.Array, len(n.Sets)), cols: make([]arrow.Array, s.NumFields())}
}

func (e *expand) Process(ctx context.Context, _ int, b exec.Batch) error {
	rows := int(b.Rec.NumRows())
	if rows == 0 {
		return nil
	}
	if rows != e.rows {
		e.release()
		e.rows = rows
	}
	defer clear(e.cols)
	for s, set := range e.sets {
		for i, c := range b.Rec.Columns() {
			e.cols[i] = c
			if i < e.keys && !set[i] {
				if e.nulls[i] == nil {
					e.nulls[i] = array.MakeArrayOfNull(e.mem, c.DataType(), rows)
				}
				e.cols[i] = e.nulls[i]
			}
		}
		if e.ids[s] == nil {
			e.ids[s] = e.constant(int64(s), rows)
		}
		e.cols[len(e.cols)-1] = e.ids[s]
		rec := array.NewRecord(e.schema, e.cols, int64(rows))
		err := e.out.Emit(ctx, exec.Batch{Rec: rec, Kinds: b.Kinds, Origin: b.Origin})
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// constant is a BIGINT column of rows times v.
func (e *expand) constant(v int64, rows int) arrow.Array {
	bld := array.NewInt64Builder(e.mem)
	defer bld.Release()
	bld.Reserve(rows)
	for range rows {
		bld.UnsafeAppend(v)
	}
	return bld.NewArray()
}

// Close releases the cached columns.
func (e *expand) Close() error {
	e.release()
	return nil
}

func (e *expand) release() {
	for _, cached := range [][]arrow.Array{e.nulls, e.ids} {
		for i, c := range cached {
			if c != nil {
				c.Release()
				cached[i] = nil
			}
		}
	}
}

func (e *expand) String() string { return "expand" }
