package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
)

// durable is where a coordinatorRunner makes completed checkpoints last: the
// checkpointer, or a test's stand-in.
type durable interface {
	complete(checkpoint.Complete) error
	record(CheckpointRecord)
	// savepoint writes a savepoint of completed checkpoint id under target.
	savepoint(id int64, target string) (string, error)
}

// coordinatorRunner drives a checkpoint.Coordinator for one attempt of a job: it feeds
// it ticks, acknowledgements and failures, and carries out its actions (triggering the
// sources, making checkpoints durable, telling the tasks they completed, failing the
// job). The graph talks to it through connect; its clock is the ticks given to run.
type coordinatorRunner struct {
	ctx       context.Context // the attempt's: ends when the graph stopped
	coord     *checkpoint.Coordinator
	cfg       checkpoint.Config
	durable   durable
	now       func() time.Time
	log       func(format string, args ...any)
	completed func(id int64) // told of each completed checkpoint

	triggers    chan int64
	acks        chan checkpoint.Ack
	declines    chan declined
	completions chan int64
	finals      chan *finalRequest
	final       *finalRequest // the final checkpoint, once the input ended
	savepoints  chan *savepointRequest
	pendingSPs  []*savepointRequest // triggered, waiting for their checkpoint
}

// savepointRequest asks for a savepoint under target; its checkpoint is id.
type savepointRequest struct {
	target string
	id     int64
	reply  chan savepointReply
}

type savepointReply struct {
	path string
	err  error
}

type declined struct {
	id  int64
	err error
}

type finalRequest struct {
	id    int64
	reply chan error
}

func newCoordinatorRunner(ctx context.Context, cfg checkpoint.Config, d durable, tasks int, nextID int64) *coordinatorRunner {
	return &coordinatorRunner{ctx: ctx, coord: checkpoint.NewCoordinator(cfg, tasks, nextID, time.Now()), cfg: cfg, durable: d,
		now: time.Now, log: func(string, ...any) {}, completed: func(int64) {},
		triggers: make(chan int64, 16), acks: make(chan checkpoint.Ack, 64), declines: make(chan declined, 64),
		completions: make(chan int64, 16), finals: make(chan *finalRequest), savepoints: make(chan *savepointRequest)}
}

// connect returns the graph's side of the runner.
func (r *coordinatorRunner) connect(tasks []exec.TaskID, restored map[exec.TaskID][][]byte) *exec.Checkpointing {
	index := map[exec.TaskID]int{}
	for i, t := range tasks {
		index[t] = i
	}
	return &exec.Checkpointing{
		Aligned:   r.cfg.Mode == checkpoint.ExactlyOnce,
		Triggers:  r.triggers,
		Completed: r.completions,
		Restored:  restored,
		Final: func(ctx context.Context) (int64, error) {
			req := &finalRequest{reply: make(chan error, 1)} // the runner sets its id
			select {
			case r.finals <- req:
			case <-ctx.Done():
				return 0, context.Cause(ctx)
			}
			select {
			case err := <-req.reply:
				return req.id, err
			case <-ctx.Done():
				return 0, context.Cause(ctx)
			}
		},
		Ack: func(task exec.TaskID, id int64, st [][]byte, stats exec.TaskStats) {
			data, _ := json.Marshal(st)
			ack := checkpoint.Ack{Checkpoint: id, Task: index[task], State: data, Stats: checkpoint.TaskStats{
				Alignment: time.Duration(stats.AlignmentNanos), BytesWritten: stats.BytesWritten + int64(len(data)), KeysChanged: stats.KeysChanged}}
			select {
			case r.acks <- ack:
			case <-r.ctx.Done():
			}
		},
		Decline: func(task exec.TaskID, id int64, err error) {
			select {
			case r.declines <- declined{id, fmt.Errorf("task %s: %w", task, err)}:
			case <-r.ctx.Done():
			}
		},
	}
}

