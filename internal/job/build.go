package job

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/ops"
	"github.com/streamsql/streamsql/planner"
)

// OpFactory makes one operator of a task's chain, emitting into out.
type OpFactory func(ctx context.Context, task int, out exec.Output) (exec.Operator, error)

// build turns the job's plan into its operator graph: this is the one place where plan
// nodes become operators. The plan is cut into stages where rows must move between
// tasks: a hash exchange before each aggregate and each join, and a gather before the
// query result when it runs in parallel. A query's results go to the operator
// spec.Result makes.
func (j *Job) build(ctx context.Context) error {
	env, s := j.env, j.settings
	b := &builder{j: j, ctx: ctx, env: &expr.Env{Location: env.Location, Now: env.Now}, mem: env.Mem,
		slices: map[*planner.WindowTVF]bool{}, uids: map[string]bool{}, labels: map[planner.Node]string{},
		scans: map[string]int{}, shared: map[string]int{}, subplans: reusedSubplans(j.plan), built: map[string]int{}, hashedBy: map[int][][]int{}}
	j.graph = &exec.Graph{Mem: env.Mem, IdleTimeout: s.IdleTimeout}
	if err := b.windows(j.plan, nil); err != nil {
		return fatal(err)
	}
	b.countScans(j.plan, map[string]bool{})
	b.unread = unreadByScan(j.plan)
	last, err := b.node(j.plan)
	if err != nil {
		return fatal(err)
	}
	if j.result != nil {
		if b.stages[last].Parallelism > 1 {
			last = b.startStage(exec.Stage{Name: "Collect", Parallelism: 1, Inputs: []exec.Input{{Stage: last, Partition: exec.Gather}}})
		}
		b.addOp(last, j.countOut)
		b.addStateful(last, b.slot("result", "query", nil), j.result)
		b.name(last, "QueryResult")
	}
	for i := range b.stages {
		chain, side := b.chains[i], b.side[i]
		b.stages[i].Side = side
		b.stages[i].Ops = b.names[i]
		stage := i
		b.stages[i].NewChain = func(task int, out exec.Output, restored [][]byte) ([]exec.Operator, error) {
			return buildChain(ctx, chain, side, task, out, restored, j.graph.Metrics().Task(exec.TaskID{Stage: stage, Task: task}))
		}
	}
	j.graph.Stages = b.stages
	j.slots = b.slots
	j.sources = b.sources
	return nil
}

// builder holds what build makes as it walks a plan.
type builder struct {
	j       *Job
	ctx     context.Context
	env     *expr.Env
	mem     memory.Allocator
	stages  []exec.Stage
	chains  [][]OpFactory
	side    [][]bool   // by stage and operator: see exec.Chain
	names   [][]string // by stage and operator: what EXPLAIN calls it, "" for plumbing
	sources []string   // by stage: what EXPLAIN calls a source stage's reader
	slots   [][]Slot   // by stage: what each entry of a task's state is
	uids    map[string]bool
	slices  map[*planner.WindowTVF]bool // HOP windows whose aggregate wants slices
	labels  map[planner.Node]string     // physical nodes standing for logical ones (see describe)
	scans   map[string]int              // by scanKey: how often the plan reads the table
	shared  map[string]int              // by scanKey: the source stage of a table read more than once
	// subplans holds the key of each plan part that the plan holds more than once
	// (see reusedSubplans), built the stage where the first one's output leaves.
	subplans map[planner.Node]string
	built    map[string]int
	// hashedBy holds, by stage, the column lists of its output by whose hash its rows
	// are at their tasks (a join's keys), so that a keyed operator over the same keys
	// joins its chain instead of starting a stage behind an exchange.
	hashedBy map[int][][]int
	unread   map[string][]string // by scanKey: what the plan never reads of the table
}

// scanKey tells scans of one table apart from scans of another, or of the same table
// with other options (an OPTIONS hint).
func scanKey(n *planner.Scan) string {
	t := n.Table
	opts := make([]string, 0, len(t.Options))
	for k, v := range t.Options {
		opts = append(opts, k+"\x00"+v)
	}
	sort.Strings(opts)
	return strings.ToLower(t.Name) + "\x00" + t.Schema().String() + "\x00" + strings.Join(opts, "\x00")
}

