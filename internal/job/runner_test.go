package job

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
)

// fakeDurable records what the runner makes durable; the ids in fail fail to.
type fakeDurable struct {
	fail       map[int64]bool
	completed  []int64
	aborted    []int64
	savepoints []int64 // checkpoints written as savepoints
}

func (d *fakeDurable) complete(a checkpoint.Complete) error {
	if d.fail[a.ID] {
		return errors.New("disk full")
	}
	d.completed = append(d.completed, a.ID)
	return nil
}

func (d *fakeDurable) record(r CheckpointRecord) { d.aborted = append(d.aborted, r.ID) }

func (d *fakeDurable) savepoint(id int64, target string) (string, error) {
	d.savepoints = append(d.savepoints, id)
	return fmt.Sprintf("%s/savepoint-%d", target, id), nil
}

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
	runner *coordinatorRunner
}

func newRunnerTest(t *testing.T, cfg checkpoint.Config, d durable) *runnerTest {
	ctx, cancel := context.WithCancelCause(context.Background())
	rt := &runnerTest{t: t, ctx: ctx, cancel: cancel, ticks: make(chan time.Time), done: make(chan struct{}),
		tasks: []exec.TaskID{{Stage: 0, Task: 0}, {Stage: 1, Task: 0}}}
	r := newCoordinatorRunner(ctx, cfg, d, len(rt.tasks), 1)
	rt.runner = r
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

// TestCoordinatorRunnerSavepoint: a savepoint starts its checkpoint at once, whatever
// the interval, and is written once that checkpoint is durable, before the tasks hear
// of it; one whose checkpoint is aborted fails with the reason.
func TestCoordinatorRunnerSavepoint(t *testing.T) {
	d := &fakeDurable{}
	rt := newRunnerTest(t, checkpoint.Config{Interval: time.Hour, Timeout: time.Minute, MaxConcurrent: 1}, d)
	type result struct {
		path string
		err  error
	}
	got := make(chan result)
	take := func() {
		go func() {
			path, err := rt.runner.savepoint(context.Background(), "/sp")
			got <- result{path, err}
		}()
	}
	take()
	id := rt.triggered()
	rt.ackAll(id)
	if r := <-got; r.err != nil || r.path != fmt.Sprintf("/sp/savepoint-%d", id) || len(d.savepoints) != 1 {
		t.Fatalf("savepoint %q, %v; written %v", r.path, r.err, d.savepoints)
	}
	if done := <-rt.cp.Completed; done != id {
		t.Errorf("the tasks heard of checkpoint %d, not %d", done, id)
	}
	take()
	id = rt.triggered()
	rt.cp.Decline(rt.tasks[0], id, errors.New("disk gone"))
	if r := <-got; r.err == nil || !strings.Contains(r.err.Error(), "disk gone") {
		t.Errorf("an aborted savepoint returned %q, %v", r.path, r.err)
	}
}
