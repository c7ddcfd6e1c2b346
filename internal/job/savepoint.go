package job

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/ops"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// Slot names what one entry of a task's state is: the state of a source stage's
// reader (first), or of a stateful operator of the task's chain. The zero Slot is an
// operator that keeps no state.
type Slot struct {
	UID     string
	Kind    string   // source, sink, aggregate, join, temporal, rank, over, sort, match, watermark, values, result
	Meaning []string // what decides its state (see planner.MeaningOf)
	table   *planner.Table
}

// keyed reports whether the slot's operator keeps keyed state in the store, in the
// namespace of its UID.
func (s Slot) keyed() bool {
	return s.Kind == "aggregate" || s.Kind == "join" || s.Kind == "temporal" || s.Kind == "rank" || s.Kind == "over" || s.Kind == "sort" || s.Kind == "match"
}

// Savepoint takes a savepoint of the running job under target (the settings'
// 'state.savepoints.dir', or <state-dir>/savepoints, when empty) and returns its path;
// the job goes on running.
func (j *Job) Savepoint(ctx context.Context, target string) (string, error) {
	if !j.settings.Checkpointed() {
		return "", j.noSavepoints()
	}
	j.mu.Lock()
	r, st := j.runner, j.status.State
	j.mu.Unlock()
	if r == nil || st != Running {
		return "", fmt.Errorf("job %s is %s, not running: it cannot take a savepoint now", j.name, strings.ToLower(string(st)))
	}
	path, err := r.savepoint(ctx, j.savepointsDir(target))
	if err != nil {
		return "", fmt.Errorf("job %s: savepoint: %w", j.name, err)
	}
	return path, nil
}

// stopSavepoint is a stop's request for a savepoint, and its outcome once Run returned.
type stopSavepoint struct {
	target string
	path   string
	err    error
}

// StopWithSavepoint stops the job gracefully (see Stop), takes a savepoint of its
// final checkpoint under target and returns its path, once Run returned. Its sinks have
// committed everything before it.
func (j *Job) StopWithSavepoint(ctx context.Context, drain bool, target string) (string, error) {
	if !j.settings.Checkpointed() {
		return "", j.noSavepoints()
	}
	sp := &stopSavepoint{target: j.savepointsDir(target)}
	j.mu.Lock()
	j.stopSP = sp
	j.mu.Unlock()
	j.Stop(drain)
	select {
	case <-j.done:
	case <-ctx.Done():
		select {
		case <-j.done: // it ended as the session did
		default:
			return "", ctx.Err()
		}
	}
	if sp.path == "" && sp.err == nil {
		sp.err = fmt.Errorf("job %s ended (%s) before it could stop with a savepoint", j.name, strings.ToLower(string(j.Status().State)))
	}
	return sp.path, sp.err
}

func (j *Job) noSavepoints() error {
	return fmt.Errorf("job %s takes no checkpoints, and a savepoint is one: set 'execution.checkpointing.interval'", j.name)
}

func (j *Job) savepointsDir(target string) string {
	switch {
	case target != "":
		return target
	case j.settings.SavepointsDir != "":
		return j.settings.SavepointsDir
	}
	return filepath.Join(j.env.StateDir, "savepoints")
}

// savepoint writes a savepoint of completed checkpoint id under target.
func (c *checkpointer) savepoint(id int64, target string) (string, error) {
	meta, err := c.storage.Read(id)
	if err != nil {
		return "", err
	}
	return c.takeSavepoint(meta, target)
}

// savepointOfLatest writes a savepoint of the latest completed checkpoint: a stopped
// job's final one.
func (c *checkpointer) savepointOfLatest(target string) (string, error) {
	meta, _, err := c.storage.Latest()
	if err != nil {
		return "", fmt.Errorf("job %s: savepoint: %w", c.j.name, err)
	}
	path, err := c.takeSavepoint(meta, target)
	if err != nil {
		return "", fmt.Errorf("job %s: %w", c.j.name, err)
	}
	return path, nil
}

