package ops

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// filter keeps the rows whose condition is TRUE.
type filter struct {
	mem  memory.Allocator
	pred expr.Predicate
	out  exec.Output
	sel  []int32
}

var _ exec.Operator = (*filter)(nil)

// NewFilter returns an operator that emits the rows of each batch where cond is TRUE.
func NewFilter(mem memory.Allocator, env *expr.Env, cond planner.Expr, out exec.Output) (exec.Operator, error) {
	pred, err := expr.CompilePredicate(cond, mem, env)
	if err != nil {
		return nil, err
	}
	return &filter{mem: mem, pred: pred, out: out}, nil
}

func (f *filter) Process(ctx context.Context, _ int, b exec.Batch) error {
	var err error
	f.sel, err = f.pred.Select(b.Rec, f.sel[:0])
	if err != nil {
		return err
	}
	switch len(f.sel) {
	case 0:
		return nil
	case b.Len():
		return f.out.Emit(ctx, b)
	}
	kept := exec.Batch{Rec: exec.TakeRecord(f.mem, b.Rec, f.sel)}
	defer kept.Release()
	if b.Kinds != nil {
		kept.Kinds = make([]exec.RowKind, len(f.sel))
		for i, r := range f.sel {
			kept.Kinds[i] = b.Kinds[r]
		}
	}
	return f.out.Emit(ctx, kept)
}
