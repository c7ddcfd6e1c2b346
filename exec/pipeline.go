package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Pipeline runs a source and a chain of operators: the source in one goroutine, the
// operators in another, joined by a bounded channel so that decoding and processing
// overlap and a slow consumer slows the source.
type Pipeline struct {
	Source Reader
	// Ops are the operators in data order; each emits into the next (the builder wires
	// their Outputs) and the first receives the source's batches.
	Ops []Operator
}

// Run runs the pipeline until the source ends, an operator fails or ctx is cancelled.
// It finishes every operator at the end of input and closes the source and every
// operator whatever happened.
func (p *Pipeline) Run(ctx context.Context) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		for _, op := range p.Ops {
			if c, ok := op.(Closer); ok {
				err = errors.Join(err, c.Close())
			}
		}
	}()
	batches := make(chan Batch, 4)
	var readErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(batches)
		readErr = p.read(ctx, batches)
	}()
	procErr := p.process(ctx, batches)
	cancel()
	for b := range batches { // unblock and drain the reader
		b.Release()
	}
	wg.Wait()
	closeErr := p.Source.Close()
	if procErr != nil {
		return procErr
	}
	if readErr != nil && !errors.Is(readErr, context.Canceled) {
		return readErr
	}
	if closeErr != nil {
		return fmt.Errorf("closing source: %w", closeErr)
	}
	return ctx.Err()
}

func (p *Pipeline) read(ctx context.Context, out chan<- Batch) error {
	for {
		b, err := p.Source.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if b.Rec == nil {
			continue
		}
		select {
		case out <- b:
		case <-ctx.Done():
			b.Release()
			return ctx.Err()
		}
	}
}

// flushInterval bounds how long a Flusher may hold back results.
const flushInterval = 50 * time.Millisecond

func (p *Pipeline) process(ctx context.Context, in <-chan Batch) error {
	tick := time.NewTicker(flushInterval)
	defer tick.Stop()
	dirty := false // input arrived since the last flush
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
			if dirty {
				if err := p.flush(ctx); err != nil {
					return err
				}
				dirty = false
			}
		case b, ok := <-in:
			if !ok {
				return p.finish(ctx)
			}
			err := p.Ops[0].Process(ctx, 0, b)
			b.Release()
			if err != nil {
				return err
			}
			dirty = true
		}
	}
}

// flush asks each Flusher, upstream first, to emit what it holds back.
func (p *Pipeline) flush(ctx context.Context) error {
	for _, op := range p.Ops {
		if f, ok := op.(Flusher); ok {
			if err := f.Flush(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish tells each operator, upstream first, that its input ended.
func (p *Pipeline) finish(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, op := range p.Ops {
		if f, ok := op.(Finisher); ok {
			if err := f.Finish(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}
