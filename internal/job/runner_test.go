package job

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
)

// fakeDurable records what the runner makes durable; the ids in fail fail to.
type fakeDurable struct {
	fail      map[int64]bool
	completed []int64
	aborted   []int64
}

func (d *fakeDurable) complete(a checkpoint.Complete) error {
	if d.fail[a.ID] {
		return errors.New("disk full")
	}
	d.completed = append(d.completed, a.ID)
	return nil
}

func (d *fakeDurable) record(r CheckpointRecord) { d.aborted = append(d.aborted, r.ID) }

// runnerTest is a runner of two tasks driven by hand: ticks, acknowledgements.
type runnerTest struct {
	t      *testing.T
	ctx    context.Context
	cancel context.CancelCauseFunc
	cp     *exec.Checkpointing
	ticks  chan time.Time
	t0     time.Time
	done   chan struct{}
	tasks  []exec.TaskID
}

func newRunnerTest(t *testing.T, cfg checkpoint.Config, d durable) *runnerTest {
	ctx, cancel := context.WithCancelCause(context.Background())
	rt := &runnerTest{t: t, ctx: ctx, cancel: cancel, ticks: make(chan time.Time), done: make(chan struct{}),
		tasks: []exec.TaskID{{Stage: 0, Task: 0}, {Stage: 1, Task: 0}}}
	r := newCoordinatorRunner(ctx, cfg, d, len(rt.tasks), 1)
	rt.t0 = time.Now()
	rt.cp = r.connect(rt.tasks, nil)
	go func() {
		defer close(rt.done)
		r.run(rt.ticks, cancel)
	}()
	t.Cleanup(func() {
		cancel(nil)
		<-rt.done
	})
	return rt
}

func (rt *runnerTest) tick(at time.Duration) { rt.ticks <- rt.t0.Add(at) }

func (rt *runnerTest) triggered() int64 {
	select {
	case id := <-rt.cp.Triggers:
		return id
	case <-time.After(5 * time.Second):
		rt.t.Fatal("no trigger")
		return 0
	}
}

func (rt *runnerTest) ackAll(id int64) {
	for _, task := range rt.tasks {
		rt.cp.Ack(task, id, [][]byte{[]byte("state")}, exec.TaskStats{})
	}
}

// TestCoordinatorRunner: ticks trigger checkpoints at the interval, the last ack makes
// one durable and tells the tasks, and a checkpoint that cannot be made durable fails
// the job once more fail than tolerated.
func TestCoordinatorRunner(t *testing.T) {
	d := &fakeDurable{fail: map[int64]bool{2: true}}
	rt := newRunnerTest(t, checkpoint.Config{Interval: time.Second, Timeout: time.Minute, MaxConcurrent: 1}, d)
	rt.tick(1500 * time.Millisecond)
	if id := rt.triggered(); id != 1 {
		t.Fatalf("triggered %d", id)
	}
	rt.ackAll(1)
	select {
	case id := <-rt.cp.Completed:
		if id != 1 || len(d.completed) != 1 {
			t.Fatalf("completed %d, durable %v", id, d.completed)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("checkpoint 1 did not complete")
	}
	rt.tick(3 * time.Second)
	if id := rt.triggered(); id != 2 {
		t.Fatalf("triggered %d", id)
	}
	rt.ackAll(2)
	<-rt.ctx.Done()
	if cause := context.Cause(rt.ctx); cause == nil || !strings.Contains(cause.Error(), "disk full") {
		t.Errorf("the job failed with %v", cause)
	}
}

// TestCoordinatorRunnerFinal: the final checkpoint starts at once, whatever the
// interval, and Final returns its id once it is durable.
func TestCoordinatorRunnerFinal(t *testing.T) {
	d := &fakeDurable{}
	rt := newRunnerTest(t, checkpoint.Config{Interval: time.Hour, Timeout: time.Minute, MaxConcurrent: 1}, d)
	got := make(chan int64)
	go func() {
		id, err := rt.cp.Final(rt.ctx)
		if err != nil {
			t.Error(err)
		}
		got <- id
	}()
	id := rt.triggered()
	rt.ackAll(id)
	if final := <-got; final != id || len(d.completed) != 1 || d.completed[0] != id {
		t.Errorf("final %d, triggered %d, durable %v", final, id, d.completed)
	}
}
