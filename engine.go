package streamsql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/internal/job"
	"github.com/streamsql/streamsql/internal/web"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// Config sets up a session.
type Config struct {
	Out io.Writer // query results and command output
	Err io.Writer // job notices (unless Logger is set), print sinks' standard error
	// Logger receives the session's and its jobs' notices (restores, restarts, skipped
	// records at info, each checkpoint at debug). Nil: info and above as plain lines
	// on Err.
	Logger *slog.Logger
	Format string // table (default), csv, json or changelog
	// Verbose prints a confirmation for statements that produce no output, as the REPL does.
	Verbose  bool
	Mem      memory.Allocator // default: the Go allocator
	Location *time.Location   // session time zone; default: the machine's
	Now      func() time.Time // the clock; default time.Now
	// StateDir holds each job's checkpoints (default ./streamsql-state). A job started
	// again with the same statement resumes from its latest completed checkpoint.
	StateDir string
	Fresh    bool // discard earlier checkpoints: start jobs from nothing
	// OnJobFailure, when set, is told at once of a background job that failed.
	OnJobFailure func(error)
	// Control serves `streamsql list` and `streamsql stop` on a socket in StateDir
	// from the first job on, until Close.
	Control bool
	// Settings are SET options the session starts with (the command line's -s sets
	// 'execution.savepoint.path').
	Settings map[string]string
	// DryRun builds each job and reports what it would restore of its savepoint,
	// without running it; a job that would not restore fails.
	DryRun bool
	// MetricsAddr, when set, serves Prometheus metrics of the session's jobs there
	// until Close; WebAddr the dashboard and its REST API. A bare port means loopback,
	// ":port" every interface (see web.Addr).
	MetricsAddr, WebAddr string
	// Live, when set, shows each SELECT's result while it runs instead of printing it
	// by Format: it returns the view the query's changes go to.
	Live func(LiveSpec) LiveResult
}

// Session executes statements against its own catalog and settings.
type Session struct {
	cfg      Config
	catalog  *planner.Catalog
	settings map[string]string
	location *time.Location // the session's time zone before any SET, for RESET
	// connectors are the built-in connectors and those of packages of their own.
	connectors *connector.Registry

	jobCtx     context.Context // background jobs run until it is cancelled
	cancelJobs context.CancelFunc
	running    sync.WaitGroup
	selects    int // SELECTs run so far, for their job names
	// statement names the statement being executed, for its job's runtime errors.
	statement string
	// pendingSet collects the INSERTs after BEGIN STATEMENT SET until END runs them as
	// one job; setLabel names the BEGIN, as the job's statement.
	pendingSet *parser.StatementSetStmt
	setLabel   string

	control     sync.Once
	stopControl func() // waits for the control socket to close, once jobCtx ends

	servers []*web.Server // the metrics endpoint and the dashboard, until Close
	// MetricsAddr and WebAddr are where they listen (with the port the system chose
	// for port 0), empty when they do not.
	MetricsAddr, WebAddr string

	mu          sync.Mutex // guards what follows
	jobs        []*job.Job // every job started, in order
	jobErrs     []error
	checkpoints []job.CheckpointRecord
}

// Formats are the accepted values of Config.Format.
var Formats = []string{"table", "csv", "json", "changelog"}

