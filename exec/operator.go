package exec

import "context"

// Operator consumes batches pushed by the task that runs it and emits results to the
// Output it was built with. A task calls Process from one goroutine only.
type Operator interface {
	// Process handles a batch that arrived on input in (0 for single-input operators).
	Process(ctx context.Context, in int, b Batch) error
}

// Finisher is an Operator that has more to emit once all its input has ended
// (the final watermark of bounded input).
type Finisher interface {
	Finish(ctx context.Context) error
}

// Closer is an Operator or Reader holding resources; Close is called once when its task
// ends, whether or not it failed.
type Closer interface {
	Close() error
}

// Output receives an operator's results. Emit does not take ownership of the batch.
type Output interface {
	Emit(ctx context.Context, b Batch) error
}

// OutputFunc adapts a function to Output.
type OutputFunc func(ctx context.Context, b Batch) error

// Emit calls f.
func (f OutputFunc) Emit(ctx context.Context, b Batch) error { return f(ctx, b) }

// Reader produces a source's batches; its task calls Next in a loop.
type Reader interface {
	// Next returns the next batch, which the caller owns. It returns io.EOF at the end of
	// bounded input, and an empty Batch (Rec == nil) with a nil error when nothing arrived
	// within a short poll interval, so that the task can do other work in between.
	Next(ctx context.Context) (Batch, error)
	Close() error
}

// SkipCounter is a Reader that skips malformed records (by its table's error policy)
// and counts them.
type SkipCounter interface {
	Skipped() int64
}

// Flusher is an Operator that holds back output to fold more input into it (a
// mini-batch). Its task calls Flush whenever its input goes idle and at least every
// flush interval, so results are late by at most that interval.
type Flusher interface {
	Flush(ctx context.Context) error
}
