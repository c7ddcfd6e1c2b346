package ops

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// project computes one output column per expression.
type project struct {
	schema *arrow.Schema
	exprs  []expr.Evaluator
	out    exec.Output
	cols   []arrow.Array
}

var _ exec.Operator = (*project)(nil)

// NewProject returns an operator that evaluates exprs over each batch; the row kinds
// pass through.
func NewProject(mem memory.Allocator, env *expr.Env, exprs []planner.Expr, schema planner.Schema, out exec.Output) (exec.Operator, error) {
	p := &project{schema: exec.ArrowSchema(schema), out: out, cols: make([]arrow.Array, len(exprs))}
	for _, e := range exprs {
		ev, err := expr.Compile(e, mem, env)
		if err != nil {
			return nil, err
		}
		p.exprs = append(p.exprs, ev)
	}
	return p, nil
}

func (p *project) Process(ctx context.Context, _ int, b exec.Batch) error {
	defer func() {
		for i, c := range p.cols {
			if c != nil {
				c.Release()
				p.cols[i] = nil
			}
		}
	}()
	for i, e := range p.exprs {
		col, err := e.Eval(b.Rec)
		if err != nil {
			return err
		}
		p.cols[i] = col
	}
	rec := array.NewRecord(p.schema, p.cols, b.Rec.NumRows())
	defer rec.Release()
	return p.out.Emit(ctx, exec.Batch{Rec: rec, Kinds: b.Kinds})
}
