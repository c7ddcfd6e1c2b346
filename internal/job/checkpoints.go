package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// CheckpointRecord is one line of SHOW CHECKPOINTS.
type CheckpointRecord struct {
	Job      string
	ID       int64
	Status   string
	Started  time.Time
	Duration time.Duration
	Stats    checkpoint.TaskStats
}

// checkpointer keeps a job's checkpoints: metadata in storage, keyed state in the
// store, and the job's identity and lock in its directory.
type checkpointer struct {
	j         *Job
	cfg       checkpoint.Config
	storage   *checkpoint.Storage
	store     *state.Store
	lock      *lock
	completed []int64 // completed checkpoints still restorable, oldest first
	finished  bool    // the job finished in an earlier run of its script
}

// openCheckpointer takes the job's directory: its lock first, then (with --fresh) it
// clears what earlier runs left, checks that the checkpoints there are this job's, and
// opens the state store. Given a savepoint (sp), the job starts from it, unless its
// directory holds checkpoints taken since it last started from that savepoint.
func openCheckpointer(j *Job, sp *RestoreReport) (ck *checkpointer, err error) {
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, fatal(fmt.Errorf("job %s: state directory: %w", j.name, err))
	}
	l, err := lockDir(j.dir, j.name)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			l.release()
		}
	}()
	if j.env.Fresh {
		if err := clearDir(j.dir); err != nil {
			return nil, fatal(fmt.Errorf("job %s: --fresh: %w", j.name, err))
		}
	}
	ck = &checkpointer{j: j, cfg: j.settings.Checkpoint, storage: &checkpoint.Storage{Dir: filepath.Join(j.dir, "checkpoints")}, lock: l}
	id, err := readIdentity(j.dir)
	if err != nil {
		return nil, fatal(fmt.Errorf("job %s: %w", j.name, err))
	}
	ids, _ := ck.storage.IDs()
	if sp != nil {
		if id != nil && id.RestoredFrom == sp.Savepoint.Checksum && (len(ids) > 0 || id.Finished) && id.Fingerprint == j.fingerprint {
			j.logf(slog.LevelInfo, "resuming from its checkpoints taken since it started from savepoint %s (--fresh starts from the savepoint again)", sp.Path)
		} else {
			return ck, ck.startFrom(sp)
		}
	}
	if id != nil && id.Fingerprint != j.fingerprint && (len(ids) > 0 || id.Finished) {
		return nil, fatal(fmt.Errorf("job %s: the checkpoints in %s are of a different query or table options (%s); "+
			"start it with --fresh to discard them, or give it another 'pipeline.name'", j.name, j.dir, changed(id.Describe, j.describe)))
	}
	if id != nil && id.Fingerprint == j.fingerprint && id.Finished {
		ck.finished = true
		return ck, nil
	}
	layout := j.layout()
	if id != nil && id.Layout != layout && len(ids) > 0 {
		return ck, ck.rescale(id.Layout)
	}
	if id == nil || id.Fingerprint != j.fingerprint || id.Layout != layout {
		if err := writeIdentity(j.dir, &identity{Name: j.name, Fingerprint: j.fingerprint, Describe: j.describe, Layout: layout}); err != nil {
			return nil, fatal(fmt.Errorf("job %s: %w", j.name, err))
		}
	}
	if err := ck.openStore(); err != nil {
		return nil, err
	}
	return ck, nil
}

func (c *checkpointer) openStore() (err error) {
	if c.store, err = state.Open(filepath.Join(c.j.dir, "state.db")); err != nil {
		return c.damaged(err)
	}
	c.j.store = c.store
	return nil
}

// rescale restores the job's latest checkpoint, taken with tasks per stage layout,
// into its new parallelism, as a savepoint of it would restore.
func (c *checkpointer) rescale(layout string) error {
	j := c.j
	meta, _, err := c.storage.Latest()
	if err != nil {
		return c.damaged(err)
	}
	r, err := j.readSavepoint(filepath.Join(c.storage.Dir, fmt.Sprintf("chk-%d", meta.ID)))
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Err(); err != nil {
		return fatal(fmt.Errorf("job %s: its checkpoints were taken with tasks per stage %s, and it now runs with %s: %w; "+
			"set 'parallelism.default' as before, or start it with --fresh", j.name, layout, j.layout(), err))
	}
	j.logf(slog.LevelInfo, "rescaling: checkpoint %d was taken with tasks per stage %s, and the job now runs with %s", meta.ID, layout, j.layout())
	return c.startFrom(r)
}

