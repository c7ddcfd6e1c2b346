package ops

import (
	"context"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// watermarkNoter is an operator whose expressions read CURRENT_WATERMARK: it notes
// each watermark that passes it, for them, and passes it on.
type watermarkNoter struct {
	exec.Operator
	wm  *int64
	out exec.Output
}

var _ exec.WatermarkHandler = (*watermarkNoter)(nil)

func (w *watermarkNoter) ProcessWatermark(ctx context.Context, wm int64) error {
	*w.wm = wm
	return w.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
}

// Close closes the operator noted for.
func (w *watermarkNoter) Close() error { return w.Operator.(exec.Closer).Close() }

// noteWatermark returns the environment to compile exprs in, and a function that
// makes op a watermarkNoter when one of them reads CURRENT_WATERMARK.
func noteWatermark(env *expr.Env, out exec.Output, exprs ...planner.Expr) (*expr.Env, func(exec.Operator) exec.Operator) {
	reads := false
	for _, e := range exprs {
		reads = reads || planner.ReadsWatermark(e)
	}
	if !reads {
		return env, func(op exec.Operator) exec.Operator { return op }
	}
	wm := new(int64)
	*wm = exec.MinWatermark
	own := expr.Env{}
	if env != nil {
		own = *env
	}
	own.Watermark = func() int64 { return *wm }
	return &own, func(op exec.Operator) exec.Operator { return &watermarkNoter{Operator: op, wm: wm, out: out} }
}
