package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
)

// stopTimeout bounds a graceful stop: a job whose final checkpoint does not complete
// in this time is cancelled, and resumes from its latest completed checkpoint.
const stopTimeout = time.Minute

// Run runs the job to its end: it takes checkpoints as configured, and after a failure
// restarts by the restart strategy from the latest completed checkpoint, unless the
// error is one no restart can cure. It returns nil when the job finished or was stopped
// (Stop), and ctx's error when ctx was cancelled.
func (j *Job) Run(ctx context.Context) error {
	defer close(j.done)
	err := j.run(ctx)
	var ee *exec.EvalError
	if j.statement != "" && errors.As(err, &ee) {
		err = fmt.Errorf("%s: %w", j.statement, err)
	}
	switch {
	case errors.Is(err, exec.ErrStopped):
		j.setState(Canceled, nil)
		return nil
	case err == nil:
		j.setState(Finished, nil)
	case ctx.Err() != nil:
		j.setState(Canceled, nil)
	default:
		j.setState(Failed, err)
	}
	return err
}

func (j *Job) run(ctx context.Context) error {
	s := j.settings
	if !s.Checkpointed() && s.Restart.String() != "none" {
		j.logf(slog.LevelInfo, "checkpointing is off: after a failure it restarts with empty state and its sources go on from where they were (at-most-once)")
	}
	if s.Checkpointed() {
		for _, table := range j.unreplayable {
			j.logf(slog.LevelInfo, "table %s cannot replay what it delivered: after a failure, what it sent since the last checkpoint is lost (at-most-once; 'source.wal' = 'true' keeps a socket's input)", table)
		}
	}
	var sp *RestoreReport
	if s.SavepointPath != "" {
		if !s.Checkpointed() {
			return fatal(fmt.Errorf("job %s: starting from a savepoint ('execution.savepoint.path') needs checkpoints: set 'execution.checkpointing.interval'", j.name))
		}
		var err error
		if sp, err = j.ReadSavepoint(); err != nil {
			return err
		}
		defer sp.Close()
		if err := sp.Err(); err != nil {
			return fatal(err)
		}
	}
	var ck *checkpointer
	if s.Checkpointed() {
		var err error
		if ck, err = openCheckpointer(j, sp); err != nil {
			return err
		}
		defer ck.close()
		if ck.finished {
			j.logf(slog.LevelInfo, "finished in an earlier run of this script; skipping it (it runs again once every job of the script finished, or with --fresh)")
			return nil
		}
	}
	for attempt := 1; ; attempt++ {
		j.setState(Running, nil)
		err := j.attempt(ctx, ck)
		j.reportSkipped()
		if errors.Is(err, exec.ErrStopped) {
			j.afterStop(ck)
			return err
		}
		if err == nil {
			if ck != nil {
				return ck.finish()
			}
			return nil
		}
		if ctx.Err() != nil || Unrecoverable(err) {
			if ctx.Err() == nil && ck != nil && ck.cfg.Retention == checkpoint.NoExternalizedCheckpoints {
				ck.discard()
			}
			return err
		}
		if j.stopping.Load() {
			j.afterStop(ck)
			return exec.ErrStopped // asked to stop: it resumes from its latest checkpoint
		}
		delay, ok := s.Restart.Restart(time.Now())
		if !ok {
			if ck != nil && ck.cfg.Retention == checkpoint.NoExternalizedCheckpoints {
				ck.discard()
			}
			return err
		}
		j.mu.Lock()
		j.status.Restarts++
		j.mu.Unlock()
		j.setState(Restarting, err)
		j.logf(slog.LevelWarn, "failed: %v; restart %d in %v (%s)", err, attempt, delay, s.Restart)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return err
		case <-j.stops: // stopped while waiting to restart: the latest checkpoint holds it
			j.afterStop(ck)
			return exec.ErrStopped
		}
	}
}