// unreadByScan names, by scanKey, what the plan never reads of each table it scans:
// what no scan of the table with those options reads.
func unreadByScan(plan planner.Node) map[string][]string {
	merged := map[string]planner.Reads{}
	schemas := map[string]planner.Schema{}
	for scan, reads := range planner.ScanReads(plan) {
		key := scanKey(scan)
		if merged[key] == nil {
			merged[key], schemas[key] = make(planner.Reads, len(reads)), scan.Schema()
		}
		for i := range reads {
			merged[key][i].Add(reads[i])
		}
	}
	out := map[string][]string{}
	for key, reads := range merged {
		out[key] = reads.Unread(schemas[key])
	}
	return out
}

// countScans counts the plan's scans of each table: a table the plan reads more than
// once (by the INSERTs of a statement set, a self-join, a union) is read once, and its
// source stage feeds every scan (see sharedScan).
func (b *builder) countScans(n planner.Node, seen map[string]bool) {
	if key, ok := b.subplans[n]; ok {
		if seen[key] {
			return // a copy of a plan part built once: its scans read nothing more
		}
		seen[key] = true
	}
	if s, ok := n.(*planner.Scan); ok {
		b.scans[scanKey(s)]++
	}
	for _, c := range n.Children() {
		b.countScans(c, seen)
	}
}

