package expr

import (
	"errors"
	"fmt"
)

// Errors returned by Compile and Eval; test with errors.Is. The message of a returned error
// is one sentence naming the value, e.g. "cannot cast 'abc' to INT".
var (
	// ErrDivisionByZero: integer or DECIMAL division or MOD by zero.
	ErrDivisionByZero = errors.New("division by zero")
	// ErrOverflow: a DECIMAL result that does not fit its precision.
	ErrOverflow = errors.New("numeric overflow")
	// ErrCast: a CAST (not TRY_CAST) of a value that does not convert.
	ErrCast = errors.New("invalid cast")
	// ErrInvalidArgument: an argument a function rejects, e.g. a bad LIKE escape.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrUnsupported: an expression, type or argument shape this package cannot compile,
	// or an input column that does not have the type the expression was bound to.
	ErrUnsupported = errors.New("unsupported expression")
)

// exprError carries a specific message while matching one of the sentinels above.
type exprError struct {
	kind error
	msg  string
}

func (e *exprError) Error() string { return e.msg }
func (e *exprError) Unwrap() error { return e.kind }

func newError(kind error, format string, args ...any) error {
	return &exprError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
