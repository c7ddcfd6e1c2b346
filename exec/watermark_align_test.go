package exec

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// alignedStamper is a stamper in an alignment group that logs the watermark of its
// task after each row.
type alignedStamper struct {
	stamper
	task  int
	align Alignment
	log   *stampLog
}

func (s *alignedStamper) Process(ctx context.Context, in int, b Batch) error {
	if err := s.stamper.Process(ctx, in, b); err != nil {
		return err
	}
	s.log.add(s.task, s.rows*s.step)
	return nil
}

func (s *alignedStamper) WatermarkAlignment() Alignment { return s.align }
func (s *alignedStamper) CurrentWatermark() int64 {
	if s.rows == 0 {
		return MinWatermark
	}
	return s.rows * s.step
}

// stampLog records, in the order they happened, each task's watermark after each row.
type stampLog struct {
	mu      sync.Mutex
	current map[int]int64
	lead    int64 // the most task 0 was ahead of task 1 before task 1's last row
	last    int64 // task 1's last watermark
	at      time.Time
}

func (l *stampLog) add(task int, wm int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current[task], l.at = wm, time.Now()
	if w1, ok := l.current[1]; ok && w1 < l.last {
		l.lead = max(l.lead, l.current[0]-w1)
	}
}

// alignedSources runs two sources in one alignment group: task 0 reads fast, one unit
// of event time a row, task 1 slowly, four units a row, and ends first.
func alignedSources(t *testing.T, drift time.Duration) *stampLog {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	log := &stampLog{current: map[int]int64{}, last: 100}
	align := Alignment{Group: "g", MaxDrift: drift}
	if drift == 0 {
		align = Alignment{}
	}
	g := &Graph{Mem: mem, Stages: []Stage{
		{Name: "sources", Parallelism: 2,
			NewReader: func(task int) (Reader, error) {
				return &pacedReader{mem: mem, task: int64(task), interval: []time.Duration{0, 2 * time.Millisecond}[task], limit: []int64{400, 25}[task]}, nil
			},
			NewChain: func(task int, out Output, _ [][]byte) ([]Operator, error) {
				return []Operator{&alignedStamper{stamper: stamper{out: out, step: []int64{1, 4}[task]}, task: task,
					align: align, log: log}}, nil
			}},
		{Name: "sink", Parallelism: 1, Inputs: []Input{{Stage: 0, Partition: Gather}},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) { return nil, nil }},
	}}
	if err := g.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestAlignmentHoldsTheFastSource: a source ahead of its group by more than the drift
// reads nothing until the group catches up, and reads on alone once the others ended.
func TestAlignmentHoldsTheFastSource(t *testing.T) {
	log := alignedSources(t, 10*time.Millisecond)
	// Task 0 may read one row past the bound before task 1's next row is reported.
	if log.lead > 10+1 {
		t.Errorf("the fast source ran %d ahead of the slow one, more than the drift of 10", log.lead)
	}
	if log.current[0] != 400 || log.current[1] != 100 {
		t.Errorf("sources ended at %v, want 400 and 100: a source held after the others ended", log.current)
	}
	// Without alignment the fast source runs far ahead: the test sees the difference.
	if unaligned := alignedSources(t, 0); unaligned.lead <= 11 {
		t.Errorf("without alignment the fast source ran only %d ahead: the test cannot tell", unaligned.lead)
	}
}

// silentStamper is the operator of a source in an alignment group that never has a
// watermark.
type silentStamper struct{ align Alignment }

func (s silentStamper) Process(context.Context, int, Batch) error { return nil }
func (s silentStamper) WatermarkAlignment() Alignment             { return s.align }
func (s silentStamper) CurrentWatermark() int64                   { return MinWatermark }