// The job's directories a savepoint copies: what its sources and sinks keep on disk.
var savedDirs = []string{"sources", "sinks"}

// describeSlots records in meta which operator each entry of each task's state is,
// so the checkpoint can be turned into a savepoint by itself.
func (j *Job) describeSlots(meta *checkpoint.Metadata) {
	meta.Layout = j.layout()
	meta.Meanings = map[string][]string{}
	for _, t := range j.graph.Tasks() {
		uids := make([]string, len(j.slots[t.Stage]))
		for p, slot := range j.slots[t.Stage] {
			uids[p] = slot.UID
			if slot.UID != "" && len(slot.Meaning) > 0 {
				meta.Meanings[slot.UID] = slot.Meaning
			}
		}
		meta.Slots = append(meta.Slots, uids)
	}
}

// takeSavepoint writes a savepoint of completed checkpoint meta into a new directory
// under target and returns its path. It reads the checkpoint's keyed state from the
// store, so it runs before a later checkpoint merges it away.
func (c *checkpointer) takeSavepoint(meta *checkpoint.Metadata, target string) (string, error) {
	return writeSavepoint(meta, c.store, c.j.dir, target)
}

// writeSavepoint writes a savepoint of checkpoint meta of the job whose directory is
// jobDir and whose keyed state is in store.
func writeSavepoint(meta *checkpoint.Metadata, store *state.Store, jobDir, target string) (string, error) {
	var suffix [3]byte
	rand.Read(suffix[:])
	dir := filepath.Join(target, fmt.Sprintf("savepoint-%s-%d-%s", meta.Job, meta.ID, hex.EncodeToString(suffix[:])))
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	saved, err := savedOperators(meta)
	if err != nil {
		return "", fmt.Errorf("savepoint: %w", err)
	}
	w, err := checkpoint.CreateSavepoint(dir)
	if err != nil {
		return "", fmt.Errorf("savepoint: %w", err)
	}
	sp := &checkpoint.Savepoint{Job: meta.Job, Checkpoint: meta.ID, Taken: time.Now().UTC(), Parallelism: meta.Layout}
	for _, op := range saved {
		for _, h := range op.Handles {
			op.Bytes += int64(len(h))
		}
		if (Slot{Kind: op.Kind}).keyed() {
			op.Keyed = "keyed/" + op.UID
			if err := exportKeyed(w, store, op, meta.ID); err != nil {
				return "", fmt.Errorf("savepoint: %s: %w", op.UID, err)
			}
		}
		sp.Operators = append(sp.Operators, *op)
	}
	for _, sub := range savedDirs {
		err := filepath.WalkDir(filepath.Join(jobDir, sub), func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(jobDir, path)
			err = w.Copy("files/"+filepath.ToSlash(rel), path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed since: a later checkpoint's commit dropped it
			}
			return err
		})
		if err != nil {
			return "", fmt.Errorf("savepoint: copying %s: %w", sub, err)
		}
	}
	if err := w.Finish(sp); err != nil {
		return "", fmt.Errorf("savepoint: %w", err)
	}
	return dir, nil
}

