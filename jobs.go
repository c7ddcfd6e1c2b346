package streamsql

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/job"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// env is what the session's jobs share.
func (s *Session) env() job.Env {
	return job.Env{Catalog: s.catalog, Connectors: s.connectors, Mem: s.cfg.Mem, Location: s.cfg.Location, Now: s.cfg.Now,
		StateDir: s.cfg.StateDir, Fresh: s.cfg.Fresh, Out: s.cfg.Out, Err: s.cfg.Err, Log: s.cfg.Logger, Record: s.recordCheckpoint}
}

// jobName is 'pipeline.name' or the name derived from the statement; a name another
// job of the session has gets a suffix, unless that job was stopped.
func (s *Session) jobName(plan planner.Node, settings job.Settings) string {
	name := settings.Name
	if name == "" {
		if !planner.IsInsert(plan) {
			s.selects++
		}
		name = job.DeriveName(plan, s.selects)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A stopped job's name is free again: the same statement run again resumes it.
	taken := func(n string) bool {
		for _, j := range s.jobs {
			if j.Name() == n && j.Status().State != job.Canceled {
				return true
			}
		}
		return false
	}
	base := name
	for i := 2; taken(name); i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	return name
}

func (s *Session) newJob(plan planner.Node, settings job.Settings, result job.OpFactory) (*job.Job, error) {
	// A background job or one that keeps state is what another terminal may want to
	// control; a quick SELECT leaves no trace in the state directory.
	if s.cfg.Control && (result == nil || settings.Checkpointed()) {
		s.control.Do(func() {
			var err error
			if s.stopControl, err = s.ServeControl(s.jobCtx); err != nil {
				s.warn(fmt.Sprintf("%v: streamsql list and stop cannot reach this process", err))
			}
		})
	}
	j, err := job.New(s.jobCtx, s.env(), job.Spec{Name: s.jobName(plan, settings), Statement: s.statement, Plan: plan, Settings: settings, Result: result})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.jobs = append(s.jobs, j)
	s.mu.Unlock()
	return j, nil
}

// restoreReport builds the job of plan, without running it, and says what it would
// restore of the savepoint its settings name.
func (s *Session) restoreReport(plan planner.Node, settings job.Settings) (*job.RestoreReport, error) {
	ctx, cancel := context.WithCancel(s.jobCtx)
	defer cancel()
	var result job.OpFactory
	if !planner.IsInsert(plan) {
		result = func(context.Context, int, exec.Output) (exec.Operator, error) {
			return newResultSink(s.cfg, plan.Schema(), &resultOut{w: bufio.NewWriter(io.Discard), maxRows: settings.MaxResultRows, log: slog.New(slog.DiscardHandler)}, false), nil
		}
	}
	name := settings.Name
	if name == "" {
		name = job.DeriveName(plan, s.selects+1)
	}
	j, err := job.New(ctx, s.env(), job.Spec{Name: name, Plan: plan, Settings: settings, Result: result})
	if err != nil {
		return nil, err
	}
	return j.ReadSavepoint()
}

// dryRun prints what the job of plan would restore of its savepoint, and fails when the
// restore would.
func (s *Session) dryRun(plan planner.Node, settings job.Settings) error {
	if settings.SavepointPath == "" {
		return errors.New("--dry-run reports what a job restores of a savepoint: give one with -s PATH or 'execution.savepoint.path'")
	}
	report, err := s.restoreReport(plan, settings)
	if err != nil {
		return err
	}
	defer report.Close()
	fmt.Fprint(s.cfg.Out, report)
	return report.Err()
}

// startJob starts an INSERT INTO's job in the background and prints its name.
func (s *Session) startJob(plan planner.Node, settings job.Settings) error {
	if s.cfg.DryRun {
		return s.dryRun(plan, settings)
	}
	j, err := s.newJob(plan, settings, nil)
	if err != nil {
		return err
	}
	// In the shell the job's name goes with the results; a script's stdout keeps only
	// what its queries and print sinks write, so there it goes with the notices.
	if s.cfg.Verbose {
		s.info("Submitting SQL update statement to the cluster...")
		fmt.Fprintf(s.cfg.Out, "Job ID: %s\n", j.Name())
	} else {
		s.cfg.Logger.Info("Job ID: "+j.Name(), "job", j.Name())
	}
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		if err := j.Run(s.jobCtx); err != nil && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("job %s failed: %w", j.Name(), err)
			if s.cfg.OnJobFailure != nil {
				s.cfg.OnJobFailure(err)
			}
			s.mu.Lock()
			s.jobErrs = append(s.jobErrs, err)
			s.mu.Unlock()
		}
	}()
	return nil
}

