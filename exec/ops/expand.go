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
// retraction reaches every set its row was counted in.
type expand struct {
	mem    memory.Allocator
	schema *arrow.Schema
	keys   int
	sets   [][]bool
	out    exec.Output
}

var _ exec.Operator = (*expand)(nil)

// NewExpand returns the operator of a plan's Expand node.
func NewExpand(mem memory.Allocator, n *planner.Expand, out exec.Output) exec.Operator {
	return &expand{mem: mem, schema: exec.ArrowSchema(n.Schema()), keys: n.Keys, sets: n.Sets, out: out}
}

func (e *expand) Process(ctx context.Context, _ int, b exec.Batch) error {
	rows := int(b.Rec.NumRows())
	if rows == 0 {
		return nil
	}
	cols := make([]arrow.Array, e.schema.NumFields())
	for s, set := range e.sets {
		if err := e.emit(ctx, b, rows, int64(s), set, cols); err != nil {
			return err
		}
	}
	return nil
}

// emit sends the copy of b for grouping set s.
func (e *expand) emit(ctx context.Context, b exec.Batch, rows int, s int64, set []bool, cols []arrow.Array) error {
	var made []arrow.Array // the arrays this copy allocated
	defer func() {
		for _, c := range made {
			c.Release()
		}
	}()
	for i, c := range b.Rec.Columns() {
		if i < e.keys && !set[i] {
			null := array.MakeArrayOfNull(e.mem, c.DataType(), rows)
			made = append(made, null)
			cols[i] = null
			continue
		}
		cols[i] = c
	}
	id := array.NewInt64Builder(e.mem)
	defer id.Release()
	id.Reserve(rows)
	for range rows {
		id.UnsafeAppend(s)
	}
	idCol := id.NewArray()
	made = append(made, idCol)
	cols[len(cols)-1] = idCol
	rec := array.NewRecord(e.schema, cols, int64(rows))
	defer rec.Release()
	return e.out.Emit(ctx, exec.Batch{Rec: rec, Kinds: b.Kinds, Origin: b.Origin})
}

func (e *expand) String() string { return "expand" }