// savedOperators sorts the task states of checkpoint meta by operator.
func savedOperators(meta *checkpoint.Metadata) ([]*checkpoint.SavedOperator, error) {
	if len(meta.Slots) == 0 && len(meta.Tasks) > 0 {
		return nil, fmt.Errorf("checkpoint %d does not name its operators (it was taken by an older version)", meta.ID)
	}
	acks := slices.Clone(meta.Tasks)
	slices.SortFunc(acks, func(a, b checkpoint.Ack) int { return a.Task - b.Task })
	byUID := map[string]*checkpoint.SavedOperator{}
	var order []*checkpoint.SavedOperator
	for _, ack := range acks {
		var states [][]byte
		if err := json.Unmarshal(ack.State, &states); err != nil {
			return nil, fmt.Errorf("checkpoint %d: task %d state: %w", meta.ID, ack.Task, err)
		}
		if ack.Task >= len(meta.Slots) {
			return nil, fmt.Errorf("checkpoint %d has state for task %d of a job with %d tasks", meta.ID, ack.Task, len(meta.Slots))
		}
		uids := meta.Slots[ack.Task]
		for p, st := range states {
			if p >= len(uids) || uids[p] == "" {
				if st != nil {
					return nil, fmt.Errorf("checkpoint %d: task %d holds state for an operator without an id", meta.ID, ack.Task)
				}
				continue
			}
			op := byUID[uids[p]]
			if op == nil {
				kind, _, _ := strings.Cut(uids[p], "-")
				op = &checkpoint.SavedOperator{UID: uids[p], Kind: kind, Meaning: meta.Meanings[uids[p]]}
				byUID[uids[p]] = op
				order = append(order, op)
			}
			op.Handles = append(op.Handles, st) // tasks come in order, stage by stage
		}
	}
	slices.SortFunc(order, func(a, b *checkpoint.SavedOperator) int { return strings.Compare(a.UID, b.UID) })
	return order, nil
}