// heldGraph is a graph of two sources of one alignment group, active's rows stamped
// a millisecond apart and a silent one without rows until until, into one task.
func heldGraph(mem memory.Allocator, active Reader, align Alignment, log *stampLog, until time.Time) *Graph {
	return &Graph{Mem: mem, Stages: []Stage{
		{Name: "active", Parallelism: 1,
			NewReader: func(int) (Reader, error) { return active, nil },
			NewChain: func(_ int, out Output, _ [][]byte) ([]Operator, error) {
				return []Operator{&alignedStamper{stamper: stamper{out: out, step: 1}, align: align, log: log}}, nil
			}},
		{Name: "silent", Parallelism: 1,
			NewReader: func(int) (Reader, error) { return &silentReader{until: until}, nil },
			NewChain:  func(int, Output, [][]byte) ([]Operator, error) { return []Operator{silentStamper{align}}, nil }},
		{Name: "end", Parallelism: 1, Inputs: []Input{{Stage: 0, Partition: Gather}, {Stage: 1, Partition: Gather}},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) { return nil, nil }},
	}}
}

// TestHeldSourceTakesCheckpointsAndGoesOnWhenOthersIdle: a source held by a member of its
// group that has no input acknowledges checkpoints while held, and reads on once that
// member is idle for the idle timeout.
func TestHeldSourceTakesCheckpointsAndGoesOnWhenOthersIdle(t *testing.T) {
	for _, timeout := range []time.Duration{0, 30 * time.Millisecond} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		until := time.Now().Add(time.Second)
		align := Alignment{Group: "g", MaxDrift: time.Millisecond}
		log := &stampLog{current: map[int]int64{}}
		g := heldGraph(mem, &pacedReader{mem: mem, limit: 50}, align, log, until)
		g.IdleTimeout = timeout
		var acked sync.Map
		triggers := make(chan int64, 1)
		go func() { // once the active source is held
			time.Sleep(100 * time.Millisecond)
			triggers <- 1
		}()
		cp := &Checkpointing{Aligned: true, Triggers: triggers, Ack: func(task TaskID, _ int64, _ [][]byte, _ TaskStats) {
			acked.Store(task, time.Now())
		}}
		if err := g.Run(context.Background(), cp); err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
		if at, ok := acked.Load(TaskID{0, 0}); !ok || !at.(time.Time).Before(until) {
			t.Errorf("timeout %v: the held source acknowledged the checkpoint at %v, not before the silent one ended", timeout, at)
		}
		if log.current[0] != 50 {
			t.Fatalf("timeout %v: the active source read %d rows of 50", timeout, log.current[0])
		}
		switch early := log.at.Before(until); {
		case timeout == 0 && early:
			t.Errorf("without an idle timeout the source read past the silent member of its group")
		case timeout > 0 && !early:
			t.Errorf("with an idle timeout the source stayed held by its idle group member until it ended")
		}
	}
}

// committingReader is a pacedReader that records when it is told of a completed
// checkpoint.
type committingReader struct {
	*pacedReader
	told chan time.Time
}

func (r *committingReader) CheckpointComplete(context.Context, int64) error {
	select {
	case r.told <- time.Now():
	default:
	}
	return nil
}

// TestHeldSourceCommits: a source held by its alignment group still tells its reader
// of a completed checkpoint at once (a Kafka source commits its offsets then), not when
// the group lets it read again.
func TestHeldSourceCommits(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	until := time.Now().Add(time.Second)
	align := Alignment{Group: "g", MaxDrift: time.Millisecond}
	log := &stampLog{current: map[int]int64{}}
	reader := &committingReader{&pacedReader{mem: mem, limit: 50}, make(chan time.Time, 1)}
	g := heldGraph(mem, reader, align, log, until)
	triggers, completed := make(chan int64, 1), make(chan int64, 1)
	var acks atomic.Int32
	go func() { // once the active source is held
		time.Sleep(100 * time.Millisecond)
		triggers <- 1
	}()
	cp := &Checkpointing{Aligned: true, Triggers: triggers, Completed: completed,
		Ack: func(TaskID, int64, [][]byte, TaskStats) {
			if acks.Add(1) == 3 {
				completed <- 1
			}
		}}
	if err := g.Run(context.Background(), cp); err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	select {
	case at := <-reader.told:
		if !at.Before(until) {
			t.Errorf("the held source told its reader of the checkpoint at %v, after its group let it go at %v", at, until)
		}
	default:
		t.Error("the reader was never told of the completed checkpoint")
	}
	if log.at.Before(until) {
		t.Error("the source read past the silent member of its group")
	}
}
