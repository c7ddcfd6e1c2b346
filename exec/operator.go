package exec

import (
	"context"
	"math"
)

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

// Stopper is a Reader that takes input its system will not send again (a socket). A
// graceful stop calls Stop, so that it takes no more, and then reads until io.EOF what
// it had taken: a stop loses nothing the process received, however long the final
// checkpoint takes.
type Stopper interface {
	Stop()
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

// Clocked is a Flusher whose output follows the clock (a processing-time watermark):
// its task flushes it at every poll, also while no input comes.
type Clocked interface {
	Flusher
	Clocked()
}

// Event time is milliseconds since the epoch, as TIMESTAMP(3) columns hold it. A
// watermark w says that event time has reached w: rows with a time at or before w may
// still arrive, but count as late.

// MinWatermark is the watermark before any; MaxWatermark ends event time, at the end of
// bounded input, so every window fires.
const (
	MinWatermark = math.MinInt64
	MaxWatermark = math.MaxInt64
)

// WatermarkHandler is an Operator that acts on event time. A task gives a watermark to
// the first handler of its chain; the handler emits what the watermark completes, then
// passes the watermark on with its output's EmitWatermark. Operators that are no
// handler are skipped: their rows are not delayed by watermarks.
type WatermarkHandler interface {
	ProcessWatermark(ctx context.Context, wm int64) error
}

// WatermarkOutput is an Output that carries watermarks too. Every Output a task gives
// its operators is one; an operator that generates watermarks emits them there.
type WatermarkOutput interface {
	Output
	EmitWatermark(ctx context.Context, wm int64) error
}

// Chain links a task's operators in data order: operator i emits into Output(i), which
// feeds operator i+1, and the last one feeds the task's output. A side operator (Side[i])
// is skipped: it gets rows only from an operator that holds it and emits into it
// directly (a sink for an aggregate's late rows), and its task still checkpoints,
// commits and closes it like the others.
type Chain struct {
	Ops  []Operator
	Last Output // nil: the last operator emits nothing
	Side []bool // by operator; nil: none is
	// Metrics, when set, counts the rows each link carries, once per batch, and notes
	// the watermark that reaches each operator. Only the task's goroutine may use the
	// chain then.
	Metrics *TaskMetrics
}

// main returns the first operator from i on that is not a side one, or len(Ops).
func (c *Chain) main(i int) int {
	for i < len(c.Ops) && i < len(c.Side) && c.Side[i] {
		i++
	}
	return i
}

// Output returns what operator i emits into.
func (c *Chain) Output(i int) WatermarkOutput { return chainLink{c, i + 1} }

type chainLink struct {
	c    *Chain
	next int
}

func (l chainLink) Emit(ctx context.Context, b Batch) error {
	next := l.c.main(l.next)
	if m := l.c.Metrics; m != nil {
		n := int64(b.Len())
		if from := m.op(l.next - 1); from != nil {
			from.out += n
		}
		if to := m.op(next); to != nil {
			to.in += n
		} else if next >= len(l.c.Ops) && l.c.Last != nil {
			m.out += n
		}
	}
	if next < len(l.c.Ops) {
		return l.c.Ops[next].Process(ctx, 0, b)
	}
	if l.c.Last == nil {
		return nil
	}
	return l.c.Last.Emit(ctx, b)
}

// EmitWatermark gives the watermark to the next handler of the chain, or to the task's
// output.
func (l chainLink) EmitWatermark(ctx context.Context, wm int64) error {
	for i := l.c.main(l.next); i < len(l.c.Ops); i = l.c.main(i + 1) {
		if m := l.c.Metrics.op(i); m != nil {
			m.Watermark.Store(wm)
		}
		if h, ok := l.c.Ops[i].(WatermarkHandler); ok {
			return h.ProcessWatermark(ctx, wm)
		}
	}
	if w, ok := l.c.Last.(WatermarkOutput); ok {
		return w.EmitWatermark(ctx, wm)
	}
	return nil
}

// LateCounter is an operator that drops rows arriving after event time passed them
// (late rows), and counts them.
type LateCounter interface {
	LateRows() int64
}