// exportKeyed writes an operator's keyed state as of checkpoint id, key group by key
// group and in key order within each, so the same state always makes the same file.
func exportKeyed(w *checkpoint.SavepointWriter, store *state.Store, op *checkpoint.SavedOperator, id int64) error {
	f, err := w.Create(op.Keyed)
	if err != nil {
		return err
	}
	var group []state.KV
	for kg := 0; kg < exec.MaxParallelism; kg++ {
		group = group[:0]
		err := store.Read(op.UID, id, kg, kg, func(k, v []byte) error {
			group = append(group, state.KV{Key: bytes.Clone(k), Value: bytes.Clone(v)})
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(group, func(a, b state.KV) int { return bytes.Compare(a.Key, b.Key) })
		for _, kv := range group {
			if err := checkpoint.WriteKV(f, kv.Key, kv.Value); err != nil {
				return err
			}
			op.Keys++
			op.Bytes += int64(len(kv.Key) + len(kv.Value))
		}
	}
	return f.Close()
}

// RestoreReport says, for each stateful operator of a job, what of a savepoint it
// would restore, and which operators of the savepoint nothing claims.
type RestoreReport struct {
	Job       string
	Path      string
	Savepoint *checkpoint.Savepoint
	Operators []RestoredOperator
	Unclaimed []checkpoint.SavedOperator // dropped only when unclaimed state may go
	AllowDrop bool                       // 'execution.savepoint.ignore-unclaimed-state'
	dir       string                     // the savepoint's directory
	temp      string                     // a savepoint made of a retained checkpoint, to remove
}

// RestoredOperator is one stateful operator of the new plan and where its state comes
// from: From (restored), nothing (new: it starts empty), or Problem (incompatible).
type RestoredOperator struct {
	Slot
	Tasks   int
	From    *checkpoint.SavedOperator
	Problem string
}

// Err is why the restore would fail, or nil.
func (r *RestoreReport) Err() error {
	for _, op := range r.Operators {
		if op.Problem != "" {
			return fmt.Errorf("job %s cannot start from savepoint %s: %s %s", r.Job, r.Path, op.UID, op.Problem)
		}
	}
	for _, op := range r.Unclaimed {
		if r.AllowDrop || droppable(op) {
			continue
		}
		why := "is not in the new query"
		if m := r.nearest(op); m != nil {
			why = fmt.Sprintf("does not match the new query's %s: %s", m.UID, changed(op.Meaning, m.Meaning))
		}
		return fmt.Errorf("job %s cannot start from savepoint %s: its %s state %s %s; "+
			"start it with --allow-non-restored-state ('execution.savepoint.ignore-unclaimed-state' = 'true') to drop that state",
			r.Job, r.Path, op.Kind, op.UID, why)
	}
	return nil
}

// droppable reports whether state of the savepoint's may go unclaimed whatever the
// settings: a sink's transactions belong to the job that wrote them (a savepoint of a
// stop has them committed), and a query's result was printed.
func droppable(op checkpoint.SavedOperator) bool { return op.Kind == "sink" || op.Kind == "result" }

// nearest is the new operator of op's kind that restores nothing, which an edit most
// likely made of op.
func (r *RestoreReport) nearest(op checkpoint.SavedOperator) *RestoredOperator {
	for i := range r.Operators {
		if n := &r.Operators[i]; n.From == nil && n.Kind == op.Kind {
			return n
		}
	}
	return nil
}

// String is the report as --dry-run prints it.
func (r *RestoreReport) String() string {
	var b strings.Builder
	sp := r.Savepoint
	fmt.Fprintf(&b, "Job %s from savepoint %s (job %s, checkpoint %d, tasks per stage %s):\n", r.Job, r.Path, sp.Job, sp.Checkpoint, sp.Parallelism)
	for _, op := range r.Operators {
		switch {
		case op.Problem != "":
			fmt.Fprintf(&b, "  %-28s incompatible: %s\n", op.UID, op.Problem)
		case op.From == nil:
			fmt.Fprintf(&b, "  %-28s new: starts empty\n", op.UID)
		default:
			fmt.Fprintf(&b, "  %-28s restored from %s (%s)\n", op.UID, op.From.UID, sizeOf(*op.From, op.Tasks))
		}
	}
	for _, op := range r.Unclaimed {
		fate := "not claimed: the restore fails unless --allow-non-restored-state"
		if r.AllowDrop || droppable(op) {
			fate = "not claimed: dropped"
		}
		fmt.Fprintf(&b, "  %-28s %s (%s)\n", op.UID, fate, sizeOf(op, 0))
	}
	if err := r.Err(); err != nil {
		b.WriteString("The restore would fail.\n")
	} else {
		b.WriteString("The restore would succeed.\n")
	}
	return b.String()
}

func sizeOf(op checkpoint.SavedOperator, tasks int) string {
	s := fmt.Sprintf("%d tasks", len(op.Handles))
	if tasks != 0 && tasks != len(op.Handles) {
		s = fmt.Sprintf("%d tasks into %d", len(op.Handles), tasks)
	}
	if op.Keyed != "" {
		s += fmt.Sprintf(", %d keys", op.Keys)
	}
	return s + fmt.Sprintf(", %d bytes", op.Bytes)
}

// ReadSavepoint reads and checks the savepoint of the job's settings and maps it onto
// the job's operators.
// A retained checkpoint (<state-dir>/<job>/checkpoints/chk-<id>) is first written as a
// savepoint into a temporary directory, which Close removes.
func (j *Job) ReadSavepoint() (*RestoreReport, error) {
	return j.readSavepoint(j.settings.SavepointPath)
}

func (j *Job) readSavepoint(path string) (*RestoreReport, error) {
	read := path
	var temp string
	if chk, ok := retainedCheckpoint(path); ok {
		var err error
		if temp, err = savepointOfCheckpoint(chk, j.env.StateDir); err != nil {
			return nil, fatal(fmt.Errorf("checkpoint %s: %w", path, err))
		}
		read = temp
	}
	sp, dir, err := checkpoint.ReadSavepoint(read)
	if err != nil {
		os.RemoveAll(temp)
		return nil, fatal(err)
	}
	r := j.mapSavepoint(sp, path)
	r.dir, r.temp = dir, temp
	return r, nil
}

// Close removes what reading the savepoint made.
func (r *RestoreReport) Close() {
	if r != nil && r.temp != "" {
		os.RemoveAll(filepath.Dir(r.temp))
	}
}

// retainedCheckpoint reports whether path is a job's checkpoint directory, or its
// _metadata, and returns the directory.
func retainedCheckpoint(path string) (string, bool) {
	dir := filepath.Clean(path)
	if filepath.Base(dir) == checkpoint.MetadataName {
		dir = filepath.Dir(dir)
	}
	var id int64
	if _, err := fmt.Sscanf(filepath.Base(dir), "chk-%d", &id); err != nil || filepath.Base(filepath.Dir(dir)) != "checkpoints" {
		return "", false
	}
	return dir, true
}

// savepointOfCheckpoint writes a savepoint of the retained checkpoint in chk, reading
// its job's state file, which no running job may hold, under a temporary directory of
// stateDir, and returns the savepoint's path.
func savepointOfCheckpoint(chk, stateDir string) (string, error) {
	var id int64
	fmt.Sscanf(filepath.Base(chk), "chk-%d", &id)
	storage := &checkpoint.Storage{Dir: filepath.Dir(chk)}
	meta, err := storage.Read(id)
	if err != nil {
		return "", err
	}
	jobDir := filepath.Dir(storage.Dir)
	store, err := state.Open(filepath.Join(jobDir, "state.db"))
	if err != nil {
		return "", fmt.Errorf("%w (is its job running? stop it first)", err)
	}
	defer store.Close()
	if meta.StateFile != "" && meta.StateFile != store.ID() {
		return "", fmt.Errorf("the state file %s is not the one the checkpoint wrote", store.Path())
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", err
	}
	temp, err := os.MkdirTemp(stateDir, ".savepoint-of-checkpoint-")
	if err != nil {
		return "", err
	}
	path, err := writeSavepoint(meta, store, jobDir, temp)
	if err != nil {
		os.RemoveAll(temp)
	}
	return path, err
}

// mapSavepoint matches the savepoint's operators to the job's by UID. An operator
// whose parallelism changed restores only if its state is keyed (it moves by key
// group); a source's positions and a sink's transactions stay with their tasks.
func (j *Job) mapSavepoint(sp *checkpoint.Savepoint, path string) *RestoreReport {
	r := &RestoreReport{Job: j.name, Path: path, Savepoint: sp, AllowDrop: j.settings.IgnoreUnclaimed}
	saved := map[string]*checkpoint.SavedOperator{}
	for i := range sp.Operators {
		saved[sp.Operators[i].UID] = &sp.Operators[i]
	}
	claimed := map[string]bool{}
	for s, slots := range j.slots {
		tasks := j.graph.Stages[s].Parallelism
		for _, slot := range slots {
			if slot.UID == "" {
				continue
			}
			op := RestoredOperator{Slot: slot, Tasks: tasks}
			if from := saved[slot.UID]; from != nil {
				op.From, claimed[slot.UID] = from, true
				if len(from.Handles) != tasks && !j.rescalable(slot) {
					op.Problem = fmt.Sprintf("ran in %d tasks and now runs in %d: %v; run it with 'parallelism.default' = '%d'",
						len(from.Handles), tasks, j.env.Connectors.CanRescaleErr(slot.table), len(from.Handles))
				}
			}
			r.Operators = append(r.Operators, op)
		}
	}
	for _, op := range sp.Operators {
		if !claimed[op.UID] {
			r.Unclaimed = append(r.Unclaimed, op)
		}
	}
	return r
}

// restoreSavepoint makes the savepoint the job's latest completed checkpoint: its keyed
// state goes into the (emptied) store as the savepoint's checkpoint, its source and
// sink files into the job's directory, and the checkpoint's metadata holds each new
// task's state. The job then restores it as it restores any checkpoint, and numbers its
// own checkpoints after it, so sinks see their epochs go on.
func (c *checkpointer) restoreSavepoint(r *RestoreReport) error {
	j, sp, dir := c.j, r.Savepoint, r.dir
	if err := c.store.Reset(); err != nil {
		return err
	}
	tasks := j.graph.Tasks()
	states := make([][][]byte, len(tasks))
	for i, t := range tasks {
		states[i] = make([][]byte, len(j.slots[t.Stage]))
	}
	first := map[int]int{} // a stage's first task's index in tasks
	for i := len(tasks) - 1; i >= 0; i-- {
		first[tasks[i].Stage] = i
	}
	froms := map[string]*checkpoint.SavedOperator{} // by the new operator's UID
	for _, op := range r.Operators {
		froms[op.UID] = op.From
	}
	for s, slots := range j.slots {
		for p, slot := range slots {
			from := froms[slot.UID]
			if slot.UID == "" || from == nil {
				continue
			}
			handles := from.Handles
			n := j.graph.Stages[s].Parallelism
			if len(handles) != n {
				var err error
				if handles, err = j.rescale(slot, handles, n); err != nil {
					return fmt.Errorf("%s: %w", slot.UID, err)
				}
			}
			for t := 0; t < n; t++ {
				states[first[s]+t][p] = handles[t]
			}
			if from.Keyed != "" {
				if err := c.importKeyed(filepath.Join(dir, filepath.FromSlash(from.Keyed)), slot.UID, sp.Checkpoint); err != nil {
					return fmt.Errorf("%s: %w", slot.UID, err)
				}
			}
		}
	}
	for _, f := range sp.Under("files") {
		if err := copyFile(filepath.Join(dir, "files", filepath.FromSlash(f.Path)), filepath.Join(j.dir, filepath.FromSlash(f.Path))); err != nil {
			return err
		}
	}
	if err := c.store.Seal(sp.Checkpoint); err != nil {
		return err
	}
	meta := &checkpoint.Metadata{ID: sp.Checkpoint, Job: j.name, Savepoint: true, StateFile: c.store.ID(), Started: sp.Taken, Completed: time.Now()}
	for i, st := range states {
		data, err := json.Marshal(st)
		if err != nil {
			return err
		}
		meta.Tasks = append(meta.Tasks, checkpoint.Ack{Checkpoint: sp.Checkpoint, Task: i, State: data})
	}
	return c.storage.Write(meta)
}

// rescalable reports whether the state of slot's operator can move to another number
// of tasks: keyed state moves by key group, a watermark is the least of the old tasks',
// a sink's tasks start new transactions, and a source's positions move if its
// connector can move them.
func (j *Job) rescalable(slot Slot) bool {
	switch {
	case slot.keyed(), slot.Kind == "watermark", slot.Kind == "sink", slot.Kind == "result":
		return true
	case slot.Kind == "source":
		return j.env.Connectors.CanRescaleErr(slot.table) == nil
	}
	return false
}

// rescale redistributes the handles of slot's old tasks over n new ones (see
// rescalable). A sink's new tasks start without its old tasks' transactions: those are
// committed by the job the savepoint was taken of, when its checkpoint completes.
func (j *Job) rescale(slot Slot, handles [][]byte, n int) ([][]byte, error) {
	switch {
	case slot.keyed():
		return ops.RescaleHandles(handles, n)
	case slot.Kind == "watermark":
		return ops.RescaleWatermarks(handles, n)
	case slot.Kind == "source":
		return j.env.Connectors.RescaleSource(slot.table, handles, n)
	}
	return make([][]byte, n), nil
}

// importKeyed writes a keyed state file into the store as namespace ns's state at
// checkpoint id, a key group at a time.
func (c *checkpointer) importKeyed(path, ns string, id int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var d state.Delta
	kg := -1
	flush := func() error {
		if len(d.Puts) == 0 {
			return nil
		}
		_, err := c.store.WriteDelta(ns, id, d)
		d.Puts = d.Puts[:0]
		return err
	}
	err = checkpoint.ReadKV(f, func(k, v []byte) error {
		if len(k) < 2 {
			return fmt.Errorf("%w: a keyed state key without its key group", checkpoint.ErrDamaged)
		}
		if g := int(k[0])<<8 | int(k[1]); g != kg {
			if g < kg {
				return fmt.Errorf("%w: keyed state out of key group order", checkpoint.ErrDamaged)
			}
			// A key group is written by one WriteDelta: a second would replace it.
			if len(d.Puts) >= 1<<16 {
				if err := flush(); err != nil {
					return err
				}
			}
			kg = g
		}
		d.Puts = append(d.Puts, state.KV{Key: bytes.Clone(k), Value: bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}