// reusedSubplans finds the parts of a plan that it holds more than once, as the two
// sides of Nexmark's q5 both aggregate the same window function over the same table,
// and keys each copy by what it computes. Each is built once and its rows go to every
// reader of a copy, as Flink reuses sub-plans. Copies are equal node by node: the shape
// of the plan (node types, schemas, tables) only finds the candidates. Sinks are never
// one: two INSERTs write twice.
func reusedSubplans(root planner.Node) map[planner.Node]string {
	byShape := map[string][]planner.Node{}
	var visit func(n planner.Node) string
	visit = func(n planner.Node) string {
		h := sha256.New()
		fmt.Fprintf(h, "%T\x00%s", n, n.Schema())
		if s, ok := n.(*planner.Scan); ok {
			io.WriteString(h, scanKey(s))
		}
		for _, c := range n.Children() {
			io.WriteString(h, visit(c))
		}
		shape := hex.EncodeToString(h.Sum(nil))
		switch n.(type) {
		case *planner.Scan, *planner.Sink, *planner.SinkSet: // scans are shared by table
		default:
			byShape[shape] = append(byShape[shape], n)
		}
		return shape
	}
	visit(root)
	keys := map[planner.Node]string{}
	for shape, nodes := range byShape {
		for i, n := range nodes {
			if _, ok := keys[n]; ok {
				continue
			}
			key := fmt.Sprintf("%s/%d", shape, i)
			for _, m := range nodes[i+1:] {
				if _, ok := keys[m]; !ok && reflect.DeepEqual(n, m) {
					keys[n], keys[m] = key, key
				}
			}
		}
	}
	// A part inside a reused part is built once with it: it needs no reuse of its own
	// unless the build reaches it more than once, from elsewhere too.
	reached := map[string]int{}
	var walk func(n planner.Node)
	walk = func(n planner.Node) {
		if key, ok := keys[n]; ok {
			if reached[key]++; reached[key] > 1 {
				return
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	for n, key := range keys {
		if reached[key] < 2 {
			delete(keys, n)
		}
	}
	return keys
}

// reuse returns a stage that gets every row of the stage where a reused plan part's
// output leaves.
func (b *builder) reuse(stage int) int {
	return b.startStage(exec.Stage{Name: "Reuse", Parallelism: b.stages[stage].Parallelism,
		Inputs: []exec.Input{{Stage: stage, Partition: exec.Forward}}})
}

// sharedScan returns a stage that gets every row of the source stage that reads n's
// table, started by the first scan of it, and whose operators are this scan's alone.
func (b *builder) sharedScan(n *planner.Scan, source int) int {
	return b.startStage(exec.Stage{Name: "Read: " + n.Table.Name, Parallelism: b.stages[source].Parallelism,
		Inputs: []exec.Input{{Stage: source, Partition: exec.Forward}}})
}

func (b *builder) startStage(st exec.Stage) int {
	b.stages = append(b.stages, st)
	b.chains = append(b.chains, nil)
	b.side = append(b.side, nil)
	b.names = append(b.names, nil)
	b.sources = append(b.sources, "")
	b.slots = append(b.slots, nil)
	return len(b.stages) - 1
}

// startSource starts a source stage, whose reader's state (its read positions) is
// the first entry of its tasks' state.
func (b *builder) startSource(st exec.Stage, reader Slot) int {
	stage := b.startStage(st)
	b.slots[stage] = append(b.slots[stage], reader)
	return stage
}

func (b *builder) addOp(stage int, f OpFactory) {
	delete(b.hashedBy, stage) // an operator's output columns are others
	b.chains[stage] = append(b.chains[stage], f)
	b.side[stage] = append(b.side[stage], false)
	b.names[stage] = append(b.names[stage], "")
	b.slots[stage] = append(b.slots[stage], Slot{})
}

// describe is how EXPLAIN describes n, or the label of the logical node n implements.
func (b *builder) describe(n planner.Node) string {
	if label, ok := b.labels[n]; ok {
		return label
	}
	return n.Describe()
}

// name names the operator added last to stage, as EXPLAIN describes it.
func (b *builder) name(stage int, desc string) {
	b.names[stage][len(b.names[stage])-1] = desc
}

// addStateful adds an operator whose state belongs in checkpoints, as slot.
func (b *builder) addStateful(stage int, slot Slot, f OpFactory) {
	b.addOp(stage, f)
	b.slots[stage][len(b.slots[stage])-1] = slot
}

// slot names the state of a stateful operator: kind-<digest of what its state means>,
// so that it is found again in an edited query (see planner.MeaningOf), or
// kind-<name> for a source or sink table. A second operator of the same name in the
// job gets -2, and so on.
func (b *builder) slot(kind, name string, meaning []string) Slot {
	if name == "" {
		sum := sha256.Sum256([]byte(strings.Join(meaning, "\n")))
		name = hex.EncodeToString(sum[:6])
	}
	uid := kind + "-" + name
	for n := 2; b.uids[uid]; n++ {
		uid = fmt.Sprintf("%s-%s-%d", kind, name, n)
	}
	b.uids[uid] = true
	return Slot{UID: uid, Kind: kind, Meaning: meaning}
}

// meaningSlot is the slot of a stateful plan node.
func (b *builder) meaningSlot(n planner.Node) Slot {
	m, _ := planner.MeaningOf(n)
	return b.slot(m.Kind, "", m.Lines)
}

// addSideOp adds a side operator, which only the operator before it emits into.
func (b *builder) addSideOp(stage int, slot Slot, f OpFactory) {
	b.addStateful(stage, slot, f)
	b.side[stage][len(b.side[stage])-1] = true
}

// windows finds the HOP window functions whose aggregate (agg, the nearest one above)
// wants slices assigned, and refuses SESSION windows that no window aggregate merges.
func (b *builder) windows(n planner.Node, agg *planner.Aggregate) error {
	switch n := n.(type) {
	case *planner.Aggregate:
		agg = n
	case *planner.Join, *planner.TemporalJoin, *planner.Rank, *planner.OverAggregate, *planner.Sort, *planner.MatchRecognize:
		agg = nil
	case *planner.WindowTVF:
		if n.Kind == "SESSION" && (agg == nil || agg.Window == nil) {
			return fmt.Errorf("SESSION windows work in a window aggregate only: GROUP BY window_start, window_end and the PARTITION BY columns")
		}
		b.slices[n] = n.Kind == "HOP" && agg != nil && agg.Sliced()
	}
	for _, c := range n.Children() {
		if err := b.windows(c, agg); err != nil {
			return err
		}
	}
	return nil
}

// node adds the operators of n and its inputs, and returns the stage n's output leaves;
// a plan part built before (see reusedSubplans) feeds a stage of its own instead.
func (b *builder) node(n planner.Node) (int, error) {
	key, reused := b.subplans[n]
	if !reused {
		return b.nodeOnce(n)
	}
	stage, ok := b.built[key]
	if !ok {
		var err error
		if stage, err = b.nodeOnce(n); err != nil {
			return 0, err
		}
		b.built[key] = stage
	}
	return b.reuse(stage), nil
}

func (b *builder) nodeOnce(n planner.Node) (int, error) {
	if p, ok := n.(*planner.Project); ok {
		at := p // the projection over the filter
		if m, ok := planner.MergePicks(p); ok {
			if _, ok := m.Input.(*planner.Filter); ok {
				at, p = p.Input.(*planner.Project), m // a query's picks of a view's
			}
		}
		if swapped, ok := planner.PicksBeforeFilter(p); ok {
			// Views and metrics show the operators as EXPLAIN does: the filter, then the
			// projection; the picks below the filter are plumbing (and a view's
			// projection merged into the query's is the query's).
			f := swapped.Input.(*planner.Filter)
			b.labels[swapped], b.labels[f], b.labels[f.Input] = n.Describe(), at.Input.Describe(), ""
			n = swapped
		}
	}
	j, mem, env := b.j, b.mem, b.env
	if set, ok := n.(*planner.SinkSet); ok { // one pipeline per sink, in one graph
		last := 0
		for _, sink := range set.Sinks {
			var err error
			if last, err = b.node(sink); err != nil {
				return 0, err
			}
		}
		return last, nil
	}
	var in int
	if c := n.Children(); len(c) == 1 {
		var err error
		if in, err = b.node(c[0]); err != nil {
			return 0, err
		}
	}
	switch n := n.(type) {
	case *planner.Scan:
		key := scanKey(n)
		if source, ok := b.shared[key]; ok {
			return b.sharedScan(n, source), nil
		}
		table := n.Table
		if !j.env.Connectors.Replayable(table) {
			j.unreplayable = append(j.unreplayable, table.Name)
		}
		tasks := TasksOf(j.env.Connectors, n, j.settings.Parallelism)
		reader := b.slot("source", strings.ToLower(table.Name), []string{fmt.Sprintf("%s %s", n.Describe(), table.Schema())})
		reader.table = table
		stage := b.startSource(exec.Stage{Name: "Source: " + table.Name, Parallelism: tasks, NewReader: func(task int) (exec.Reader, error) {
			spec := connector.SourceSpec{Table: table, Mem: mem, Location: j.env.Location, Task: task, Tasks: tasks, TablesDir: j.env.tablesDir(), Unread: b.unread[key]}
			if j.settings.Checkpointed() {
				spec.StateDir = filepath.Join(j.dir, "sources")
			}
			r, err := j.env.Connectors.OpenSource(b.ctx, spec)
			if err == nil {
				j.addReader(table.Name, r)
			}
			return r, err
		}}, reader)
		b.addOp(stage, j.countIn)
		b.sources[stage] = n.Describe()
		if b.scans[key] > 1 {
			b.shared[key] = stage
			return b.sharedScan(n, stage), nil
		}
		return stage, nil
	case *planner.Values:
		var stage int
		if n.Tuples != nil {
			stage = b.startSource(exec.Stage{Name: "Values", Parallelism: 1, NewReader: func(int) (exec.Reader, error) {
				return ops.NewValues(mem, env, n), nil
			}}, b.slot("values", "", []string{n.Describe()}))
		} else {
			rows := n.Rows
			stage = b.startSource(exec.Stage{Name: "Values", Parallelism: 1, NewReader: func(int) (exec.Reader, error) {
				return &valuesReader{rows: rows}, nil
			}}, b.slot("values", "", []string{n.Describe()}))
		}
		b.sources[stage] = n.Describe()
		return stage, nil
	case *planner.Filter:
		hashed := b.hashedBy[in] // a filter keeps its rows' columns
		b.addOp(in, func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
			return ops.NewFilter(mem, env, n, out)
		})
		b.name(in, b.describe(n))
		b.setHashedBy(in, hashed)
	case *planner.Project:
		hashed := projectedKeys(n, b.hashedBy[in])
		b.addOp(in, func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
			return ops.NewProject(mem, env, n, out)
		})
		b.name(in, b.describe(n))
		b.setHashedBy(in, hashed)
	case *planner.Replicate:
		b.addOp(in, func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
			return ops.NewReplicate(mem, n, out), nil
		})
		b.name(in, n.Describe())
	case *planner.Expand:
		b.addOp(in, func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
			return ops.NewExpand(mem, n, out), nil
		})
		b.name(in, n.Describe())
	case *planner.Unnest:
		b.addOp(in, func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
			return ops.NewUnnest(mem, n, out), nil
		})
		b.name(in, n.Describe())
	case *planner.WatermarkAssigner:
		align, err := connector.ReadAlignment(n.Table)
		if err != nil {
			return 0, err
		}
		b.addStateful(in, b.meaningSlot(n), func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
			return ops.NewWatermarkAssigner(mem, env, n, align, out)
		})
		b.name(in, n.Describe())
	case *planner.WindowTVF:
		w := n
		if b.slices[n] {
			slices := *n
			slices.Kind, slices.Size = "TUMBLE", n.Slide
			w = &slices
		}
		b.addOp(in, func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
			return ops.NewWindowAssigner(mem, w, out), nil
		})
		b.name(in, n.Describe())
	case *planner.Aggregate:
		stage := b.keyedStage("GroupAggregate", in, n.PartitionKeys(), TasksOf(j.env.Connectors, n, j.settings.Parallelism))
		maxGroups := j.settings.CacheMaxKeys
		slot := b.meaningSlot(n)
		uid := slot.UID
		keyed := b.keyedState(uid, stage)
		lateSinks := map[int]exec.Operator{} // by task: the sink of its late rows
		b.addStateful(stage, slot, func(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
			cache := ops.Cache{MaxGroups: maxGroups, SpillPath: filepath.Join(j.spillDir(), fmt.Sprintf("spill-%s-%d.db", uid, task))}
			op := ops.NewAggregate(mem, n, out, keyed(task), cache)
			if lc, ok := op.(exec.LateCounter); ok && n.Window != nil && n.Late == nil {
				j.addLate(lc, "")
			}
			if sink := lateSinks[task]; sink != nil {
				j.addLate(op.(exec.LateCounter), n.Late.Table)
				op.(ops.LateRouter).RouteLateRows(n.Late.Cols, exec.OutputFunc(func(ctx context.Context, rows exec.Batch) error {
					return sink.Process(ctx, 0, rows)
				}))
			}
			return op, nil
		})
		b.name(stage, n.Describe())
		if n.Late != nil {
			sink, err := b.lateSink(n)
			if err != nil {
				return 0, err
			}
			// Built before the aggregate, which the chain builds after the operators it feeds.
			b.addSideOp(stage, b.slot("sink", strings.ToLower(n.Late.Table), nil), func(ctx context.Context, task int, out exec.Output) (exec.Operator, error) {
				op, err := sink(ctx, task, out)
				lateSinks[task] = op
				return op, err
			})
			b.name(stage, fmt.Sprintf("LateDataSink(table=[%s])", n.Late.Table))
		}
		b.setHashedBy(stage, aggregateKeys(n))
		return stage, nil
	case *planner.Join:
		return b.join(n)
	case *planner.TemporalJoin:
		return b.temporalJoin(n)
	case *planner.LookupJoin:
		if err := b.lookupJoin(in, n); err != nil {
			return 0, err
		}
	case *planner.Union:
		return b.union(n)
	case *planner.Rank:
		stage := b.keyedStage("Rank", in, n.PartitionBy, TasksOf(j.env.Connectors, n, j.settings.Parallelism))
		slot := b.meaningSlot(n)
		keyed := b.keyedState(slot.UID, stage)
		b.addStateful(stage, slot, func(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
			op := ops.NewRank(mem, n, out, keyed(task))
			if n.Window != nil || n.Dedup() == planner.KeepFirstRow {
				j.addLate(op.(exec.LateCounter), "")
			}
			return op, nil
		})
		b.name(stage, n.Describe())
		return stage, nil
	case *planner.Sort:
		// One task sees every row, so that it emits them in one order.
		stage := b.startStage(exec.Stage{Name: "Sort", Parallelism: 1, Inputs: []exec.Input{{Stage: in, Partition: exec.Gather}}})
		slot := b.meaningSlot(n)
		keyed := b.keyedState(slot.UID, stage)
		b.addStateful(stage, slot, func(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
			op := ops.NewSort(mem, n, out, keyed(task))
			if n.ByTime {
				j.addLate(op.(exec.LateCounter), "")
			}
			return op, nil
		})
		b.name(stage, n.Describe())
		return stage, nil
	case *planner.MatchRecognize:
		stage := b.keyedStage("Match", in, n.PartitionBy, TasksOf(j.env.Connectors, n, j.settings.Parallelism))
		slot := b.meaningSlot(n)
		keyed := b.keyedState(slot.UID, stage)
		b.addStateful(stage, slot, func(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
			op, err := ops.NewMatch(mem, env, n, out, keyed(task))
			if err != nil {
				return nil, err
			}
			j.addLate(op.(exec.LateCounter), "")
			return op, nil
		})
		b.name(stage, n.Describe())
		return stage, nil
	case *planner.OverAggregate:
		stage := b.keyedStage("OverAggregate", in, n.PartitionBy, TasksOf(j.env.Connectors, n, j.settings.Parallelism))
		slot := b.meaningSlot(n)
		keyed := b.keyedState(slot.UID, stage)
		b.addStateful(stage, slot, func(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
			op, err := ops.NewOver(mem, n, out, keyed(task))
			if err != nil {
				return nil, err
			}
			j.addLate(op.(exec.LateCounter), "")
			return op, nil
		})
		b.name(stage, n.Describe())
		return stage, nil
	case *planner.Sink:
		if keys := partitionColumns(n); len(keys) > 0 && b.stages[in].Parallelism > 1 {
			// Each partition is written by one task, which alone can tell when the
			// partition is complete and commit it (Flink's sink.shuffle-by-partition).
			in = b.startStage(exec.Stage{Name: "PartitionShuffle", Parallelism: b.stages[in].Parallelism,
				Inputs: []exec.Input{{Stage: in, Partition: exec.Hash, HashKeys: keys}}})
		}
		b.addOp(in, j.countOut)
		b.addStateful(in, b.slot("sink", strings.ToLower(n.Table.Name), nil), b.sink(n.Table, n.Schema(), b.stages[in].Parallelism))
		b.name(in, n.Describe())
	default:
		return 0, fmt.Errorf("cannot run plan node %T", n)
	}
	return in, nil
}