// run serves the coordinator until the attempt ends; fail cancels the attempt.
func (r *coordinatorRunner) run(ticks <-chan time.Time, fail context.CancelCauseFunc) {
	defer func() {
		for _, req := range r.pendingSPs {
			req.reply <- savepointReply{err: errors.New("the job stopped before the savepoint's checkpoint completed")}
		}
	}()
	for {
		var actions []checkpoint.Action
		select {
		case <-r.ctx.Done():
			return
		case req := <-r.savepoints:
			t := r.coord.TriggerNow(r.now())
			req.id = t.ID
			r.pendingSPs = append(r.pendingSPs, req)
			actions = []checkpoint.Action{t}
		case now := <-ticks:
			actions = r.coord.Tick(now)
		case ack := <-r.acks:
			actions = r.coord.Ack(r.now(), ack.Checkpoint, ack)
		case d := <-r.declines:
			actions = r.coord.Failed(r.now(), d.id, d.err.Error())
		case req := <-r.finals:
			t := r.coord.TriggerFinal(r.now())
			req.id = t.ID
			r.final = req
			actions = []checkpoint.Action{t}
		}
		for _, a := range actions {
			if !r.act(a, fail) {
				return
			}
		}
	}
}

// act carries out one action; it returns false once the attempt ended.
func (r *coordinatorRunner) act(a checkpoint.Action, fail context.CancelCauseFunc) bool {
	switch a := a.(type) {
	case checkpoint.Trigger:
		select {
		case r.triggers <- a.ID:
		case <-r.ctx.Done():
			return false
		}
	case checkpoint.Complete:
		err := r.durable.complete(a)
		if err != nil {
			for _, b := range r.coord.Failed(r.now(), a.ID, err.Error()) {
				if f, ok := b.(checkpoint.FailJob); ok {
					fail(errors.New(f.Reason))
				}
			}
		} else {
			r.completed(a.ID)
			r.takeSavepoints(a.ID)
			select {
			case r.completions <- a.ID:
			default: // a later notice covers this one
			}
		}
		if r.final != nil && a.ID >= r.final.id {
			r.answer(err)
		}
	case checkpoint.Abort:
		r.pendingSPs = slices.DeleteFunc(r.pendingSPs, func(req *savepointRequest) bool {
			if req.id != a.ID {
				return false
			}
			req.reply <- savepointReply{err: fmt.Errorf("its checkpoint %d was aborted: %s", a.ID, a.Reason)}
			return true
		})
		if r.final != nil && a.ID == r.final.id {
			r.answer(fmt.Errorf("checkpoint %d aborted: %s", a.ID, a.Reason))
		}
		r.log("checkpoint %d aborted: %s", a.ID, a.Reason)
		r.durable.record(CheckpointRecord{ID: a.ID, Status: "ABORTED: " + a.Reason})
	case checkpoint.FailJob:
		fail(errors.New(a.Reason))
	}
	return true
}

// takeSavepoints writes the savepoints waiting for checkpoint id or an earlier one
// (which id subsumed), before the tasks hear it completed: until then, no later
// checkpoint can complete and merge its state away.
func (r *coordinatorRunner) takeSavepoints(id int64) {
	r.pendingSPs = slices.DeleteFunc(r.pendingSPs, func(req *savepointRequest) bool {
		if req.id > id {
			return false
		}
		path, err := r.durable.savepoint(id, req.target)
		req.reply <- savepointReply{path, err}
		return true
	})
}

// savepoint asks the runner for a savepoint under target and waits for it.
func (r *coordinatorRunner) savepoint(ctx context.Context, target string) (string, error) {
	req := &savepointRequest{target: target, reply: make(chan savepointReply, 1)}
	select {
	case r.savepoints <- req:
	case <-r.ctx.Done():
		return "", errors.New("the job stopped")
	case <-ctx.Done():
		return "", ctx.Err()
	}
	rep := <-req.reply
	return rep.path, rep.err
}

func (r *coordinatorRunner) answer(err error) {
	r.final.reply <- err
	r.final = nil
}
