package streamsql

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// jobID names a job's directory under the state directory: the same statement, planned
// the same way, finds its checkpoints again after a restart of the process.
func (s *Session) jobID(plan planner.Node, parallelism int) string {
	text := planner.Explain(plan, func(n planner.Node) int { return s.tasksOf(n, parallelism) })
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\n%s", parallelism, text)))
	return "job-" + hex.EncodeToString(sum[:8])
}

// runJob runs a job to its end: it takes checkpoints as configured, and after a failure
// restarts it by the restart strategy from the latest completed checkpoint.
func (s *Session) runJob(ctx context.Context, j *job) error {
	cfg, err := checkpoint.ParseConfig(s.settings)
	if err != nil {
		return err
	}
	strategy, err := checkpoint.ParseRestartStrategy(s.settings, cfg.Interval > 0)
	if err != nil {
		return err
	}
	var ck *checkpointer
	if cfg.Interval <= 0 && strategy.String() != "none" {
		fmt.Fprintf(s.cfg.Err, "job %s: checkpointing is off: after a failure it restarts with empty state and its sources go on from where they were (at-most-once)\n", j.id)
	}
	for _, table := range j.unreplayable {
		if cfg.Interval > 0 {
			fmt.Fprintf(s.cfg.Err, "job %s: table %s cannot replay what it delivered: after a failure, what it sent since the last checkpoint is lost (at-most-once; 'source.wal' = 'true' keeps a socket's input)\n", j.id, table)
		}
	}
	if cfg.Interval > 0 {
		if ck, err = s.openCheckpointer(j, cfg); err != nil {
			return err
		}
		defer ck.close()
	}
	for attempt := 1; ; attempt++ {
		err := s.runAttempt(ctx, j, ck)
		s.reportSkipped(j)
		if err == nil && ck != nil {
			// A finished job's checkpoints have served: running it again starts over.
			return ck.discard()
		}
		if err == nil || ctx.Err() != nil {
			return err
		}
		delay, ok := strategy.Restart(time.Now())
		if !ok {
			return err
		}
		fmt.Fprintf(s.cfg.Err, "job %s failed: %v; restart %d in %v (%s)\n", j.id, err, attempt, delay, strategy)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return err
		}
	}
}

func (s *Session) reportSkipped(j *job) {
	for _, r := range j.readers {
		if sc, ok := r.reader.(exec.SkipCounter); ok && sc.Skipped() > 0 {
			fmt.Fprintf(s.cfg.Err, "table %s: skipped %d malformed records\n", r.table, sc.Skipped())
		}
	}
	j.readers = nil
	var late int64
	for _, l := range j.late {
		late += l.LateRows()
	}
	if late > 0 {
		fmt.Fprintf(s.cfg.Err, "job %s: dropped %d late rows, behind the watermark\n", j.id, late)
	}
	routed := map[string]int64{}
	for _, r := range j.routed {
		routed[r.table] += r.LateRows()
	}
	for table, n := range routed {
		if n > 0 {
			fmt.Fprintf(s.cfg.Err, "job %s: wrote %d late rows, behind the watermark, to table %s\n", j.id, n, table)
		}
	}
	j.late, j.routed = nil, nil
}