// sink makes the sink operators that write a stage's rows, of schema, into table.
// partitionColumns returns the indexes, in the rows a sink receives, of its table's
// partition columns.
func partitionColumns(n *planner.Sink) []int {
	var keys []int
	schema := n.Schema()
	if phys := n.Table.PhysicalSchema(); len(phys) == len(schema) {
		schema = phys // the rows are the table's columns, in order
	}
	for _, k := range n.Table.PartitionKeys {
		if i := schema.Index(k); i >= 0 {
			keys = append(keys, i)
		}
	}
	return keys
}

func (b *builder) sink(table *planner.Table, schema planner.Schema, tasks int) OpFactory {
	j := b.j
	checkpointed := j.settings.Checkpointed()
	return func(ctx context.Context, task int, _ exec.Output) (exec.Operator, error) {
		spec := connector.SinkSpec{Table: table, Schema: schema, Mem: b.mem, Location: j.env.Location, Stdout: j.env.Out, Stderr: j.env.Err,
			ID: fmt.Sprintf("%s-%s-%d", j.name, strings.ToLower(table.Name), task), Task: task, Tasks: tasks, Checkpointed: checkpointed, TablesDir: j.env.tablesDir()}
		if checkpointed {
			spec.StateDir = filepath.Join(j.dir, "sinks")
		}
		return j.env.Connectors.OpenSink(ctx, spec)
	}
}

