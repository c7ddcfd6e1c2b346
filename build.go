package streamsql

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/ops"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// job is a plan built into an operator graph, with what running it needs.
type job struct {
	id      string // names its state directory
	graph   *exec.Graph
	store   *state.Store       // keyed state, when checkpointing
	readers []exec.Reader      // the readers opened by the latest run, for their skip counts
	late    []exec.LateCounter // the window operators of the latest run
	// positions are where the sources stood when the latest run ended, for a restart
	// without checkpoints.
	positions map[exec.TaskID][][]byte
	source    string // the table the source reads
	replays   bool   // its source can rewind to a checkpoint's position
}

// opFactory makes one operator of a task's chain, emitting into out.
type opFactory func(ctx context.Context, task int, out exec.Output) (exec.Operator, error)

// build turns a plan into an operator graph: this is the one place where plan nodes
// become operators. The plan is cut into stages where rows must move between tasks: a
// hash exchange before each aggregate, and a gather before the query result when it
// runs in parallel. A query's results go to the operator result makes.
func (s *Session) build(ctx context.Context, plan planner.Node, result opFactory) (*job, error) {
	env := &expr.Env{Location: s.cfg.Location, Now: s.cfg.Now}
	mem := s.cfg.Mem
	parallelism := s.parallelism()
	j := &job{id: s.jobID(plan, parallelism), graph: &exec.Graph{Mem: mem}}
	if v, ok := s.settings["table.exec.source.idle-timeout"]; ok {
		d, err := checkpoint.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("'table.exec.source.idle-timeout': %w", err)
		}
		j.graph.IdleTimeout = d
	}
	var stages []exec.Stage
	var chains [][]opFactory
	startStage := func(st exec.Stage) {
		stages = append(stages, st)
		chains = append(chains, nil)
	}
	addOp := func(f opFactory) { chains[len(chains)-1] = append(chains[len(chains)-1], f) }

	// The plan is a path from the source to its root: build from the source up.
	var path []planner.Node
	for n := plan; n != nil; {
		path = append([]planner.Node{n}, path...)
		children := n.Children()
		if len(children) == 0 {
			break
		}
		n = children[0]
	}
	// A sliced HOP window aggregate wants its window function to assign slices; a
	// SESSION window needs its aggregate to merge sessions.
	sliced, session := false, false
	for _, n := range path {
		switch n := n.(type) {
		case *planner.Aggregate:
			sliced = sliced || n.Sliced()
			session = session && n.Window == nil
		case *planner.WindowTVF:
			session = n.Kind == "SESSION"
		}
	}
	if session {
		return nil, fmt.Errorf("SESSION windows work in a window aggregate only: GROUP BY window_start, window_end and the PARTITION BY columns")
	}
	for _, n := range path {
		switch n := n.(type) {
		case *planner.Scan:
			table := n.Table
			j.source, j.replays = table.Name, s.connectors.Replayable(table)
			tasks := s.tasksOf(n, parallelism)
			startStage(exec.Stage{Name: "Source: " + table.Name, Parallelism: tasks, NewReader: func(task int) (exec.Reader, error) {
				spec := connector.SourceSpec{Table: table, Mem: mem, Location: s.cfg.Location, Task: task, Tasks: tasks, TablesDir: s.tablesDir()}
				if s.checkpointed() {
					spec.StateDir = filepath.Join(s.cfg.StateDir, j.id, "sources")
				}
				r, err := s.connectors.OpenSource(ctx, spec)
				if err == nil {
					j.readers = append(j.readers, r)
				}
				return r, err
			}})
		case *planner.Values:
			rows := n.Rows
			startStage(exec.Stage{Name: "Values", Parallelism: 1, NewReader: func(int) (exec.Reader, error) {
				return &valuesReader{rows: rows}, nil
			}})
		case *planner.Filter:
			addOp(func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
				return ops.NewFilter(mem, env, n.Cond, out)
			})
		case *planner.Project:
			addOp(func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
				return ops.NewProject(mem, env, n.Exprs, n.Schema(), out)
			})
		case *planner.WatermarkAssigner:
			addOp(func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
				return ops.NewWatermarkAssigner(mem, env, n, out)
			})
		case *planner.WindowTVF:
			w := n
			if sliced && n.Kind == "HOP" {
				slices := *n
				slices.Kind, slices.Size = "TUMBLE", n.Slide
				w = &slices
			}
			addOp(func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
				return ops.NewWindowAssigner(mem, w, out), nil
			})
		case *planner.Aggregate:
			in := exec.Input{Stage: len(stages) - 1, Partition: exec.Hash, HashKeys: n.PartitionKeys()}
			if len(in.HashKeys) == 0 {
				in.Partition = exec.Gather
			}
			st := exec.Stage{Name: "GroupAggregate", Parallelism: s.tasksOf(n, parallelism), Inputs: []exec.Input{in}}
			startStage(st)
			uid := fmt.Sprintf("aggregate-%d", len(stages)-1)
			tasks := st.Parallelism
			maxGroups, err := s.cacheGroups()
			if err != nil {
				return nil, err
			}
			addOp(func(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
				var ks *ops.KeyedState
				if j.store != nil {
					first, last := exec.KeyGroupRange(task, tasks)
					ks = &ops.KeyedState{Store: j.store, Namespace: uid, FirstKG: first, LastKG: last}
				}
				cache := ops.Cache{MaxGroups: maxGroups, SpillPath: filepath.Join(s.cfg.StateDir, j.id, fmt.Sprintf("spill-%s-%d.db", uid, task))}
				op := ops.NewAggregate(mem, n, out, ks, cache)
				if lc, ok := op.(exec.LateCounter); ok && n.Window != nil {
					j.late = append(j.late, lc)
				}
				return op, nil
			})
		case *planner.Sink:
			tasks := stages[len(stages)-1].Parallelism
			checkpointed := s.checkpointed()
			addOp(func(ctx context.Context, task int, _ exec.Output) (exec.Operator, error) {
				spec := connector.SinkSpec{Table: n.Table, Schema: n.Schema(), Mem: mem, Location: s.cfg.Location, Stdout: s.cfg.Out, Stderr: s.cfg.Err,
					ID: fmt.Sprintf("%s-%s-%d", j.id, strings.ToLower(n.Table.Name), task), Task: task, Tasks: tasks, Checkpointed: checkpointed, TablesDir: s.tablesDir()}
				if checkpointed {
					spec.StateDir = filepath.Join(s.cfg.StateDir, j.id, "sinks")
				}
				return s.connectors.OpenSink(ctx, spec)
			})
		default:
			return nil, fmt.Errorf("cannot run plan node %T", n)
		}
	}
	if result != nil {
		if stages[len(stages)-1].Parallelism > 1 {
			startStage(exec.Stage{Name: "Collect", Parallelism: 1, Inputs: []exec.Input{{Stage: len(stages) - 1, Partition: exec.Gather}}})
		}
		addOp(result)
	}
	for i := range stages {
		chain := chains[i]
		stages[i].NewChain = func(task int, out exec.Output, restored [][]byte) ([]exec.Operator, error) {
			return buildChain(ctx, chain, task, out, restored)
		}
	}
	j.graph.Stages = stages
	return j, nil
}

