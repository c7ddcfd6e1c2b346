package exec

import (
	"fmt"
	"strconv"
)

// Origin says where the rows of a batch were read, so that an error a row causes can
// name it (a file and line, a topic, partition and offset). A source sets it on the
// batches it returns; an operator that passes rows on keeps it (a filter narrows it
// to the rows it keeps); an exchange drops it, so after a shuffle or an aggregate an
// error names only its operator and expression. It is immutable once set, and valid
// as long as its batch.
type Origin interface {
	// Row describes where row i of the batch was read, e.g.
	// "table t, file /data/t.csv, line 3".
	Row(i int) string
}

// Selected returns the origin of the rows sel of a batch whose origin is o; nil when o
// is. sel must not change while the result is used.
func Selected(o Origin, sel []int32) Origin {
	if o == nil {
		return nil
	}
	return selectedOrigin{o, sel}
}

type selectedOrigin struct {
	o   Origin
	sel []int32
}

func (s selectedOrigin) Row(i int) string { return s.o.Row(int(s.sel[i])) }

// SeqOrigin is the origin of generated rows numbered First, First+Step, ...: the row's
// sequence number (1 for a generator's first row).
type SeqOrigin struct {
	Table string
	First uint64 // the sequence number of row 0
	Step  uint64
}

func (s SeqOrigin) Row(i int) string {
	return fmt.Sprintf("table %s, row %d", s.Table, s.First+uint64(i)*s.Step)
}

// LineOrigin is the origin of rows read as lines of a file or a stream: Where names
// the file or the stream, Lines holds each row's line number (1-based), and Files,
// when set, the file of each row that comes from another file than Where (a directory
// source's batch can span files).
type LineOrigin struct {
	Table string
	Where string // "file /data/t.csv", "socket localhost:9999"
	Lines []int64
	Files []FileRun // files after the first, by the row they start at
}

// FileRun is where a batch of a LineOrigin moves on to another file.
type FileRun struct {
	Row   int
	Where string
}

func (l *LineOrigin) Row(i int) string {
	where := l.Where
	for _, f := range l.Files {
		if f.Row > i {
			break
		}
		where = f.Where
	}
	line := "?"
	if i < len(l.Lines) {
		line = strconv.FormatInt(l.Lines[i], 10)
	}
	return fmt.Sprintf("table %s, %s, line %s", l.Table, where, line)
}

// EvalError is an expression that failed on the values of a row: an integer division
// by zero, a CAST that does not convert, a DECIMAL overflow. The same row fails the
// same way when it is read again, so no restart cures it.
type EvalError struct {
	Op   string // the operator that evaluated it: Project, Filter, ...
	Expr string // the expression as SQL
	Row  string // where the failing row was read (Origin.Row), "" when not known
	Err  error
}

func (e *EvalError) Error() string {
	if e.Row == "" {
		return fmt.Sprintf("expression %s (%s) failed: %v", e.Expr, e.Op, e.Err)
	}
	return fmt.Sprintf("expression %s failed on %s: %v", e.Expr, e.Row, e.Err)
}

func (e *EvalError) Unwrap() error { return e.Err }