// runAttempt runs the graph once, from the latest completed checkpoint if there is one.
// Without checkpoints, state starts empty and the sources continue from where the last
// attempt left them: nothing is replayed (at-most-once).
func (s *Session) runAttempt(ctx context.Context, j *job, ck *checkpointer) error {
	if ck == nil {
		var mu sync.Mutex
		positions := map[exec.TaskID][][]byte{}
		err := j.graph.Run(ctx, &exec.Checkpointing{Restored: j.positions, Positions: func(task exec.TaskID, pos []byte) {
			mu.Lock()
			positions[task] = [][]byte{pos}
			mu.Unlock()
		}})
		j.positions = positions
		return err
	}
	tasks := j.graph.Tasks()
	restored, nextID, err := ck.restore(tasks, s.cfg.Err)
	if err != nil {
		return err
	}
	if restored != nil {
		fmt.Fprintf(s.cfg.Err, "job %s: restoring checkpoint %d\n", j.id, nextID-1)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	coord := checkpoint.NewCoordinator(ck.cfg, len(tasks), nextID, time.Now())
	triggers := make(chan int64, 16)
	acks := make(chan checkpoint.Ack, 64)
	type declined struct {
		id  int64
		err error
	}
	declines := make(chan declined, 64)
	completions := make(chan int64, 16)
	type finalRequest struct {
		id    int64
		reply chan error
	}
	finals := make(chan *finalRequest)
	index := map[exec.TaskID]int{}
	for i, t := range tasks {
		index[t] = i
	}
	cp := &exec.Checkpointing{
		Aligned:   ck.cfg.Mode == checkpoint.ExactlyOnce,
		Triggers:  triggers,
		Completed: completions,
		Restored:  restored,
		Final: func(ctx context.Context) (int64, error) {
			req := &finalRequest{reply: make(chan error, 1)} // the runner sets its id
			select {
			case finals <- req:
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
			case acks <- ack:
			case <-ctx.Done():
			}
		},
		Decline: func(task exec.TaskID, id int64, err error) {
			select {
			case declines <- declined{id, fmt.Errorf("task %s: %w", task, err)}:
			case <-ctx.Done():
			}
		},
	}
	done := make(chan struct{})
	go func() { // the coordinator's runner: ticks, acknowledgements, actions
		defer close(done)
		var final *finalRequest // the final checkpoint, once the input ended
		answer := func(err error) {
			if final != nil {
				final.reply <- err
				final = nil
			}
		}
		tick := time.NewTicker(min(ck.cfg.Interval/4+time.Millisecond, 100*time.Millisecond))
		defer tick.Stop()
		for {
			var actions []checkpoint.Action
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				actions = coord.Tick(now)
			case ack := <-acks:
				actions = coord.Ack(time.Now(), ack.Checkpoint, ack)
			case d := <-declines:
				actions = coord.Failed(time.Now(), d.id, d.err.Error())
			case req := <-finals:
				t := coord.TriggerFinal(time.Now())
				req.id = t.ID
				final = req
				actions = []checkpoint.Action{t}
			}
			for _, a := range actions {
				switch a := a.(type) {
				case checkpoint.Trigger:
					select {
					case triggers <- a.ID:
					case <-ctx.Done():
						return
					}
				case checkpoint.Complete:
					err := ck.complete(j, a)
					if err != nil {
						for _, b := range coord.Failed(time.Now(), a.ID, err.Error()) {
							if f, ok := b.(checkpoint.FailJob); ok {
								cancel(errors.New(f.Reason))
							}
						}
					} else {
						select {
						case completions <- a.ID:
						default: // a later notice covers this one
						}
					}
					if final != nil && a.ID >= final.id {
						answer(err)
					}
				case checkpoint.Abort:
					if final != nil && a.ID == final.id {
						answer(fmt.Errorf("checkpoint %d aborted: %s", a.ID, a.Reason))
					}
					fmt.Fprintf(s.cfg.Err, "job %s: checkpoint %d aborted: %s\n", j.id, a.ID, a.Reason)
					s.recordCheckpoint(checkpointRecord{job: j.id, id: a.ID, status: "ABORTED: " + a.Reason})
				case checkpoint.FailJob:
					cancel(errors.New(a.Reason))
				}
			}
		}
	}()
	err = j.graph.Run(ctx, cp)
	cancel(nil)
	<-done
	return err
}

// checkpointer keeps a job's checkpoints: metadata in storage, keyed state in the store.
type checkpointer struct {
	cfg       checkpoint.Config
	storage   *checkpoint.Storage
	store     *state.Store
	completed []int64 // completed checkpoints still restorable, oldest first
	log       func(format string, args ...any)
	record    func(checkpointRecord)
}

// checkpointRecord is one line of SHOW CHECKPOINTS.
type checkpointRecord struct {
	job      string
	id       int64
	status   string
	started  time.Time
	duration time.Duration
	stats    checkpoint.TaskStats
}

func (s *Session) recordCheckpoint(r checkpointRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkpoints = append(s.checkpoints, r)
	if len(s.checkpoints) > maxCheckpointRecords {
		s.checkpoints = s.checkpoints[len(s.checkpoints)-maxCheckpointRecords:]
	}
}

// maxCheckpointRecords bounds the statistics a session keeps.
const maxCheckpointRecords = 1000

// showCheckpoints prints the statistics of the session's recent checkpoints.
func (s *Session) showCheckpoints() error {
	s.mu.Lock()
	records := append([]checkpointRecord(nil), s.checkpoints...)
	s.mu.Unlock()
	var rows [][]string
	for _, r := range records {
		rows = append(rows, []string{r.job, fmt.Sprint(r.id), r.status, r.started.Format("15:04:05.000"),
			r.duration.Round(time.Millisecond).String(), r.stats.Alignment.Round(time.Microsecond).String(),
			fmt.Sprint(r.stats.BytesWritten), fmt.Sprint(r.stats.KeysChanged)})
	}
	return s.printTable([]string{"job", "id", "status", "triggered", "duration", "alignment", "bytes", "keys changed"}, rows)
}