// NewSession returns a session with an empty catalog.
func NewSession(cfg Config) (*Session, error) {
	if cfg.Format == "" {
		cfg.Format = "table"
	}
	if cfg.Mem == nil {
		cfg.Mem = memory.NewGoAllocator()
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Err == nil {
		cfg.Err = io.Discard
	}
	if cfg.StateDir == "" {
		cfg.StateDir = "streamsql-state"
	}
	s := &Session{cfg: cfg, catalog: planner.NewCatalog(), settings: map[string]string{}, connectors: connectors, location: cfg.Location}
	for k, v := range cfg.Settings {
		if err := job.Check(k, v); err != nil {
			return nil, err
		}
		s.settings[k] = v
	}
	if s.cfg.Logger == nil {
		s.cfg.Logger = slog.New(plainHandler{s: s})
	}
	s.jobCtx, s.cancelJobs = context.WithCancel(context.Background())
	if err := s.SetFormat(cfg.Format); err != nil {
		return s, err
	}
	if err := s.serveHTTP(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// SetFormat changes how SELECT results print.
func (s *Session) SetFormat(format string) error {
	if !contains(Formats, format) {
		return fmt.Errorf("unknown format %q (use %s)", format, strings.Join(Formats, ", "))
	}
	s.cfg.Format = format
	return nil
}

// Exec parses sql and executes its statements in order. SELECT runs in the foreground
// until its input ends or ctx is cancelled; INSERT INTO starts a job in the background
// (Wait waits for them). A failing statement stops the script; its error names the
// position in sql.
func (s *Session) Exec(ctx context.Context, sql string) error {
	script, err := parser.Parse(sql)
	if err != nil {
		return err
	}
	for _, stmt := range script.Stmts {
		if ctx.Err() != nil {
			return nil // stopped (Ctrl-C, SIGTERM): the statements after it do not run
		}
		s.statement = statementLabel(sql, stmt)
		if err := s.execStmt(ctx, stmt); err != nil {
			return withSource(err, sql)
		}
	}
	return nil
}

// Wait waits for the background jobs and returns their errors. Once every job of the
// session finished, their records are cleared, so the script runs from the start when
// it runs again; until then a restarted script skips the jobs that finished.
func (s *Session) Wait() error {
	s.running.Wait()
	err := s.JobErrors()
	if err != nil {
		return err
	}
	s.mu.Lock()
	jobs := append([]*job.Job(nil), s.jobs...)
	s.mu.Unlock()
	for _, j := range jobs {
		if j.Status().State != job.Finished {
			return nil
		}
	}
	for _, j := range jobs {
		if err := j.Forget(); err != nil {
			s.warn(fmt.Sprintf("%v: its record of having finished stays", err))
		}
	}
	return nil
}

// JobErrors returns the errors of the background jobs that failed since the last call.
func (s *Session) JobErrors() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := errors.Join(s.jobErrs...)
	s.jobErrs = nil
	return err
}

// StopJobs stops every running job gracefully, each with a final checkpoint when it
// takes checkpoints; Wait then returns once they have stopped.
func (s *Session) StopJobs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		j.Stop(false)
	}
}

// CancelJobs cancels every job at once, without a final checkpoint.
func (s *Session) CancelJobs() { s.cancelJobs() }

// Close cancels what still runs and closes the control socket.
func (s *Session) Close() {
	for _, srv := range s.servers {
		srv.Close()
	}
	s.servers = nil
	s.cancelJobs()
	s.running.Wait()
	if s.stopControl != nil {
		s.stopControl()
	}
}