// runQuery runs a SELECT in the foreground and prints its result. Cancelling ctx (Ctrl-C)
// stops the query gracefully: what it computed so far prints.
func (s *Session) runQuery(ctx context.Context, plan planner.Node, settings job.Settings) error {
	if s.cfg.DryRun {
		return s.dryRun(plan, settings)
	}
	var res *resultSink
	out := &resultOut{w: bufio.NewWriter(s.cfg.Out), maxRows: settings.MaxResultRows, log: s.cfg.Logger}
	stream := s.streams(plan, settings) && s.cfg.Live == nil
	j, err := s.newJob(plan, settings, func(context.Context, int, exec.Output) (exec.Operator, error) {
		res = newResultSink(s.cfg, plan.Schema(), out, stream)
		return res, nil
	})
	if err != nil {
		return err
	}
	if s.cfg.Live != nil {
		out.live = s.cfg.Live(LiveSpec{Mode: settings.ResultMode, Columns: columnNames(plan.Schema()), MaxRows: settings.MaxResultRows})
		defer out.live.End()
	}
	stopped := context.AfterFunc(ctx, func() { j.Stop(false) })
	defer stopped()
	err = j.Run(s.jobCtx)
	if errors.Is(err, context.Canceled) {
		err = nil // the session's jobs were cancelled: show what there is
	}
	if res == nil || err != nil { // a failed query shows its error, not a partial result
		return err
	}
	return res.print()
}

func columnNames(schema planner.Schema) []string {
	names := make([]string, len(schema))
	for i, c := range schema {
		names[i] = c.Name
	}
	return names
}

// streams says whether a query's result prints row by row as it arrives: an
// insert-only result in csv or json, whose rows are final when they arrive, of a job
// without checkpoints. A job with checkpoints holds its result (bounded by
// 'sql-client.execution.max-table-result.rows') and snapshots it, so that a job
// resumed after a crash prints the whole result, each row once.
func (s *Session) streams(plan planner.Node, settings job.Settings) bool {
	return (s.cfg.Format == "csv" || s.cfg.Format == "json") && !plan.Updating() && !settings.Checkpointed()
}

// stopJob stops a running job gracefully and waits until it stopped.
func (s *Session) stopJob(ctx context.Context, st *parser.StopJobStmt) error {
	j := s.Job(st.Name)
	if j == nil {
		return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("no job named '%s' (SHOW JOBS lists them)", st.Name)}
	}
	if st.Savepoint {
		path, err := s.StopJobWithSavepoint(ctx, j, st.Drain, "")
		if err != nil {
			return err
		}
		return s.printTable([]string{"savepoint path"}, [][]string{{path}})
	}
	if err := s.StopJob(ctx, j, st.Drain); err != nil {
		return err
	}
	if last := j.Status().LastCheckpoint; last > 0 {
		s.info(fmt.Sprintf("Job %s stopped with checkpoint %d.", j.Name(), last))
	} else {
		s.info(fmt.Sprintf("Job %s stopped.", j.Name()))
	}
	return nil
}

// Job returns the session's running job of that name, or the latest of that name.
func (s *Session) Job(name string) *job.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *job.Job
	for _, j := range s.jobs {
		if j.Name() == name {
			found = j
		}
	}
	return found
}

// Jobs returns the figures of the session's jobs.
func (s *Session) Jobs() []job.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []job.Status
	for _, j := range s.jobs {
		out = append(out, j.Status())
	}
	return out
}

// StopJob stops j gracefully and waits until it stopped or ctx ends.
func (s *Session) StopJob(ctx context.Context, j *job.Job, drain bool) error {
	switch j.Status().State {
	case job.Finished, job.Failed, job.Canceled:
		return fmt.Errorf("job %s is not running (%s)", j.Name(), j.Status().State)
	}
	j.Stop(drain)
	select {
	case <-j.Done():
		return nil
	case <-ctx.Done():
		select {
		case <-j.Done(): // it ended as the session did
			return nil
		default:
			return ctx.Err()
		}
	}
}

// StopJobWithSavepoint stops j gracefully with a savepoint under target (the
// session's 'state.savepoints.dir' when empty) and returns its path.
func (s *Session) StopJobWithSavepoint(ctx context.Context, j *job.Job, drain bool, target string) (string, error) {
	switch j.Status().State {
	case job.Finished, job.Failed, job.Canceled:
		return "", fmt.Errorf("job %s is not running (%s)", j.Name(), j.Status().State)
	}
	return j.StopWithSavepoint(ctx, drain, target)
}

func (s *Session) recordCheckpoint(r job.CheckpointRecord) {
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
	records := append([]job.CheckpointRecord(nil), s.checkpoints...)
	s.mu.Unlock()
	var rows [][]string
	for _, r := range records {
		rows = append(rows, []string{r.Job, fmt.Sprint(r.ID), r.Status, r.Started.Format("15:04:05.000"),
			r.Duration.Round(time.Millisecond).String(), r.Stats.Alignment.Round(time.Microsecond).String(),
			fmt.Sprint(r.Stats.BytesWritten), fmt.Sprint(r.Stats.KeysChanged)})
	}
	return s.printTable([]string{"job", "id", "status", "triggered", "duration", "alignment", "bytes", "keys changed"}, rows)
}

// SetErr changes where job notices go and who is told of failed background jobs, for
// jobs started from now on.
func (s *Session) SetErr(w io.Writer, onFailure func(error)) {
	s.cfg.Err, s.cfg.OnJobFailure = w, onFailure
}
