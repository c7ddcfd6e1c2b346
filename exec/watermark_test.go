package exec

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// stamper emits after its n-th row the watermark n*step.
type stamper struct {
	out  Output
	rows int64
	step int64
}

func (s *stamper) Process(ctx context.Context, _ int, b Batch) error {
	if err := s.out.Emit(ctx, b); err != nil {
		return err
	}
	s.rows++
	return s.out.(WatermarkOutput).EmitWatermark(ctx, s.rows*s.step)
}

// watermarkLog records the watermarks that reach it, in order.
type watermarkLog struct {
	mu  sync.Mutex
	wms []int64
	out Output
}

func (w *watermarkLog) Process(context.Context, int, Batch) error { return nil }
func (w *watermarkLog) ProcessWatermark(ctx context.Context, wm int64) error {
	w.mu.Lock()
	w.wms = append(w.wms, wm)
	w.mu.Unlock()
	return w.out.(WatermarkOutput).EmitWatermark(ctx, wm)
}

// TestWatermarksCombineAsTheMinimum: a task after an exchange sees the least watermark
// of its inputs, never going back, and MaxWatermark once every input ended.
func TestWatermarksCombineAsTheMinimum(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	log := &watermarkLog{}
	g := &Graph{Mem: mem, Stages: []Stage{
		{Name: "sources", Parallelism: 2,
			NewReader: func(task int) (Reader, error) {
				return &pacedReader{mem: mem, task: int64(task), interval: time.Millisecond, limit: map[int]int64{0: 40, 1: 20}[task]}, nil
			},
			NewChain: func(task int, out Output, _ [][]byte) ([]Operator, error) {
				// Source 1's event time runs ten times faster, and ends first: source 0
				// holds the watermark back to at most its 40.
				return []Operator{&stamper{out: out, step: map[int]int64{0: 1, 1: 10}[task]}}, nil
			}},
		{Name: "log", Parallelism: 1, Inputs: []Input{{Stage: 0, Partition: Gather}},
			NewChain: func(_ int, out Output, _ [][]byte) ([]Operator, error) {
				log.out = out
				return []Operator{log}, nil
			}},
	}}
	if err := g.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(log.wms) == 0 || log.wms[len(log.wms)-1] != MaxWatermark {
		t.Fatalf("watermarks %v do not end with MaxWatermark", log.wms)
	}
	for i, wm := range log.wms[:len(log.wms)-1] {
		if wm > 40 {
			t.Errorf("watermark %d passed the slow input's 40", wm)
		}
		if i > 0 && wm <= log.wms[i-1] {
			t.Errorf("watermarks went back or repeated: %v", log.wms)
		}
	}
}

// silentReader sends nothing for a while, then ends.
type silentReader struct{ until time.Time }

func (r *silentReader) Next(ctx context.Context) (Batch, error) {
	if time.Now().After(r.until) {
		return Batch{}, io.EOF
	}
	time.Sleep(5 * time.Millisecond)
	return Batch{}, nil
}
func (r *silentReader) Close() error { return nil }

// TestIdleSourceReleasesWatermark: a source with no input holds the watermark of the
// task it feeds back until it ends, unless it goes idle after the idle timeout. Its
// idleness passes through the tasks between them: here a relay stage, whose only
// input is idle, before a two-input stage.
func TestIdleSourceReleasesWatermark(t *testing.T) {
	for _, timeout := range []time.Duration{0, 30 * time.Millisecond} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		log := &watermarkLog{}
		until := time.Now().Add(time.Second)
		g := &Graph{Mem: mem, IdleTimeout: timeout, Stages: []Stage{
			{Name: "active", Parallelism: 1,
				NewReader: func(int) (Reader, error) {
					return &pacedReader{mem: mem, interval: time.Millisecond, limit: 50}, nil
				},
				NewChain: func(task int, out Output, _ [][]byte) ([]Operator, error) {
					return []Operator{&stamper{out: out, step: 1}}, nil
				}},
			{Name: "silent", Parallelism: 1,
				NewReader: func(int) (Reader, error) { return &silentReader{until: until}, nil },
				NewChain:  func(int, Output, [][]byte) ([]Operator, error) { return nil, nil }},
			{Name: "relay", Parallelism: 1, Inputs: []Input{{Stage: 1, Partition: Forward}},
				NewChain: func(int, Output, [][]byte) ([]Operator, error) { return nil, nil }},
			{Name: "log", Parallelism: 1, Inputs: []Input{{Stage: 0, Partition: Gather}, {Stage: 2, Partition: Gather}},
				NewChain: func(_ int, out Output, _ [][]byte) ([]Operator, error) {
					log.out = out
					return []Operator{log}, nil
				}},
		}}
		if err := g.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
		before := log.wms[:len(log.wms)-1] // those before the final MaxWatermark
		switch {
		case timeout == 0 && len(before) != 0:
			t.Errorf("without an idle timeout the silent source let watermarks %v through", before)
		case timeout > 0 && (len(before) == 0 || before[len(before)-1] != 50):
			t.Errorf("with an idle timeout the watermark reached only %v, want 50 before the end", before)
		}
	}
}