// startFrom clears the job's directory and makes savepoint sp its latest checkpoint.
func (c *checkpointer) startFrom(sp *RestoreReport) error {
	j := c.j
	if err := clearDir(j.dir); err != nil {
		return fatal(fmt.Errorf("job %s: %w", j.name, err))
	}
	if err := writeIdentity(j.dir, &identity{Name: j.name, Fingerprint: j.fingerprint, Describe: j.describe, Layout: j.layout(), RestoredFrom: sp.Savepoint.Checksum}); err != nil {
		return fatal(fmt.Errorf("job %s: %w", j.name, err))
	}
	if err := c.openStore(); err != nil {
		return err
	}
	if err := c.restoreSavepoint(sp); err != nil {
		return fatal(fmt.Errorf("job %s: starting from savepoint %s: %w", j.name, sp.Path, err))
	}
	j.logf(slog.LevelInfo, "starting from savepoint %s (checkpoint %d of job %s)", sp.Path, sp.Savepoint.Checkpoint, sp.Savepoint.Job)
	return nil
}

// layout is the parallelism of each of the job's stages, as "2,2,1".
func (j *Job) layout() string {
	var parts []string
	for _, st := range j.graph.Stages {
		parts = append(parts, fmt.Sprint(st.Parallelism))
	}
	return strings.Join(parts, ",")
}

// clearDir removes everything in dir but its lock.
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != "LOCK" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// damaged is the error of state that cannot be restored: no restart cures it.
func (c *checkpointer) damaged(err error) error {
	return fatal(fmt.Errorf("job %s: %w; start it with --fresh to discard its checkpoints (a transactional sink's committed output stays)", c.j.name, err))
}

func (c *checkpointer) close() {
	if c.store != nil {
		c.store.Close()
	}
	c.lock.release()
}

func (c *checkpointer) record(r CheckpointRecord) {
	r.Job = c.j.name
	c.j.figures.noteCheckpoint(r)
	if c.j.env.Record != nil {
		c.j.env.Record(r)
	}
}

// finish records that an INSERT's job ran to its end, then deletes its checkpoints and
// state: a later run of the script skips it until the session forgets it (Forget). A
// query's result went to the terminal, so a later run computes it again.
func (c *checkpointer) finish() error {
	finished := &identity{Name: c.j.name, Fingerprint: c.j.fingerprint, Describe: c.j.describe, Layout: c.j.layout(), Finished: c.j.result == nil, RestoredFrom: c.restoredFrom()}
	if err := writeIdentity(c.j.dir, finished); err != nil {
		return err
	}
	if err := c.store.Reset(); err != nil {
		return err
	}
	return errors.Join(os.RemoveAll(c.storage.Dir), os.RemoveAll(filepath.Join(c.j.dir, "sinks")),
		os.RemoveAll(filepath.Join(c.j.dir, "sources")))
}

func (c *checkpointer) restoredFrom() string {
	if id, _ := readIdentity(c.j.dir); id != nil {
		return id.RestoredFrom
	}
	return ""
}

// discard deletes the job's checkpoints and their state, as their retention asks when
// the job stopped or failed for good: it starts from nothing when started again.
func (c *checkpointer) discard() {
	err := errors.Join(c.store.Reset(), os.RemoveAll(c.storage.Dir))
	if err != nil {
		c.j.logf(slog.LevelWarn, "deleting its checkpoints ('execution.checkpointing.externalized-checkpoint-retention' = '%s'): %v", c.cfg.Retention, err)
		return
	}
	c.j.logf(slog.LevelInfo, "deleted its checkpoints ('execution.checkpointing.externalized-checkpoint-retention' = '%s')", c.cfg.Retention)
}

