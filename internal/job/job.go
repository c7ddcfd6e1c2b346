package job

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// Env is what the jobs of a session share.
type Env struct {
	Catalog    *planner.Catalog // for the tables a plan names beside its own (late rows)
	Connectors *connector.Registry
	Mem        memory.Allocator
	Location   *time.Location
	Now        func() time.Time
	// StateDir holds each job's directory, <StateDir>/<name>/: its checkpoints and state.
	StateDir string
	Fresh    bool      // discard earlier checkpoints: start from nothing
	Out      io.Writer // where print sinks write
	Err      io.Writer // where print sinks write their standard error
	// Log receives the job's notices: restarts, restores, skipped records at info,
	// each checkpoint at debug. Nil: info and above go to Err as plain lines.
	Log *slog.Logger
	// Record, when set, receives each checkpoint's outcome, for SHOW CHECKPOINTS.
	Record func(CheckpointRecord)
}

func (e *Env) tablesDir() string { return filepath.Join(e.StateDir, "tables") }

// Spec is a job to build: a planned statement and its frozen settings.
type Spec struct {
	Name string // the job's name; see DeriveName
	// Statement names the statement of the job, by its position and first line; a
	// runtime error of an expression names it.
	Statement string
	Plan      planner.Node
	Settings  Settings
	// Result makes the operator that receives a query's rows (nil for an INSERT).
	Result OpFactory
}

// State is where a job is in its life, with Flink's names.
type State string

const (
	Created    State = "CREATED"
	Running    State = "RUNNING"
	Restarting State = "RESTARTING"
	Finished   State = "FINISHED"
	Failed     State = "FAILED"
	Canceled   State = "CANCELED" // stopped by STOP JOB or a signal; resumes when started again
)

// Status is a job's figures, as SHOW JOBS prints them.
type Status struct {
	Name           string
	State          State
	Started        time.Time
	RowsIn         int64
	RowsOut        int64
	LastCheckpoint int64 // the latest completed checkpoint, 0 if none
	Restarts       int
	Err            error
	// Watermark is the event time that reached the sinks (the least over their
	// tasks), exec.MinWatermark before any.
	Watermark int64
}

// Job is a statement built into an operator graph, run by Run.
type Job struct {
	name        string
	statement   string // Spec.Statement
	env         Env
	plan        planner.Node
	settings    Settings
	result      OpFactory
	describe    []string // what decides the job's state and output
	fingerprint string
	dir         string // <state-dir>/<name>

	graph        *exec.Graph
	store        *state.Store // keyed state, when checkpointing
	unreplayable []string     // tables whose source cannot rewind to a checkpoint

	stops    chan bool // graceful stop requests: drain or not
	stopping atomic.Bool

	mu        sync.Mutex // guards what follows, written by the graph's tasks
	status    Status
	readers   []tableReader // the readers of the latest attempt, for their skip counts
	late      []lateCounter // its operators that drop or route late rows
	positions map[exec.TaskID][][]byte
	runner    *coordinatorRunner // of the running attempt, for savepoints
	stopSP    *stopSavepoint     // a stop's savepoint, when asked for one
	// lastFailure is the latest error the job failed or restarted with, kept after a
	// restart recovers, for its views.
	lastFailure   string
	lastFailureAt time.Time

	slots   [][]Slot // by stage: what each entry of a task's state is
	sources []string // by stage: EXPLAIN's line for a source stage's reader
	figures figures  // checkpoint figures and rate samples, for Metrics

	rowsIn, rowsOut atomic.Int64
	sinkWatermarks  watermarks
	done            chan struct{} // closed when Run returns
}

// tableReader is a source task's reader and the table it reads.
type tableReader struct {
	table  string
	reader exec.Reader
}

// lateCounter is an operator that drops late rows, or writes them to table.
type lateCounter struct {
	exec.LateCounter
	table string
}