// lateSink makes the sinks of a window aggregate's late rows, after checking that the
// table named by 'late-data.sink' takes the rows of the table the window reads.
func (b *builder) lateSink(n *planner.Aggregate) (OpFactory, error) {
	in := n.Input.Schema()
	var rows planner.Schema
	for i, c := range n.Late.Cols {
		rows = append(rows, planner.Column{Name: b.lateColumnName(n.Late.From, i), Type: in[c].Type})
	}
	table, ok := b.j.env.Catalog.Table(n.Late.Table)
	if !ok {
		return nil, fmt.Errorf("table %s: '%s' names table %s, which does not exist", n.Late.From, planner.LateDataSink, n.Late.Table)
	}
	cols := table.PhysicalSchema()
	fits := len(cols) == len(rows)
	for i := 0; fits && i < len(cols); i++ {
		fits = cols[i].Type.Nullable() == rows[i].Type.Nullable()
	}
	if !fits {
		return nil, fmt.Errorf("table %s: '%s' table %s must have the columns of %s's rows, %s, not %s", n.Late.From, planner.LateDataSink, table.Name, n.Late.From, rows, cols)
	}
	return b.sink(table, cols, TasksOf(b.j.env.Connectors, n, b.j.settings.Parallelism)), nil
}

// lateColumnName is the name of column i of table, which late rows carry.
func (b *builder) lateColumnName(table string, i int) string {
	if t, ok := b.j.env.Catalog.Table(table); ok && i < len(t.Columns) {
		return t.Columns[i].Name
	}
	return fmt.Sprintf("$%d", i)
}

