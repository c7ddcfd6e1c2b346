package ops

import (
	"context"
	"errors"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
)

// evalError turns err, returned by evaluating the expression text over the whole of b,
// into an exec.EvalError that names the expression and the first row that fails on its
// own, with the row's origin when b has one. eval evaluates the expression over one
// row. Finding the row costs one evaluation per row up to it, on the error path only.
func evalError(mem memory.Allocator, op, text string, b exec.Batch, err error, eval func(rec arrow.Record) error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &exec.EvalError{Op: op, Expr: text, Err: err}
	if b.Rec == nil {
		return e
	}
	for i := 0; i < b.Len(); i++ {
		one := exec.TakeRecord(mem, b.Rec, []int32{int32(i)})
		rowErr := eval(one)
		one.Release()
		if rowErr != nil {
			e.Err = rowErr
			if b.Origin != nil {
				e.Row = b.Origin.Row(i)
			}
			break
		}
	}
	return e
}