func (s *Session) openCheckpointer(j *job, cfg checkpoint.Config) (*checkpointer, error) {
	dir := filepath.Join(s.cfg.StateDir, j.id)
	if s.cfg.Fresh {
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	store, err := state.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		return nil, err
	}
	j.store = store
	return &checkpointer{
		cfg: cfg, storage: &checkpoint.Storage{Dir: filepath.Join(dir, "checkpoints")}, store: store,
		log:    func(format string, args ...any) { fmt.Fprintf(s.cfg.Err, format, args...) },
		record: s.recordCheckpoint,
	}, nil
}

func (c *checkpointer) close() error { return c.store.Close() }

// discard deletes the checkpoints and state of a job that finished.
func (c *checkpointer) discard() error {
	if err := c.store.Reset(); err != nil {
		return err
	}
	if err := os.RemoveAll(c.storage.Dir); err != nil {
		return err
	}
	dir := filepath.Dir(c.storage.Dir)
	return errors.Join(os.RemoveAll(filepath.Join(dir, "sinks")), os.RemoveAll(filepath.Join(dir, "sources")))
}

// restore finds the latest intact checkpoint and returns each task's state and the next
// checkpoint id; without one, the job starts from nothing.
func (c *checkpointer) restore(tasks []exec.TaskID, warn io.Writer) (map[exec.TaskID][][]byte, int64, error) {
	meta, err := c.storage.Latest(func(err error) { fmt.Fprintf(warn, "warning: %v\n", err) })
	if errors.Is(err, checkpoint.ErrNoCheckpoint) {
		c.completed = nil
		return nil, 1, c.store.Reset()
	}
	if err != nil {
		return nil, 0, err
	}
	if err := c.store.DiscardAfter(meta.ID); err != nil {
		return nil, 0, err
	}
	ids, _ := c.storage.IDs()
	c.completed = nil
	for _, id := range ids {
		if id <= meta.ID {
			c.completed = append(c.completed, id)
		}
	}
	sort.Slice(c.completed, func(i, k int) bool { return c.completed[i] < c.completed[k] })
	restored := map[exec.TaskID][][]byte{}
	for _, ack := range meta.Tasks {
		var st [][]byte
		if err := json.Unmarshal(ack.State, &st); err != nil {
			return nil, 0, fmt.Errorf("checkpoint %d: task %d state: %w", meta.ID, ack.Task, err)
		}
		if ack.Task >= len(tasks) {
			return nil, 0, fmt.Errorf("checkpoint %d has state for task %d of a job with %d tasks", meta.ID, ack.Task, len(tasks))
		}
		restored[tasks[ack.Task]] = st
	}
	return restored, meta.ID + 1, nil
}

// complete makes checkpoint a durable: its metadata is written and synced, then older
// checkpoints beyond the retained ones are dropped and their state merged.
func (c *checkpointer) complete(j *job, a checkpoint.Complete) error {
	meta := &checkpoint.Metadata{ID: a.ID, Job: j.id, Started: a.Started, Completed: time.Now(), Tasks: a.Acks}
	if err := c.storage.Write(meta); err != nil {
		return err
	}
	c.completed = append(c.completed, a.ID)
	// Keep at least two restorable, so a damaged latest one falls back to the previous.
	keep := max(c.cfg.Retained, 2)
	if len(c.completed) > keep {
		c.completed = c.completed[len(c.completed)-keep:]
	}
	if err := c.store.Merge(c.completed[0]); err != nil {
		return err
	}
	if err := c.storage.Retain(keep); err != nil {
		return err
	}
	stats := checkpoint.Stats(a.Acks)
	took := meta.Completed.Sub(a.Started)
	c.record(checkpointRecord{job: j.id, id: a.ID, status: "COMPLETED", started: a.Started, duration: took, stats: stats})
	c.log("job %s: checkpoint %d completed in %v (alignment %v, %d bytes, %d keys changed)\n", j.id, a.ID,
		took.Round(time.Millisecond), stats.Alignment.Round(time.Microsecond), stats.BytesWritten, stats.KeysChanged)
	return nil
}