func (s *Session) execStmt(ctx context.Context, stmt parser.Stmt) error {
	settings, err := job.ParseSettings(s.settings)
	if err != nil {
		return err
	}
	p := &planner.Planner{Catalog: s.catalog, Emit: settings.Emit, Notice: s.warn, Bounded: s.connectors.Bounded, CanLookup: connectors.CanLookup}
	if s.pendingSet != nil {
		if stmt, err = s.inStatementSet(p, stmt); stmt == nil || err != nil {
			return err
		}
	}
	switch st := stmt.(type) {
	case *parser.BeginStatementSetStmt:
		s.pendingSet, s.setLabel = &parser.StatementSetStmt{Pos: st.Pos}, s.statement
		s.info("Begin a statement set.")
	case *parser.EndStmt:
		return &planner.Error{Pos: st.Pos, Msg: "END without BEGIN STATEMENT SET"}
	case *parser.SetStmt:
		if st.Key == "" {
			return s.listSettings()
		}
		return s.set(st)
	case *parser.ResetStmt:
		return s.reset(st)
	case *parser.ShowStmt:
		return s.show(st)
	case *parser.ShowColumnsStmt:
		return s.showColumns(st)
	case *parser.ShowCreateStmt:
		return s.showCreate(st)
	case *parser.UseStmt:
		return s.use(st)
	case *parser.CreateFunctionStmt:
		return createFunction(st)
	case *parser.CreateTableStmt:
		if st.Query != nil {
			return s.createTableAs(p, st, settings)
		}
		if st.Like != nil {
			if st, err = s.mergeLike(st); err != nil {
				return err
			}
		}
		t, err := planner.BindTable(st)
		if err != nil {
			return err
		}
		if err := s.catalog.AddTable(t); err != nil {
			if errors.Is(err, planner.ErrExists) && st.IfNotExists {
				return nil
			}
			return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("table or view %s already exists", st.Name)}
		}
		s.info("Table has been created.")
	case *parser.CreateViewStmt:
		v, err := p.BindView(st)
		if err != nil {
			return err
		}
		if err := s.catalog.AddView(v); err != nil {
			if errors.Is(err, planner.ErrExists) && st.IfNotExists {
				return nil
			}
			return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("table or view %s already exists", st.Name)}
		}
		s.info("View has been created.")
	case *parser.DropStmt:
		if err := s.catalog.Drop(st.Name, st.View); err != nil {
			if st.IfExists {
				return nil
			}
			kind := "table"
			if st.View {
				kind = "view"
			}
			return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("%s %s does not exist", kind, st.Name)}
		}
		s.info("Dropped.")
	case *parser.QueryStmt:
		plan, err := p.PlanQuery(st.Query)
		if err != nil {
			return err
		}
		return s.runQuery(ctx, plan, settings)
	case *parser.InsertStmt:
		plan, err := p.PlanInsert(st)
		if err != nil {
			return err
		}
		return s.startJob(plan, settings)
	case *parser.StatementSetStmt:
		plan, err := p.PlanStatementSet(st)
		if err != nil {
			return err
		}
		return s.startJob(plan, settings)
	case *parser.ExplainStmt:
		return s.explain(p, st, settings)
	case *parser.ShowJobsStmt:
		return s.showJobs()
	case *parser.StopJobStmt:
		return s.stopJob(ctx, st)
	case *parser.ShowTablesStmt:
		return s.showTables()
	case *parser.ShowCheckpointsStmt:
		return s.showCheckpoints()
	case *parser.DescribeStmt:
		return s.describe(st)
	case *parser.DescribeJobStmt:
		return s.describeJob(st)
	default:
		return fmt.Errorf("unsupported statement %s", stmt)
	}
	return nil
}

// inStatementSet takes a statement that follows BEGIN STATEMENT SET: an INSERT is
// planned, to report its errors where it is written, and kept (nil is returned); END
// returns the set to run. Other statements are refused.
func (s *Session) inStatementSet(p *planner.Planner, stmt parser.Stmt) (parser.Stmt, error) {
	switch st := stmt.(type) {
	case *parser.InsertStmt:
		if _, err := p.PlanInsert(st); err != nil {
			return nil, err
		}
		s.pendingSet.Inserts = append(s.pendingSet.Inserts, st)
		s.info("Add SQL update statement to the statement set.")
		return nil, nil
	case *parser.EndStmt:
		set := s.pendingSet
		s.pendingSet = nil
		if len(set.Inserts) == 0 {
			return nil, &planner.Error{Pos: st.Pos, Msg: "the statement set is empty: put INSERT INTO statements between BEGIN STATEMENT SET and END"}
		}
		s.statement = s.setLabel
		return set, nil
	}
	return nil, &planner.Error{Pos: stmt.Position(), Msg: "only INSERT INTO statements can follow BEGIN STATEMENT SET, until END"}
}

func (s *Session) info(msg string) {
	if s.cfg.Verbose {
		fmt.Fprintf(s.cfg.Out, "[INFO] %s\n", msg)
	}
}

// set applies SET 'key' = 'value', checking the values of the keys the engine reads. A
// key that is not known but close to one gets a warning.
func (s *Session) set(st *parser.SetStmt) error {
	if st.Key == "table.local-time-zone" {
		loc, err := time.LoadLocation(st.Value)
		if err != nil {
			return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("unknown time zone '%s'", st.Value)}
		}
		s.cfg.Location = loc
	}
	if err := job.Check(st.Key, st.Value); err != nil {
		return &planner.Error{Pos: st.Pos, Msg: err.Error()}
	}
	if near := job.Suggest(st.Key); near != "" {
		s.warn(fmt.Sprintf("unknown key '%s', did you mean '%s'? It is stored, but nothing reads it.", st.Key, near))
	}
	s.settings[st.Key] = st.Value
	s.info("Session property has been set.")
	return nil
}

