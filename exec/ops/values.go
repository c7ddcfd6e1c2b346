package ops

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// values reads the rows of a VALUES clause: one batch, then the end. Its state says
// whether it emitted the batch, so that a job restored after it does not emit it again.
type values struct {
	mem  memory.Allocator
	env  *expr.Env
	n    *planner.Values
	done bool
}

var (
	_ exec.Reader      = (*values)(nil)
	_ exec.Snapshotter = (*values)(nil)
	_ exec.Restorer    = (*values)(nil)
)

// NewValues returns the reader of a Values plan node with tuples.
func NewValues(mem memory.Allocator, env *expr.Env, n *planner.Values) exec.Reader {
	return &values{mem: mem, env: env, n: n}
}

func (v *values) Next(context.Context) (exec.Batch, error) {
	if v.done {
		return exec.Batch{}, io.EOF
	}
	rec, err := v.evaluate()
	if err != nil {
		return exec.Batch{}, err
	}
	v.done = true
	return exec.Batch{Rec: rec, Origin: valuesOrigin{}}, nil
}

// valuesOrigin names a row of VALUES by its place.
type valuesOrigin struct{}

func (valuesOrigin) Row(i int) string { return fmt.Sprintf("VALUES row %d", i+1) }

// evaluate computes each tuple's expressions over one empty row and concatenates them
// into columns.
func (v *values) evaluate() (arrow.Record, error) {
	one := array.NewRecord(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	schema := exec.ArrowSchema(v.n.Schema())
	cols := make([]arrow.Array, len(v.n.Names))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c := range cols {
		parts := make([]arrow.Array, 0, len(v.n.Tuples))
		release := func() {
			for _, p := range parts {
				p.Release()
			}
		}
		for k, t := range v.n.Tuples {
			ev, err := expr.Compile(t[c], v.mem, v.env)
			if err != nil {
				release()
				return nil, err
			}
			a, err := ev.Eval(one)
			if err != nil {
				release()
				return nil, &exec.EvalError{Op: "Values", Expr: planner.ExprSQL(t[c], nil), Row: valuesOrigin{}.Row(k), Err: err}
			}
			parts = append(parts, a)
		}
		col, err := array.Concatenate(parts, v.mem)
		release()
		if err != nil {
			return nil, fmt.Errorf("VALUES column %d: %w", c+1, err)
		}
		cols[c] = col
	}
	return array.NewRecord(schema, cols, int64(len(v.n.Tuples))), nil
}

func (v *values) Snapshot(context.Context, int64) ([]byte, error) {
	if v.done {
		return []byte{1}, nil
	}
	return []byte{0}, nil
}

func (v *values) Restore(state []byte) error {
	v.done = len(state) == 1 && state[0] == 1
	return nil
}

func (v *values) Close() error { return nil }
