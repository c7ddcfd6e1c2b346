package exec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Partition says how a stage's input reaches its parallel tasks.
type Partition int

const (
	// Forward sends upstream task i's output to task i (same parallelism).
	Forward Partition = iota
	// Hash sends each row to the task that owns its key's key group.
	Hash
	// Gather sends everything to a single task.
	Gather
)

// MaxParallelism is the number of key groups: keyed state is kept per key group, so it
// can be spread over any parallelism up to this.
const MaxParallelism = 128

// Input is an upstream stage of a stage, and how its rows reach the stage's tasks.
type Input struct {
	Stage     int
	Partition Partition
	HashKeys  []int // the input columns that key Hash partitioning
}

// Stage is a chain of operators run by Parallelism tasks. A source stage reads from
// readers; any other stage reads the output of its Inputs: rows of Inputs[i] reach its
// first operator as input i (a join has two). A stage may feed several others, each of
// which gets all its output.
type Stage struct {
	Name        string
	Parallelism int
	// NewReader opens the reader of a source stage's task (nil for other stages).
	NewReader func(task int) (Reader, error)
	Inputs    []Input // for non-source stages
	// NewChain builds a task's operators in data order, each emitting into the next (see
	// Chain) and the last into out; restored is what the task's operators snapshotted at
	// the checkpoint restored from, one entry per operator (nil when starting fresh).
	NewChain func(task int, out Output, restored [][]byte) ([]Operator, error)
	// Side marks the chain's side operators, by index (see Chain).
	Side []bool
	// Ops names the chain's operators, one per operator NewChain makes, for metrics.
	Ops []string
}

// Graph is a job's stages in data order: every stage's Input comes before it.
type Graph struct {
	Stages []Stage
	Mem    memory.Allocator // for the batches exchanges split
	// IdleTimeout, when positive, is how long a source task may go without input before
	// its watermark stops holding back the tasks it feeds (Flink's
	// table.exec.source.idle-timeout).
	IdleTimeout time.Duration

	metricsMu sync.Mutex
	metrics   *Metrics // see Metrics
	noMetrics bool     // for benchmarks: run without counting
}

// TaskID names one task: stage index and task index within the stage.
type TaskID struct{ Stage, Task int }

func (t TaskID) String() string { return fmt.Sprintf("%d.%d", t.Stage, t.Task) }

// Tasks lists the graph's tasks, stage by stage: a task's index in this list is its
// identity in checkpoints.
func (g *Graph) Tasks() []TaskID {
	var ids []TaskID
	for s, st := range g.Stages {
		for t := 0; t < st.Parallelism; t++ {
			ids = append(ids, TaskID{s, t})
		}
	}
	return ids
}

// Snapshotter is an operator or reader with state that belongs in checkpoints.
type Snapshotter interface {
	// Snapshot captures the state as of the barrier of checkpoint id, which reached the
	// operator after all records before it and none after it; the bytes returned are
	// restored into the operator's replacement after a failure.
	Snapshot(ctx context.Context, id int64) ([]byte, error)
}

// AsyncSnapshotter is a Snapshotter whose snapshot has a cheap synchronous part, which
// captures the state as of the barrier, and a slow part, which persists it while records
// keep flowing. The task acknowledges the checkpoint once persist returns.
type AsyncSnapshotter interface {
	SnapshotAsync(ctx context.Context, id int64) (persist func() ([]byte, error), err error)
}

// SnapshotMeter is a Snapshotter that reports the size of its last snapshot, for
// checkpoint statistics.
type SnapshotMeter interface {
	LastSnapshot() (bytesWritten, keysChanged int64)
}

// Restorer is a Reader or an Operator that can resume from what it snapshotted: its
// replacement after a failure is restored before it sees any input.
type Restorer interface {
	Restore(state []byte) error
}

// CommitListener is an operator (a sink) or a reader told when a checkpoint is
// complete, so it can make what it pre-committed for that checkpoint and every earlier
// one visible. It is called by the task's goroutine, between batches; a notice may be
// skipped when a later one arrives first, and the last one of a bounded job comes after
// its final checkpoint. A sink that restores a checkpoint commits what that checkpoint
// pre-committed itself, since its notice may have been lost in a crash.
type CommitListener interface {
	CheckpointComplete(ctx context.Context, id int64) error
}