// afterStop takes the savepoint a stop asked for, of the final checkpoint, then
// deletes the job's checkpoints if their retention says so.
func (j *Job) afterStop(ck *checkpointer) {
	if ck == nil {
		return
	}
	j.mu.Lock()
	sp := j.stopSP
	j.mu.Unlock()
	if sp != nil {
		sp.path, sp.err = ck.savepointOfLatest(sp.target)
	}
	if ck.cfg.Retention != checkpoint.RetainOnCancellation {
		ck.discard()
	}
}

func (j *Job) reportSkipped() {
	j.mu.Lock()
	readers, late := j.readers, j.late
	j.readers, j.late = nil, nil
	j.mu.Unlock()
	// One total per table, over its parallel tasks, in the order the tables were opened.
	skipped := map[string]int64{}
	var tables []string
	for _, r := range readers {
		if sc, ok := r.reader.(exec.SkipCounter); ok && sc.Skipped() > 0 {
			if _, seen := skipped[r.table]; !seen {
				tables = append(tables, r.table)
			}
			skipped[r.table] += sc.Skipped()
		}
	}
	for _, table := range tables {
		j.notice(slog.LevelInfo, fmt.Sprintf("table %s: skipped %d malformed records", table, skipped[table]))
	}
	var dropped int64
	routed := map[string]int64{}
	for _, l := range late {
		if l.table == "" {
			dropped += l.LateRows()
		} else {
			routed[l.table] += l.LateRows()
		}
	}
	if dropped > 0 {
		j.logf(slog.LevelInfo, "dropped %d late rows, behind the watermark", dropped)
	}
	for table, n := range routed {
		if n > 0 {
			j.logf(slog.LevelInfo, "wrote %d late rows, behind the watermark, to table %s", n, table)
		}
	}
}

// attempt runs the graph once, from the latest completed checkpoint if there is one.
// Without checkpoints, state starts empty and the sources continue from where the last
// attempt left them: nothing is replayed (at-most-once).
func (j *Job) attempt(ctx context.Context, ck *checkpointer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := make(chan bool, 1)
	var watching sync.WaitGroup
	watching.Add(1)
	go func() { // a stop request reaches the graph; one that hangs is cut short
		defer watching.Done()
		select {
		case drain := <-j.stops:
			stop <- drain
		case <-ctx.Done():
			return
		}
		select {
		case <-time.After(stopTimeout):
			cancel(fmt.Errorf("job %s: the graceful stop did not end within %v", j.name, stopTimeout))
		case <-ctx.Done():
		}
	}()
	defer watching.Wait()
	defer cancel(nil)
	if ck == nil {
		var mu sync.Mutex
		positions := map[exec.TaskID][][]byte{}
		err := j.graph.Run(ctx, &exec.Checkpointing{Restored: j.positions, Stop: stop, Positions: func(task exec.TaskID, pos []byte) {
			mu.Lock()
			positions[task] = [][]byte{pos}
			mu.Unlock()
		}})
		j.positions = positions
		return err
	}
	tasks := j.graph.Tasks()
	restored, nextID, err := ck.restore(tasks)
	if err != nil {
		return err
	}
	if restored != nil {
		j.logf(slog.LevelInfo, "restoring checkpoint %d", nextID-1)
	}
	r := newCoordinatorRunner(ctx, ck.cfg, ck, len(tasks), nextID)
	r.log = func(format string, args ...any) { j.logf(slog.LevelWarn, format, args...) }
	j.mu.Lock()
	j.runner = r
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.runner = nil
		j.mu.Unlock()
	}()
	r.completed = func(id int64) {
		j.mu.Lock()
		j.status.LastCheckpoint = id
		j.mu.Unlock()
	}
	cp := r.connect(tasks, restored)
	cp.Stop = stop
	var running sync.WaitGroup
	running.Add(1)
	go func() {
		defer running.Done()
		tick := time.NewTicker(min(ck.cfg.Interval/4+time.Millisecond, 100*time.Millisecond))
		defer tick.Stop()
		r.run(tick.C, cancel)
	}()
	err = j.graph.Run(ctx, cp)
	cancel(nil)
	running.Wait()
	return err
}
