package connector

import (
	"context"
	"io"

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
	o, err := newOptions(spec.Table, []string{"print-identifier", "sink.parallelism", "standard-error"}, false, nil)
	if err != nil {
		return nil, err
	}
	if _, err := o.int64Opt("sink.parallelism", 1, 1, 1<<15); err != nil {
		return nil, err
	}
	toStderr, err := o.boolOpt("standard-error", false)
	if err != nil {
		return nil, err
	}
	w := spec.Stdout
	if toStderr {
		w = spec.Stderr
	}
	id, _ := spec.Table.Option("print-identifier")
	return &printSink{w: w, enc: format.NewChangelogEncoder(id, spec.Location)}, nil
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

// blackholeSink discards every row, as Flink's blackhole connector does.
type blackholeSink struct{}

var _ Sink = blackholeSink{}

func openBlackhole(spec SinkSpec) (blackholeSink, error) {
	_, err := newOptions(spec.Table, nil, false, nil)
	return blackholeSink{}, err
}

func (blackholeSink) Process(context.Context, int, exec.Batch) error { return nil }
func (blackholeSink) Finish(context.Context) error                   { return nil }
func (blackholeSink) Close() error                                   { return nil }