// New builds the job of spec. ctx is the job's lifetime: connectors opened by its tasks
// use it.
func New(ctx context.Context, env Env, spec Spec) (*Job, error) {
	if err := checkName(spec.Name); err != nil {
		return nil, fmt.Errorf("job %q: %w", spec.Name, err)
	}
	j := &Job{name: spec.Name, statement: spec.Statement, env: env, plan: spec.Plan, settings: spec.Settings, result: spec.Result,
		dir: filepath.Join(env.StateDir, spec.Name), stops: make(chan bool, 1), done: make(chan struct{})}
	j.describe = describe(spec.Plan, spec.Settings)
	j.fingerprint = fingerprint(j.describe)
	j.status = Status{Name: spec.Name, State: Created}
	if err := j.build(ctx); err != nil {
		return nil, err
	}
	return j, nil
}

// Name is the job's name.
func (j *Job) Name() string { return j.name }

// Done is closed when Run has returned.
func (j *Job) Done() <-chan struct{} { return j.done }

// Status returns the job's current figures.
func (j *Job) Status() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.status
	s.RowsIn, s.RowsOut = j.rowsIn.Load(), j.rowsOut.Load()
	s.Watermark = j.sinkWatermarks.min()
	return s
}

// Stop asks the job to stop gracefully: its sources stop reading, and with checkpoints
// a final checkpoint keeps everything up to there, so the job resumes from it when
// started again, with nothing replayed or lost. With drain the sources first advance
// event time to the end, so that every window fires. Run then returns nil.
func (j *Job) Stop(drain bool) {
	j.stopping.Store(true)
	select {
	case j.stops <- drain:
	default: // a stop is already on its way
	}
}

func (j *Job) setState(s State, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.status.State, j.status.Err = s, err
	if err != nil {
		j.lastFailure, j.lastFailureAt = err.Error(), time.Now()
	}
	if s == Running && j.status.Started.IsZero() {
		j.status.Started = time.Now()
	}
}

func (j *Job) addReader(table string, r exec.Reader) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.readers = append(j.readers, tableReader{table, r})
}

func (j *Job) addLate(c exec.LateCounter, table string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.late = append(j.late, lateCounter{c, table})
}

func (j *Job) spillDir() string {
	if j.settings.Checkpointed() {
		return j.dir
	}
	return filepath.Join(j.env.StateDir, ".spill-"+j.name)
}

// countIn and countOut are the operators that count the rows a job reads, first in
// each source chain, and writes, just before its sink.
func (j *Job) countIn(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
	return &counter{&j.rowsIn, out}, nil
}

func (j *Job) countOut(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
	return &outCounter{counter{&j.rowsOut, out}, &j.sinkWatermarks, task}, nil
}

// outCounter counts the rows going into a sink and notes the watermark reaching it.
type outCounter struct {
	counter
	wms  *watermarks
	task int
}

var _ exec.WatermarkHandler = (*outCounter)(nil)

func (c *outCounter) ProcessWatermark(ctx context.Context, wm int64) error {
	c.wms.set(c.task, wm)
	if w, ok := c.out.(exec.WatermarkOutput); ok {
		return w.EmitWatermark(ctx, wm)
	}
	return nil
}

// watermarks are the latest watermarks of a job's sink tasks.
type watermarks struct {
	mu     sync.Mutex
	byTask map[int]int64
}

func (w *watermarks) set(task int, wm int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byTask == nil {
		w.byTask = map[int]int64{}
	}
	w.byTask[task] = wm
}

func (w *watermarks) min() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.byTask) == 0 {
		return exec.MinWatermark
	}
	least := int64(exec.MaxWatermark)
	for _, wm := range w.byTask {
		least = min(least, wm)
	}
	return least
}

// counter passes batches on and counts their rows.
type counter struct {
	rows *atomic.Int64
	out  exec.Output
}

var _ exec.Operator = (*counter)(nil)

func (c *counter) Process(ctx context.Context, _ int, b exec.Batch) error {
	c.rows.Add(int64(b.Len()))
	return c.out.Emit(ctx, b)
}

// notice logs msg as it is.
func (j *Job) notice(level slog.Level, msg string) {
	if j.env.Log == nil {
		if level >= slog.LevelInfo {
			fmt.Fprintln(j.env.Err, msg)
		}
		return
	}
	j.env.Log.Log(context.Background(), level, msg, "job", j.name)
}

// logf logs a notice of the job, its message starting with the job's name.
func (j *Job) logf(level slog.Level, format string, args ...any) {
	j.notice(level, fmt.Sprintf("job %s: "+format, append([]any{j.name}, args...)...))
}