// Checkpointing connects a running graph to its checkpoint coordinator.
type Checkpointing struct {
	// Aligned selects exactly-once barrier alignment; otherwise at-least-once.
	Aligned bool
	// Triggers delivers the ids of checkpoints to start; the sources receive them.
	Triggers <-chan int64
	// Ack receives each task's snapshot of a checkpoint: one state entry per operator
	// (the reader first, for source tasks).
	Ack func(task TaskID, id int64, state [][]byte, stats TaskStats)
	// Decline reports that a task could not persist its snapshot of checkpoint id.
	Decline func(task TaskID, id int64, err error)
	// Restored is the state to start from, by task (nil: start fresh).
	Restored map[TaskID][][]byte
	// Completed delivers the ids of completed checkpoints, for CommitListeners.
	Completed <-chan int64
	// Final, when set, is called once every task finished (bounded input): it takes
	// the job's final checkpoint and returns its id once complete, so that sinks commit
	// the last of their output through it.
	Final func(ctx context.Context) (int64, error)
	// Positions, when set, receives each source task's reader position as the task
	// closes, whether it finished or failed: without checkpoints, a restarted job's
	// sources continue from there.
	Positions func(task TaskID, position []byte)
	// Stop, when it delivers, stops the job gracefully: every source stops reading and
	// ends its output, the tasks end without firing what waits for event time, and Run
	// returns ErrStopped after the final checkpoint (see Final). With drain (true) the
	// sources first advance event time to the end, so every window fires.
	Stop <-chan bool
}

// RestoreError says a source could not resume from a checkpoint's position: what a
// completed checkpoint recorded is gone or damaged, which a restart would meet again.
type RestoreError struct {
	Task TaskID
	Err  error
}

func (e *RestoreError) Error() string {
	return fmt.Sprintf("restoring source of task %s: %v", e.Task, e.Err)
}
func (e *RestoreError) Unwrap() error { return e.Err }

// ErrStopped is what Run returns when the job ended because Stop asked it to.
var ErrStopped = errors.New("job stopped")

// TaskStats describes a task's part in a checkpoint.
type TaskStats struct {
	AlignmentNanos int64
	BytesWritten   int64 // state written by the snapshot, handles included
	KeysChanged    int64
}

// Run runs the graph until every source ended and every task finished, a task failed,
// or ctx is cancelled. Checkpointing may be nil (no checkpoints).
func (g *Graph) Run(parent context.Context, cp *Checkpointing) error {
	if cp == nil {
		cp = &Checkpointing{}
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	tasks, err := g.build(cp)
	if err != nil {
		return err
	}
	defer func() { // after every task and the trigger loop stopped
		for _, t := range tasks {
			t.close()
		}
	}()
	var running sync.WaitGroup
	errs := make([]error, len(tasks)+1) // the last: a failed commit notice
	for i, t := range tasks {
		running.Add(1)
		go func() {
			defer running.Done()
			if err := t.run(ctx); err != nil {
				errs[i] = err
				cancel(err)
			}
		}()
	}
	// Triggers go to every task: sources emit barriers, tasks that already finished
	// acknowledge with their final state, the others wait for the barriers.
	var triggering sync.WaitGroup
	var stopped atomic.Bool
	triggering.Add(1)
	go func() {
		defer triggering.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case id, ok := <-cp.Triggers:
				if !ok {
					return
				}
				for _, t := range tasks {
					t.trigger(ctx, id)
				}
			case drain := <-cp.Stop:
				for _, t := range tasks {
					t.stop(ctx, drain)
				}
				stopped.Store(true)
			case id := <-cp.Completed:
				for _, t := range tasks {
					// A commit cut short by the job's end is no failure: the next run's
					// restore commits what the checkpoint holds.
					if err := t.notifyComplete(ctx, id); err != nil && ctx.Err() == nil {
						errs[len(tasks)] = err
						cancel(err)
					}
				}
			}
		}
	}()
	running.Wait()
	var final error
	if errors.Join(errs[:len(tasks)]...) == nil && cp.Final != nil && ctx.Err() == nil {
		final = g.finalCheckpoint(ctx, cp, tasks)
	}
	cancel(nil)
	triggering.Wait()
	if errs = append(errs, final); errors.Join(errs...) != nil {
		return firstCause(errs)
	}
	if err := context.Cause(parent); err != nil {
		return err // the caller cancelled the job
	}
	if stopped.Load() {
		return ErrStopped
	}
	return nil
}