// defaultCacheGroups is how many groups an aggregate task keeps in memory unless
// 'state.cache.max-keys' says otherwise.
const defaultCacheGroups = 2_000_000

// cacheGroups is the session's 'state.cache.max-keys': the groups an aggregate task
// keeps in memory before it moves the least used to disk.
func (s *Session) cacheGroups() (int, error) {
	v, ok := s.settings["state.cache.max-keys"]
	if !ok {
		return defaultCacheGroups, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("'state.cache.max-keys' must be a positive number of keys, got '%s'", v)
	}
	return n, nil
}

// tablesDir is where embedded tables live unless their 'path' says otherwise.
func (s *Session) tablesDir() string { return filepath.Join(s.cfg.StateDir, "tables") }

// checkpointed says whether the session's jobs take checkpoints.
func (s *Session) checkpointed() bool {
	cfg, err := checkpoint.ParseConfig(s.settings)
	return err == nil && cfg.Interval > 0
}

// parallelism is the session's 'parallelism.default'.
func (s *Session) parallelism() int {
	if p, err := strconv.Atoi(s.settings["parallelism.default"]); err == nil && p > 0 {
		return p
	}
	return 1
}

// tasksOf returns how many tasks run plan node n: a source that cannot split its input,
// and a global aggregate, run in one task; other operators run as many as their input.
func (s *Session) tasksOf(n planner.Node, parallelism int) int {
	switch n := n.(type) {
	case *planner.Scan:
		if !s.connectors.Parallelizable(n.Table) {
			return 1
		}
		return parallelism
	case *planner.Values:
		return 1
	case *planner.Aggregate:
		if len(n.PartitionKeys()) == 0 {
			return 1
		}
		return parallelism
	}
	if c := n.Children(); len(c) > 0 {
		return s.tasksOf(c[0], parallelism)
	}
	return parallelism
}

// buildChain makes a task's operators, linked as an exec.Chain ending in out, and
// restores their state.
func buildChain(ctx context.Context, chain []opFactory, task int, out exec.Output, restored [][]byte) (built []exec.Operator, err error) {
	built = make([]exec.Operator, len(chain))
	defer func() {
		if err != nil {
			closeAll(built)
		}
	}()
	links := &exec.Chain{Ops: built, Last: out}
	for i := len(chain) - 1; i >= 0; i-- {
		op, err := chain[i](ctx, task, links.Output(i))
		if err != nil {
			return built, err
		}
		built[i] = op
		if i < len(restored) && restored[i] != nil {
			r, ok := op.(exec.Restorer)
			if !ok {
				return built, fmt.Errorf("checkpoint holds state for operator %d (%T), which keeps none", i, op)
			}
			if err := r.Restore(restored[i]); err != nil {
				return built, err
			}
		}
	}
	return built, nil
}

func closeAll(opsList []exec.Operator) {
	for _, op := range opsList {
		if c, ok := op.(exec.Closer); ok && op != nil {
			c.Close()
		}
	}
}

// valuesReader produces rows with no columns once, for SELECT without FROM.
type valuesReader struct {
	rows int
	done bool
}

func (v *valuesReader) Next(context.Context) (exec.Batch, error) {
	if v.done {
		return exec.Batch{}, io.EOF
	}
	v.done = true
	return exec.Batch{Rec: array.NewRecord(arrow.NewSchema(nil, nil), nil, int64(v.rows))}, nil
}

func (v *valuesReader) Close() error { return nil }
