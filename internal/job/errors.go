package job

import (
	"errors"
	"os"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
)

// unrecoverable marks an error no restart can cure: the job fails at once.
type unrecoverable struct{ err error }

func (e *unrecoverable) Error() string { return e.err.Error() }
func (e *unrecoverable) Unwrap() error { return e.err }

// Unrecoverable reports whether err is one that restarting cannot cure: invalid or
// unknown options, a missing input path, a plan that does not match its checkpoints,
// damaged state with no usable fallback, a source that cannot resume from its
// checkpointed position, a malformed record under the 'fail' error policy, an
// expression that fails on a row's values.
func Unrecoverable(err error) bool {
	var u *unrecoverable
	var r *exec.RestoreError
	var p *format.ParseError // a malformed record that fails the job is read again on replay
	var e *exec.EvalError    // so is the row an expression fails on
	return errors.As(err, &u) || errors.As(err, &r) || errors.As(err, &p) || errors.As(err, &e) || errors.Is(err, connector.ErrInvalidOption) || errors.Is(err, connector.ErrDamaged) ||
		errors.Is(err, connector.ErrUnknownConnector) || errors.Is(err, os.ErrNotExist)
}

// fatal marks err as unrecoverable.
func fatal(err error) error {
	if err == nil {
		return nil
	}
	return &unrecoverable{err}
}
