package ops

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// filter keeps the rows whose condition is TRUE.
type filter struct {
	pool *exec.BufferPool // of the kept rows' and the condition's buffers (see changes)
	pred expr.Predicate
	text string // the condition as SQL, for errors
	out  exec.Output
	sel  []int32
}

var _ exec.Operator = (*filter)(nil)

// NewFilter returns the operator of a Filter plan node: it emits the rows of each batch
// where the condition is TRUE.
func NewFilter(mem memory.Allocator, env *expr.Env, n *planner.Filter, out exec.Output) (exec.Operator, error) {
	env, noting := noteWatermark(env, out, n.Cond)
	pool := exec.NewBufferPool(mem, true)
	pred, err := expr.CompilePredicate(n.Cond, pool, env)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return noting(&filter{pool: pool, pred: pred, text: planner.ExprSQL(n.Cond, n.Input.Schema()), out: out}), nil
}

func (f *filter) Process(ctx context.Context, _ int, b exec.Batch) error {
	var err error
	f.sel, err = f.pred.Select(b.Rec, f.sel[:0])
	if err != nil {
		return evalError(f.pool, "Filter", f.text, b, err, func(rec arrow.Record) error {
			_, err := f.pred.Select(rec, nil)
			return err
		})
	}
	switch len(f.sel) {
	case 0:
		return nil
	case b.Len():
		return f.out.Emit(ctx, b)
	}
	kept := exec.Batch{Rec: exec.TakeRecord(f.pool, b.Rec, f.sel), Origin: exec.Selected(b.Origin, f.sel)}
	defer kept.Release()
	if b.Kinds != nil {
		kept.Kinds = make([]exec.RowKind, len(f.sel))
		for i, r := range f.sel {
			kept.Kinds[i] = b.Kinds[r]
		}
	}
	return f.out.Emit(ctx, kept)
}

func (f *filter) Close() error {
	f.pool.Close()
	return nil
}