// join starts the stage of a join: each side's rows go to the task of their key.
func (b *builder) join(n *planner.Join) (int, error) {
	left, err := b.node(n.Left)
	if err != nil {
		return 0, err
	}
	right, err := b.node(n.Right)
	if err != nil {
		return 0, err
	}
	inputs := []exec.Input{{Stage: left, Partition: exec.Hash, HashKeys: n.LeftKeys}, {Stage: right, Partition: exec.Hash, HashKeys: n.RightKeys}}
	if len(n.LeftKeys) == 0 {
		inputs[0].Partition, inputs[1].Partition = exec.Gather, exec.Gather
	}
	ttl := b.j.settings.StateTTL
	stage := b.startStage(exec.Stage{Name: "Join", Parallelism: TasksOf(b.j.env.Connectors, n, b.j.settings.Parallelism), Inputs: inputs})
	slot := b.meaningSlot(n)
	keyed := b.keyedState(slot.UID, stage)
	defer b.setHashedBy(stage, joinKeys(n))
	b.addStateful(stage, slot, func(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
		op, err := ops.NewJoin(b.mem, b.env, n, out, ops.JoinOptions{State: keyed(task), TTL: ttl})
		if lc, ok := op.(exec.LateCounter); ok && n.Window != nil {
			b.j.addLate(lc, "")
		}
		return op, err
	})
	b.name(stage, n.Describe())
	return stage, nil
}

