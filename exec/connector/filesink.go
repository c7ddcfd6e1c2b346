package connector

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
)

// ErrNotAppendOnly: an append-only sink received a row other than an insert.
var ErrNotAppendOnly = errors.New("sink accepts only inserts")

// FileSink is the filesystem sink: it writes the rows it receives, in the table's
// format, to one part file part-<uuid>-0.<format> in the directory 'path' (created if
// missing). It is append-only: an update or delete fails the job. The file is written
// under a hidden in-progress name (.part-<uuid>-0.<format>.inprogress), which readers
// such as the filesystem source skip, and on Finish or Close it is flushed, synced and
// renamed to its final name. A sink that failed removes its in-progress file.
// (Commit on checkpoint, rolling and partitions are not implemented yet.)
type FileSink struct {
	table  string
	dir    string
	name   string // the final file name
	enc    format.Encoder
	f      *os.File
	w      *bufio.Writer
	buf    []byte
	failed bool
	done   bool
}

var _ Sink = (*FileSink)(nil)

func openFileSink(spec SinkSpec) (*FileSink, error) {
	t := spec.Table
	o, err := NewOptions(t, []string{"path"}, true, nil)
	if err != nil {
		return nil, err
	}
	dir, err := o.Required("path")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(spec.Schema))
	for i, c := range spec.Schema {
		names[i] = c.Name
	}
	if phys := t.PhysicalSchema(); len(phys) == len(names) {
		for i, c := range phys {
			names[i] = c.Name // the table's column names, as Flink writes them
		}
	}
	enc, err := format.NewEncoder(o.Format(), names, t.Options, spec.Location)
	if err != nil {
		return nil, formatErr(o, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, WrapError(t, err)
	}
	id, err := newUUID()
	if err != nil {
		return nil, WrapError(t, err)
	}
	return &FileSink{
		table: t.Name,
		dir:   dir,
		name:  fmt.Sprintf("part-%s-0.%s", id, o.Format()),
		enc:   enc,
	}, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// Path returns the final path of the part file (which exists once committed).
func (s *FileSink) Path() string { return filepath.Join(s.dir, s.name) }

func (s *FileSink) inProgress() string { return filepath.Join(s.dir, "."+s.name+".inprogress") }

// Process writes the rows of b; see exec.Operator.
func (s *FileSink) Process(_ context.Context, _ int, b exec.Batch) error {
	if s.done || s.failed {
		return fmt.Errorf("table %s: filesystem sink is finished or has failed", s.table)
	}
	if b.Len() == 0 {
		return nil
	}
	for _, k := range b.Kinds {
		if k != exec.Insert {
			s.failed = true
			return &kindError{msg: "filesystem sink " + s.table + " accepts only inserts; the query produces updates", kind: ErrNotAppendOnly}
		}
	}
	if s.f == nil {
		f, err := os.OpenFile(s.inProgress(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			s.failed = true
			return wrapTable(s.table, err)
		}
		s.f = f
		s.w = bufio.NewWriterSize(f, 1<<20)
	}
	s.buf = format.AppendRows(s.buf[:0], s.enc, b)
	if _, err := s.w.Write(s.buf); err != nil {
		s.failed = true
		return wrapTable(s.table, err)
	}
	return nil
}

func wrapTable(table string, err error) error { return fmt.Errorf("table %s: %w", table, err) }

// Finish flushes, syncs and commits the part file.
func (s *FileSink) Finish(context.Context) error { return s.end() }

// Close commits the part file unless Finish did or the sink failed; a failed sink
// removes its in-progress file.
func (s *FileSink) Close() error { return s.end() }

func (s *FileSink) end() error {
	if s.done {
		return nil
	}
	s.done = true
	if s.f == nil {
		return nil
	}
	f := s.f
	s.f = nil
	if s.failed {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	err := s.w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.Path())
	}
	if err == nil {
		err = syncDir(s.dir)
	}
	if err != nil {
		return wrapTable(s.table, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