// Forget clears a finished job's record, once every job of its script finished, so
// that running the script again starts over.
func (j *Job) Forget() error {
	if j.Status().State != Finished || !j.settings.Checkpointed() {
		return nil
	}
	l, err := lockDir(j.dir, j.name)
	if err != nil {
		return err
	}
	defer l.release()
	return clearDir(j.dir)
}

// restore finds the latest intact checkpoint and returns each task's state and the next
// checkpoint id; without one, the job starts from nothing. It never falls back past a
// damaged checkpoint that a transactional sink may have committed, and it checks that
// the state store holds the checkpoint's state.
func (c *checkpointer) restore(tasks []exec.TaskID) (map[exec.TaskID][][]byte, int64, error) {
	meta, damaged, err := c.storage.Latest()
	if len(damaged) > 0 {
		if sinks := c.j.committingSinks(); len(sinks) > 0 {
			return nil, 0, c.damaged(fmt.Errorf("%w, and sink %s may have committed its output; restoring an earlier checkpoint would write that output again",
				damaged[0], strings.Join(sinks, ", ")))
		}
		for _, d := range damaged {
			c.j.logf(slog.LevelWarn, "warning: skipping %v", d)
		}
	}
	if errors.Is(err, checkpoint.ErrNoCheckpoint) {
		c.completed = nil
		if ids, _ := c.storage.IDs(); len(ids) > 0 || len(damaged) > 0 {
			c.j.logf(slog.LevelInfo, "starting over: no completed checkpoint to restore")
		}
		return nil, 1, c.store.Reset()
	}
	if err != nil {
		return nil, 0, err
	}
	if meta.StateFile != "" && meta.StateFile != c.store.ID() {
		return nil, 0, c.damaged(fmt.Errorf("the state file %s is not the one checkpoint %d wrote (it was deleted, emptied or replaced)", c.store.Path(), meta.ID))
	}
	if sealed := c.store.Sealed(); sealed < meta.ID {
		return nil, 0, c.damaged(fmt.Errorf("the state file %s holds state up to checkpoint %d, not %d (an older copy?)", c.store.Path(), sealed, meta.ID))
	}
	if err := c.store.DiscardAfter(meta.ID); err != nil {
		return nil, 0, c.damaged(err)
	}
	if err := c.store.Seal(meta.ID); err != nil {
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
			return nil, 0, c.damaged(fmt.Errorf("checkpoint %d: task %d state: %w", meta.ID, ack.Task, err))
		}
		if ack.Task >= len(tasks) {
			return nil, 0, fatal(fmt.Errorf("checkpoint %d has state for task %d of a job with %d tasks", meta.ID, ack.Task, len(tasks)))
		}
		restored[tasks[ack.Task]] = st
	}
	return restored, meta.ID + 1, nil
}

// committingSinks names the job's sinks that commit on checkpoints (exactly-once).
func (j *Job) committingSinks() []string {
	var names []string
	planner.Walk(j.plan, func(n planner.Node) {
		if s, ok := n.(*planner.Sink); ok && j.env.Connectors.DeliveryOf(s.Table) == connector.Commits {
			names = append(names, fmt.Sprintf("%s (%s)", s.Table.Name, s.Table.Connector()))
		}
	})
	return names
}

// complete makes checkpoint a durable: the state store is sealed, its metadata written
// and synced, then older checkpoints beyond the retained ones are dropped and their
// state merged.
func (c *checkpointer) complete(a checkpoint.Complete) error {
	if err := c.store.Seal(a.ID); err != nil {
		return err
	}
	meta := &checkpoint.Metadata{ID: a.ID, Job: c.j.name, StateFile: c.store.ID(), Started: a.Started, Completed: time.Now(), Tasks: a.Acks}
	c.j.describeSlots(meta)
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
	c.record(CheckpointRecord{Job: c.j.name, ID: a.ID, Status: "COMPLETED", Started: a.Started, Duration: took, Stats: stats})
	c.j.logf(slog.LevelDebug, "checkpoint %d completed in %v (alignment %v, %d bytes, %d keys changed)", a.ID,
		took.Round(time.Millisecond), stats.Alignment.Round(time.Microsecond), stats.BytesWritten, stats.KeysChanged)
	return nil
}