// joinKeys are the column lists of a join's output by whose hash its rows are at their
// tasks: each side's keys (a pair's are equal), but those of a side that an outer join
// pads with NULLs, which hash elsewhere.
func joinKeys(n *planner.Join) [][]int {
	if len(n.LeftKeys) == 0 {
		return nil
	}
	var keys [][]int
	if !n.Outer(1) {
		keys = append(keys, n.LeftKeys)
	}
	if !n.Semi() && !n.Outer(0) {
		width := len(n.Left.Schema())
		right := make([]int, len(n.RightKeys))
		for i, k := range n.RightKeys {
			right[i] = width + k
		}
		keys = append(keys, right)
	}
	return keys
}

// projectedKeys maps the key lists of a projection's input to its output's columns,
// dropping those it does not pass on as they are.
func projectedKeys(n *planner.Project, keys [][]int) [][]int {
	var out [][]int
	for _, list := range keys {
		mapped := make([]int, 0, len(list))
		for _, k := range list {
			for i, e := range n.Exprs {
				if ref, ok := e.(*planner.ColumnRef); ok && ref.Index == k {
					mapped = append(mapped, i)
					break
				}
			}
		}
		if len(mapped) == len(list) {
			out = append(out, mapped)
		}
	}
	return out
}

// aggregateKeys is the column list of an aggregate's output (its keys, then its
// aggregates) by whose hash its rows are at their tasks.
func aggregateKeys(n *planner.Aggregate) [][]int {
	var out []int
	for _, k := range n.PartitionKeys() {
		i := slices.Index(n.Keys, k)
		if i < 0 {
			return nil
		}
		out = append(out, i)
	}
	if len(out) == 0 {
		return nil
	}
	return [][]int{out}
}

func (b *builder) setHashedBy(stage int, keys [][]int) {
	if len(keys) > 0 {
		b.hashedBy[stage] = keys
	}
}

