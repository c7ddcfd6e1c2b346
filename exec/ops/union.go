package ops

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// union passes on the batches of all its inputs (UNION ALL). The planner gave the inputs
// the same column types; their names and nullability may differ, so each batch is
// relabelled with the union's schema, sharing its columns. The task merges the inputs'
// watermarks and aligns their barriers.
type union struct {
	schema *arrow.Schema
	out    exec.Output
}

var _ exec.Operator = (*union)(nil)

// NewUnion returns the operator of a Union plan node.
func NewUnion(n *planner.Union, out exec.Output) exec.Operator {
	return &union{schema: exec.ArrowSchema(n.Schema()), out: out}
}

func (u *union) Process(ctx context.Context, _ int, b exec.Batch) error {
	if b.Rec.Schema().Equal(u.schema) {
		return u.out.Emit(ctx, b)
	}
	rec := array.NewRecord(u.schema, b.Rec.Columns(), b.Rec.NumRows())
	defer rec.Release()
	return u.out.Emit(ctx, exec.Batch{Rec: rec, Kinds: b.Kinds})
}