// finalCheckpoint takes the checkpoint of a job whose tasks all finished and commits
// it at every task.
func (g *Graph) finalCheckpoint(ctx context.Context, cp *Checkpointing, tasks []*task) error {
	id, err := cp.Final(ctx)
	if err != nil {
		return fmt.Errorf("final checkpoint: %w", err)
	}
	for _, t := range tasks {
		if err := t.notifyComplete(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// firstCause returns the first task error that is not a mere cancellation.
func firstCause(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// build creates every task and the channels between them.
func (g *Graph) build(cp *Checkpointing) (tasks []*task, err error) {
	// inputs[s][t] are the channels task t of stage s reads, sides[s][t] the operator
	// input each one feeds.
	inputs := make([][][]chan message, len(g.Stages))
	sides := make([][][]int, len(g.Stages))
	ready := make([][]chan int, len(g.Stages)) // ready[s][t]: the ready queue of task t
	// routes[s] are the stages s feeds: routes[s][r].outs[t] are the outlets task t of
	// stage s writes for the r-th of them, by target task.
	type fed struct {
		in   *Input
		outs [][]outlet
	}
	routes := make([][]fed, len(g.Stages))
	for s, st := range g.Stages {
		inputs[s] = make([][]chan message, st.Parallelism)
		sides[s] = make([][]int, st.Parallelism)
	}
	for s, st := range g.Stages {
		if st.NewReader != nil {
			continue
		}
		fanIn := 0 // input channels of each task
		for _, in := range st.Inputs {
			if in.Stage >= s || in.Stage < 0 {
				return nil, fmt.Errorf("stage %d: input stage %d must come before it", s, in.Stage)
			}
			if in.Partition == Forward && g.Stages[in.Stage].Parallelism != st.Parallelism {
				return nil, fmt.Errorf("stage %d: a forward input needs the parallelism of stage %d", s, in.Stage)
			}
			if in.Partition == Forward {
				fanIn++
			} else {
				fanIn += g.Stages[in.Stage].Parallelism
			}
		}
		capacity := channelCap(fanIn)
		ready[s] = make([]chan int, st.Parallelism)
		for d := range ready[s] {
			ready[s][d] = make(chan int, fanIn*capacity)
		}
		for side := range st.Inputs {
			in := &st.Inputs[side]
			r := fed{in: in, outs: make([][]outlet, g.Stages[in.Stage].Parallelism)}
			routes[in.Stage] = append(routes[in.Stage], r)
			for u := range r.outs {
				r.outs[u] = make([]outlet, st.Parallelism)
				for d := 0; d < st.Parallelism; d++ {
					if in.Partition == Forward && u != d {
						continue
					}
					ch := make(chan message, capacity)
					r.outs[u][d] = outlet{ch: ch, ready: ready[s][d], index: len(inputs[s][d])}
					inputs[s][d] = append(inputs[s][d], ch)
					sides[s][d] = append(sides[s][d], side)
				}
			}
		}
	}
	defer func() {
		if err != nil {
			for _, t := range tasks {
				t.close()
			}
		}
	}()
	metrics := g.Metrics()
	if g.noMetrics {
		metrics = nil
	}
	groups := alignGroups{}
	for s, st := range g.Stages {
		for i := 0; i < st.Parallelism; i++ {
			id := TaskID{s, i}
			t := &task{id: id, cp: cp, inputs: inputs[s][i], sides: sides[s][i], done: make(chan struct{}), triggers: make(chan int64, 1), stops: make(chan bool, 1), completions: make(chan struct{}, 1),
				watermark: MinWatermark, idleTimeout: g.IdleTimeout, lastInput: time.Now(), metrics: metrics.Task(id)}
			if ready[s] != nil {
				t.ready = ready[s][i]
			}
			restored := cp.Restored[id]
			var out WatermarkOutput = discard{}
			if len(routes[s]) > 0 {
				t.exchange = newExchange(g.Mem, i)
				for _, r := range routes[s] {
					t.exchange.addRoute(r.outs[i], r.in.Partition, r.in.HashKeys)
				}
				if t.metrics != nil {
					t.exchange.blocked = &t.metrics.blocked
				}
				out = t.exchange
			}
			if st.NewReader != nil {
				if t.reader, err = st.NewReader(i); err != nil {
					return nil, err
				}
				if len(restored) > 0 {
					if r, ok := t.reader.(Restorer); ok && restored[0] != nil {
						if err := r.Restore(restored[0]); err != nil {
							t.reader.Close()
							return nil, &RestoreError{Task: id, Err: err}
						}
					}
					restored = restored[1:]
				}
			}
			if t.ops, err = st.NewChain(i, out, restored); err != nil {
				if t.reader != nil {
					t.reader.Close()
				}
				return nil, err
			}
			t.chain = &Chain{Ops: t.ops, Last: out, Side: st.Side, Metrics: t.metrics}
			t.lates = make([]LateCounter, len(t.ops))
			for k, op := range t.ops {
				if _, ok := op.(Clocked); ok {
					t.clocked = true
				}
				if lc, ok := op.(LateCounter); ok {
					t.lates[k] = lc
				}
				if a, ok := op.(WatermarkAligned); ok && t.reader != nil && t.align == nil && a.WatermarkAlignment().Group != "" {
					t.align = groups.join(a)
				}
			}
			tasks = append(tasks, t)
		}
	}
	return tasks, nil
}

// discard is the output of a last stage, whose operators emit nothing.
type discard struct{}

func (discard) Emit(context.Context, Batch) error          { return nil }
func (discard) EmitWatermark(context.Context, int64) error { return nil }

// channelCapacity bounds the batches in flight between two tasks: a slow consumer
// blocks its producers (back-pressure) and memory stays bounded. A task with many
// input channels (a hash exchange from many tasks) has smaller ones, so that what it
// buffers in all stays about maxBuffered messages, down to minChannelCapacity each.
const (
	channelCapacity    = 8
	maxBuffered        = 64
	minChannelCapacity = 2
)

// channelCap is the capacity of each of a task's fanIn input channels.
func channelCap(fanIn int) int {
	if fanIn <= 0 {
		return channelCapacity
	}
	return max(minChannelCapacity, min(channelCapacity, maxBuffered/fanIn))
}