// keyedStage returns the stage of a keyed operator of tasks tasks over stage in's rows,
// partitioned by the hash of keys (all in one task without keys): in itself, when its
// rows already are (a Top-N by a join's key), else a new stage named name.
func (b *builder) keyedStage(name string, in int, keys []int, tasks int) int {
	if len(keys) == 0 {
		return b.startStage(exec.Stage{Name: name, Parallelism: tasks, Inputs: []exec.Input{{Stage: in, Partition: exec.Gather}}})
	}
	if b.stages[in].Parallelism == tasks {
		for _, hashed := range b.hashedBy[in] {
			if slices.Equal(hashed, keys) {
				return in
			}
		}
	}
	return b.startStage(exec.Stage{Name: name, Parallelism: tasks, Inputs: []exec.Input{{Stage: in, Partition: exec.Hash, HashKeys: keys}}})
}

// union starts the stage of a UNION ALL, reading every input stage: forwarded task to
// task when they all run as many tasks, else gathered into one.
func (b *builder) union(n *planner.Union) (int, error) {
	var inputs []exec.Input
	for _, c := range n.Inputs {
		in, err := b.node(c)
		if err != nil {
			return 0, err
		}
		inputs = append(inputs, exec.Input{Stage: in, Partition: exec.Forward})
	}
	tasks := TasksOf(b.j.env.Connectors, n, b.j.settings.Parallelism)
	for i := range inputs {
		if b.stages[inputs[i].Stage].Parallelism != tasks {
			inputs[i].Partition = exec.Gather
		}
	}
	stage := b.startStage(exec.Stage{Name: "Union", Parallelism: tasks, Inputs: inputs})
	b.addOp(stage, func(_ context.Context, _ int, out exec.Output) (exec.Operator, error) {
		return ops.NewUnion(n, out), nil
	})
	b.name(stage, n.Describe())
	return stage, nil
}

// keyedState returns where a stage's task keeps an operator's checkpointed state: the
// operator's uid in the job's store, and the key groups the task owns (nil without
// checkpoints).
func (b *builder) keyedState(uid string, stage int) func(task int) *ops.KeyedState {
	return func(task int) *ops.KeyedState {
		if b.j.store == nil {
			return nil
		}
		first, last := exec.KeyGroupRange(task, b.stages[stage].Parallelism)
		return &ops.KeyedState{Store: b.j.store, Namespace: uid, FirstKG: first, LastKG: last}
	}
}

// TasksOf returns how many tasks run plan node n: a source that cannot split its input,
// and a global aggregate, run in one task; other operators run as many as their input.
func TasksOf(connectors *connector.Registry, n planner.Node, parallelism int) int {
	switch n := n.(type) {
	case *planner.Scan:
		if !connectors.Parallelizable(n.Table) {
			return 1
		}
		return parallelism
	case *planner.Values, *planner.Sort:
		return 1
	case *planner.Aggregate:
		if len(n.PartitionKeys()) == 0 {
			return 1
		}
		return parallelism
	case *planner.Join:
		if len(n.LeftKeys) == 0 {
			return 1
		}
		return parallelism
	case *planner.TemporalJoin:
		return parallelism
	case *planner.Rank:
		if len(n.PartitionBy) == 0 {
			return 1
		}
		return parallelism
	case *planner.OverAggregate:
		if len(n.PartitionBy) == 0 {
			return 1
		}
		return parallelism
	case *planner.MatchRecognize:
		if len(n.PartitionBy) == 0 {
			return 1
		}
		return parallelism
	case *planner.Union:
		tasks := TasksOf(connectors, n.Inputs[0], parallelism)
		for _, in := range n.Inputs[1:] {
			if TasksOf(connectors, in, parallelism) != tasks {
				return 1
			}
		}
		return tasks
	}
	if c := n.Children(); len(c) > 0 {
		return TasksOf(connectors, c[0], parallelism)
	}
	return parallelism
}

// buildChain makes a task's operators, linked as an exec.Chain ending in out, and
// restores their state.
func buildChain(ctx context.Context, chain []OpFactory, side []bool, task int, out exec.Output, restored [][]byte, metrics *exec.TaskMetrics) (built []exec.Operator, err error) {
	built = make([]exec.Operator, len(chain))
	defer func() {
		if err != nil {
			closeAll(built)
		}
	}()
	links := &exec.Chain{Ops: built, Last: out, Side: side, Metrics: metrics}
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
				// Restoring reads what a completed checkpoint wrote: a failure is damage
				// that a restart would only meet again.
				return built, fatal(fmt.Errorf("restoring operator %d of the task: %w", i, err))
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
