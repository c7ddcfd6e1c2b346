package connector

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
)

// printSink writes each row as Flink's print connector does, +I[sensor_1, 35.8, 3],
// after "identifier> " when 'print-identifier' is set. Each batch is written with one
// Write call, so output is never held back.
type printSink struct {
	w   io.Writer
	enc *format.ChangelogEncoder
	buf []byte
}

var _ Sink = (*printSink)(nil)

func openPrint(spec SinkSpec) (*printSink, error) {
	o, err := NewOptions(spec.Table, []string{"print-identifier", "sink.parallelism", "standard-error"}, false, nil)
	if err != nil {
		return nil, err
	}
	if _, err := o.Int64("sink.parallelism", 1, 1, 1<<15); err != nil {
		return nil, err
	}
	toStderr, err := o.Bool("standard-error", false)
	if err != nil {
		return nil, err
	}
	w := spec.Stdout
	if toStderr {
		w = spec.Stderr
	}
	id, _ := spec.Table.Option("print-identifier")
	return &printSink{w: w, enc: format.NewChangelogEncoder(id, spec.Location).Typed(spec.Schema)}, nil
}

func (s *printSink) Process(_ context.Context, _ int, b exec.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	s.buf = format.AppendRows(s.buf[:0], s.enc, b)
	_, err := s.w.Write(s.buf)
	return err
}

func (s *printSink) Finish(context.Context) error { return nil }
func (s *printSink) Close() error                 { return nil }

// blackholeSink discards every row, as Flink's blackhole connector does. For tests of
// failover it can fail on purpose: 'test.fail-at-record' = 'k' fails at the k-th record
// it receives, with 'test.fail-mode' = 'once' (the first time in this process, the
// default) or 'always' (every time the sink starts over).
type blackholeSink struct {
	table  string
	failAt int64
	always bool
	seen   int64
}

var _ Sink = (*blackholeSink)(nil)

// failedOnce remembers the tables whose 'once' failure has happened in this process.
var failedOnce sync.Map

func openBlackhole(spec SinkSpec) (*blackholeSink, error) {
	o, err := NewOptions(spec.Table, []string{"test.fail-at-record", "test.fail-mode"}, false, nil)
	if err != nil {
		return nil, err
	}
	s := &blackholeSink{table: spec.Table.Name}
	if s.failAt, err = o.Int64("test.fail-at-record", 0, 0, math.MaxInt64); err != nil {
		return nil, err
	}
	switch mode := strings.ToLower(spec.Table.Options["test.fail-mode"]); mode {
	case "", "once":
	case "always":
		s.always = true
	default:
		return nil, o.Err("option 'test.fail-mode' must be 'once' or 'always', got '%s'", mode)
	}
	return s, nil
}

func (s *blackholeSink) Process(_ context.Context, _ int, b exec.Batch) error {
	before := s.seen
	s.seen += int64(b.Len())
	if s.failAt <= 0 || before >= s.failAt || s.seen < s.failAt {
		return nil
	}
	if !s.always {
		if _, done := failedOnce.LoadOrStore(s.table, true); done {
			return nil
		}
	}
	return fmt.Errorf("table %s: failing at record %d as 'test.fail-at-record' asks", s.table, s.failAt)
}

func (*blackholeSink) Finish(context.Context) error { return nil }
func (*blackholeSink) Close() error                 { return nil }