func (s *Session) explain(p *planner.Planner, st *parser.ExplainStmt, settings job.Settings) error {
	notes, err := explainDetails(st)
	if err != nil {
		return err
	}
	var plan planner.Node
	switch inner := st.Stmt.(type) {
	case *parser.QueryStmt:
		plan, err = p.PlanQuery(inner.Query)
	case *parser.InsertStmt:
		plan, err = p.PlanInsert(inner)
	case *parser.StatementSetStmt:
		plan, err = p.PlanStatementSet(inner)
	default:
		return &planner.Error{Pos: st.Pos, Msg: "EXPLAIN needs a SELECT, an INSERT INTO or a STATEMENT SET"}
	}
	if err != nil {
		return err
	}
	_, isQuery := st.Stmt.(*parser.QueryStmt)
	par := settings.Parallelism
	fmt.Fprintf(s.cfg.Out, "== Physical Plan ==\n%s", planner.Explain(plan, func(n planner.Node) int { return job.TasksOf(s.connectors, n, par) }))
	g := s.guarantee(plan, isQuery, settings.Checkpoint)
	fmt.Fprintf(s.cfg.Out, "\n== Guarantee ==\n%s\n", g)
	if settings.SavepointPath != "" {
		report, err := s.restoreReport(plan, settings)
		if err != nil {
			return err
		}
		report.Close()
		fmt.Fprintf(s.cfg.Out, "\n== Savepoint ==\n%s", report)
	}
	if len(notes) > 0 {
		fmt.Fprintf(s.cfg.Out, "\n== Details ==\n%s\n", strings.Join(notes, "\n"))
	}
	fmt.Fprintf(s.cfg.Out, "\n== Portability ==\n%s\n", portability(plan))
	return nil
}

// explainDetails says what EXPLAIN shows of each of Flink's ExplainDetails it was given:
// the changelog mode is on every operator's line anyway; there are no cost estimates or
// plan advice to show; the JSON plan is refused.
func explainDetails(st *parser.ExplainStmt) ([]string, error) {
	var notes []string
	for _, d := range st.Details {
		switch d {
		case "CHANGELOG_MODE":
			notes = append(notes, "CHANGELOG_MODE: each operator's changelog=[...] says whether it emits inserts only or updates (-U/+U/-D)")
		case "ESTIMATED_COST":
			notes = append(notes, "ESTIMATED_COST: not shown; streamsql has no cost model, so it estimates no rows or costs")
		case "PLAN_ADVICE":
			notes = append(notes, "PLAN_ADVICE: not shown; streamsql gives no plan advice")
		case "JSON_EXECUTION_PLAN":
			return nil, &planner.Error{Pos: st.Pos, Msg: "EXPLAIN JSON_EXECUTION_PLAN is not supported: streamsql prints its plan as text (EXPLAIN without it)"}
		}
	}
	return notes, nil
}

// guarantee states what a job's results promise after failures, and why: for a
// statement set, one line per sink.
func (s *Session) guarantee(plan planner.Node, isQuery bool, cfg checkpoint.Config) string {
	if set, ok := plan.(*planner.SinkSet); ok {
		lines := make([]string, len(set.Sinks))
		for i, sink := range set.Sinks {
			lines[i] = s.guarantee(sink, false, cfg)
		}
		return strings.Join(lines, "\n")
	}
	var sources, unreplayable []string
	planner.Walk(plan, func(n planner.Node) {
		if sc, ok := n.(*planner.Scan); ok {
			sources = append(sources, fmt.Sprintf("%s (%s)", sc.Table.Name, sc.Table.Connector()))
			if !s.connectors.Replayable(sc.Table) {
				unreplayable = append(unreplayable, sc.Table.Name)
			}
		}
	})
	from, to := "values", "query result"
	if len(sources) > 0 {
		from = strings.Join(sources, " + ")
	}
	if sink, ok := plan.(*planner.Sink); ok {
		to = fmt.Sprintf("%s (%s)", sink.Table.Name, sink.Table.Connector())
	} else if s.cfg.Format == "changelog" {
		to = "query changelog"
	}
	path := from + " -> " + to + ": "
	aligned := cfg.Mode == checkpoint.ExactlyOnce
	switch {
	case cfg.Interval <= 0:
		return path + "at-most-once: checkpointing is off, so after a failure state starts empty and sources go on from where they were"
	case len(unreplayable) > 0:
		return path + "at-most-once: the source of " + strings.Join(unreplayable, ", ") + " cannot replay what it delivered before a failure (a socket source keeps what it received with 'source.wal' = 'true')"
	case !aligned:
		return path + "at-least-once: checkpoints are not aligned, so replayed records may count twice"
	case isQuery && s.cfg.Format != "changelog":
		// A query with checkpoints holds its result (see streams).
		return path + "exactly-once: the materialized result is restored from aligned checkpoints and the source replays from their positions"
	case isQuery:
		return path + "at-least-once: changes print at once, so those after the last checkpoint print again on replay"
	}
	switch s.connectors.DeliveryOf(plan.(*planner.Sink).Table) {
	case connector.Upserts:
		return path + "exactly-once final state: the sink upserts by primary key, so rows written again on replay overwrite themselves"
	case connector.Commits:
		return path + "exactly-once: the sink commits its output when a checkpoint completes, so readers never see uncommitted or rolled-back rows"
	}
	return path + "at-least-once: the sink writes at once, so output after the last checkpoint is written again on replay"
}

