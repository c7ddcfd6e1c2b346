package checkpoint

import (
	"fmt"
	"sort"
	"time"
)

// Ack is a task's acknowledgement of a checkpoint: its snapshot is taken and persisted.
type Ack struct {
	Checkpoint int64
	Task       int    // the task's index in the job's task list
	State      []byte // the task's handle to its state: what restoring it needs
	Stats      TaskStats
}

// TaskStats describes one task's part of a checkpoint.
type TaskStats struct {
	Alignment    time.Duration // from the first to the last barrier
	BytesWritten int64
	KeysChanged  int64
}

// Stats sums the tasks' statistics of a checkpoint: the longest alignment, and all the
// bytes and keys written.
func Stats(acks []Ack) TaskStats {
	var s TaskStats
	for _, a := range acks {
		s.Alignment = max(s.Alignment, a.Stats.Alignment)
		s.BytesWritten += a.Stats.BytesWritten
		s.KeysChanged += a.Stats.KeysChanged
	}
	return s
}

// Action is something the coordinator asks its runner to do.
type Action interface{ action() }

// Trigger starts checkpoint ID: the runner has the sources record their positions and
// emit barrier ID.
type Trigger struct{ ID int64 }

// Complete says every task acknowledged checkpoint ID: the runner writes its metadata
// durably and, once written, tells the sinks to commit. A failure to write it is reported
// back with Failed.
type Complete struct {
	ID      int64
	Acks    []Ack // ordered by task
	Started time.Time
}

// Abort says checkpoint ID will not complete; its partial state must not be used.
type Abort struct {
	ID     int64
	Reason string
}

// FailJob says more consecutive checkpoints failed than tolerated: the job fails over.
type FailJob struct{ Reason string }

func (Trigger) action()  {}
func (Complete) action() {}
func (Abort) action()    {}
func (FailJob) action()  {}

// Coordinator decides when checkpoints start, complete, time out and fail. It performs
// no I/O and reads no clock: its runner reports time, acknowledgements and failures, and
// carries out the actions returned. Its tests are therefore plain transcripts.
type Coordinator struct {
	cfg      Config
	tasks    int
	nextID   int64
	pending  map[int64]*pendingCheckpoint
	start    time.Time // when the coordinator started
	lastTrig time.Time
	lastEnd  time.Time // when the last checkpoint completed or failed
	failures int       // consecutive failed checkpoints
	failed   bool      // the job failed: nothing more to trigger
	final    bool      // the final checkpoint started: nothing more to trigger
}

type pendingCheckpoint struct {
	started time.Time
	acks    map[int]Ack
}

// NewCoordinator returns a coordinator for a job of tasks tasks whose next checkpoint
// is numbered nextID (one past the last completed one, after a recovery).
func NewCoordinator(cfg Config, tasks int, nextID int64, now time.Time) *Coordinator {
	return &Coordinator{cfg: cfg, tasks: tasks, nextID: nextID, pending: map[int64]*pendingCheckpoint{}, start: now, lastTrig: now}
}

// Tick reports the time: it may trigger a checkpoint and time out pending ones.
func (c *Coordinator) Tick(now time.Time) []Action {
	var out []Action
	for _, id := range c.pendingIDs() {
		if now.Sub(c.pending[id].started) >= c.cfg.Timeout {
			out = append(out, c.fail(now, id, fmt.Sprintf("checkpoint %d expired after %v", id, c.cfg.Timeout))...)
		}
	}
	if c.dueAt(now) {
		id := c.nextID
		c.nextID++
		c.pending[id] = &pendingCheckpoint{started: now, acks: map[int]Ack{}}
		c.lastTrig = now
		out = append(out, Trigger{ID: id})
	}
	return out
}

// TriggerFinal starts the final checkpoint of a job whose input ended, at once and
// whatever the interval, pause and concurrency limits.
func (c *Coordinator) TriggerFinal(now time.Time) Trigger {
	c.final = true
	return c.TriggerNow(now)
}

// TriggerNow starts a checkpoint at once, whatever the interval, pause and concurrency
// limits: the checkpoint of a savepoint the user asked for.
func (c *Coordinator) TriggerNow(now time.Time) Trigger {
	id := c.nextID
	c.nextID++
	c.pending[id] = &pendingCheckpoint{started: now, acks: map[int]Ack{}}
	c.lastTrig = now
	return Trigger{ID: id}
}

// dueAt reports whether a checkpoint should start now.
func (c *Coordinator) dueAt(now time.Time) bool {
	if c.failed || c.final || c.cfg.Interval <= 0 || len(c.pending) >= max(c.cfg.MaxConcurrent, 1) {
		return false
	}
	if c.cfg.MinPause > 0 && (len(c.pending) > 0 || (!c.lastEnd.IsZero() && now.Sub(c.lastEnd) < c.cfg.MinPause)) {
		return false // a minimum pause also means one checkpoint at a time, as in Flink
	}
	return now.Sub(c.lastTrig) >= c.cfg.Interval
}

// Ack records a task's acknowledgement; the last one completes the checkpoint, which
// subsumes older pending ones.
func (c *Coordinator) Ack(now time.Time, id int64, ack Ack) []Action {
	p, ok := c.pending[id]
	if !ok {
		return nil // aborted or subsumed meanwhile
	}
	p.acks[ack.Task] = ack
	if len(p.acks) < c.tasks {
		return nil
	}
	delete(c.pending, id)
	c.lastEnd = now
	c.failures = 0
	done := Complete{ID: id, Started: p.started}
	for _, a := range p.acks {
		done.Acks = append(done.Acks, a)
	}
	sort.Slice(done.Acks, func(i, j int) bool { return done.Acks[i].Task < done.Acks[j].Task })
	out := []Action{done}
	for _, older := range c.pendingIDs() {
		if older < id {
			delete(c.pending, older)
			out = append(out, Abort{ID: older, Reason: fmt.Sprintf("checkpoint %d was subsumed by checkpoint %d", older, id)})
		}
	}
	return out
}

// Failed reports that checkpoint id failed: a task declined it, or its metadata could
// not be written.
func (c *Coordinator) Failed(now time.Time, id int64, reason string) []Action {
	return c.fail(now, id, reason)
}

func (c *Coordinator) fail(now time.Time, id int64, reason string) []Action {
	delete(c.pending, id)
	c.lastEnd = now
	c.failures++
	out := []Action{Abort{ID: id, Reason: reason}}
	if c.failures > c.cfg.TolerableFailures && !c.failed {
		c.failed = true
		out = append(out, FailJob{Reason: fmt.Sprintf("%d consecutive checkpoints failed, more than the %d tolerated (execution.checkpointing.tolerable-failed-checkpoints); last: %s",
			c.failures, c.cfg.TolerableFailures, reason)})
	}
	return out
}

// Pending returns the ids of the checkpoints in progress, oldest first.
func (c *Coordinator) pendingIDs() []int64 {
	ids := make([]int64, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