// withSource adds the statement's line and a caret under the column to a planning error.
// statementLabel names stmt of sql by its position and its first line, as a runtime
// error of its job shows it: statement at line 3 (INSERT INTO snk SELECT a / b FROM t).
func statementLabel(sql string, stmt parser.Stmt) string {
	pos := stmt.Position()
	lines := strings.Split(sql, "\n")
	if pos.Line < 1 || pos.Line > len(lines) {
		return fmt.Sprintf("statement at line %d", pos.Line)
	}
	text := strings.TrimSpace(lines[pos.Line-1])
	if col := pos.Column - 1; col > 0 && col < len(lines[pos.Line-1]) {
		text = strings.TrimSpace(lines[pos.Line-1][col:])
	}
	if r := []rune(text); len(r) > 72 {
		text = string(r[:69]) + "..."
	}
	return fmt.Sprintf("statement at line %d (%s)", pos.Line, text)
}

func withSource(err error, sql string) error {
	var pe *planner.Error
	if !errors.As(err, &pe) || pe.Pos.Line == 0 {
		return err
	}
	lines := strings.Split(sql, "\n")
	if pe.Pos.Line > len(lines) {
		return err
	}
	line := strings.TrimRight(lines[pe.Pos.Line-1], "\r")
	caret := strings.Repeat(" ", max(pe.Pos.Column-1, 0)) + "^"
	return fmt.Errorf("%w\n%s\n%s", err, line, caret)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// streamsqlOnly are the table options and connectors Flink does not have.
var (
	streamsqlOnlyConnectors = []string{"embedded"}
	streamsqlOnlyOptions    = []string{"source.wal", planner.LateDataSink}
)

// portability names what of plan a Flink cluster does not run: streamsql's own
// connectors and table options. Connector options a move changes anyway (paths,
// addresses) are not named.
func portability(plan planner.Node) string {
	var uses []string
	seen := map[string]bool{}
	note := func(t *planner.Table) {
		if t == nil || seen[t.Name] {
			return
		}
		seen[t.Name] = true
		var what []string
		if c, _ := t.Option("connector"); slices.Contains(streamsqlOnlyConnectors, c) {
			what = append(what, fmt.Sprintf("connector '%s'", c))
		}
		for _, o := range streamsqlOnlyOptions {
			if _, ok := t.Option(o); ok {
				what = append(what, fmt.Sprintf("option '%s'", o))
			}
		}
		if len(what) > 0 {
			uses = append(uses, fmt.Sprintf("table %s: %s", t.Name, strings.Join(what, ", ")))
		}
	}
	planner.Walk(plan, func(n planner.Node) {
		switch n := n.(type) {
		case *planner.Scan:
			note(n.Table)
		case *planner.Sink:
			note(n.Table)
		case *planner.LookupJoin:
			note(n.Table)
		}
	})
	if len(uses) == 0 {
		return "Flink runs this plan as written (with its connectors' options for the cluster)."
	}
	return "streamsql only, to change for a Flink cluster: " + strings.Join(uses, "; ") + "."
}
