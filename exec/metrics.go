package exec

import "sync/atomic"

// Metrics are a graph's live figures, updated by its tasks as they run and read by
// anyone at any time (SHOW JOBS, the metrics endpoint, the dashboard). A task counts
// per batch, never per row, in plain fields of its own, and publishes them to the
// atomic counters here on every flush (at least every flush interval while input
// flows, and when it ends), so what readers see is at most that old. The counts add up
// over the graph's runs: a restarted job's counts go on from where they were.
type Metrics struct {
	Stages []StageMetrics
}

// StageMetrics are the figures of a stage's tasks.
type StageMetrics struct {
	Name  string
	Ops   []string // the names of the chain's operators (Stage.Ops)
	Tasks []*TaskMetrics
}

// TaskMetrics are one task's figures, and those of each operator of its chain.
type TaskMetrics struct {
	RecordsIn  atomic.Int64 // rows that reached the task's chain
	RecordsOut atomic.Int64 // rows the task sent to the next stage
	// BusyNanos is time spent processing batches (and flushing), back-pressure not
	// included; BackPressuredNanos is time spent blocked on a full output channel.
	BusyNanos          atomic.Int64
	BackPressuredNanos atomic.Int64
	Watermark          atomic.Int64 // the task's current input watermark
	Skipped            atomic.Int64 // malformed records its readers skipped (SkipCounter)
	ReaderStateBytes   atomic.Int64 // the size of its reader's last snapshot (its position)
	Ops                []OpMetrics  // by operator of the chain

	// What the task's goroutine counts, and publish copies into the counters above.
	in, out, busy, blocked int64
}

// OpMetrics are one operator's figures within a task.
type OpMetrics struct {
	RecordsIn  atomic.Int64
	RecordsOut atomic.Int64
	Watermark  atomic.Int64 // the latest watermark that reached it
	StateBytes atomic.Int64 // what its last snapshot wrote (LastSnapshot), or its size
	LateRows   atomic.Int64 // LateCounter's count, over the graph's runs

	in, out int64 // counted by the task's goroutine; see TaskMetrics
}

// publish copies what the task's goroutine counted into the atomic counters; only
// that goroutine calls it.
func (m *TaskMetrics) publish() {
	m.RecordsIn.Store(m.in)
	m.RecordsOut.Store(m.out)
	m.BusyNanos.Store(m.busy)
	m.BackPressuredNanos.Store(m.blocked)
	for i := range m.Ops {
		m.Ops[i].RecordsIn.Store(m.Ops[i].in)
		m.Ops[i].RecordsOut.Store(m.Ops[i].out)
	}
}

func newTaskMetrics(ops int) *TaskMetrics {
	m := &TaskMetrics{Ops: make([]OpMetrics, ops)}
	m.Watermark.Store(MinWatermark)
	for i := range m.Ops {
		m.Ops[i].Watermark.Store(MinWatermark)
	}
	return m
}

// op returns operator i's figures, or nil when the stage did not name so many.
func (m *TaskMetrics) op(i int) *OpMetrics {
	if m == nil || i < 0 || i >= len(m.Ops) {
		return nil
	}
	return &m.Ops[i]
}

// Metrics returns the graph's live figures, created on the first call (or the first
// Run) with a TaskMetrics for every task and an OpMetrics for every operator its stage
// names in Stage.Ops.
func (g *Graph) Metrics() *Metrics {
	g.metricsMu.Lock()
	defer g.metricsMu.Unlock()
	if g.metrics != nil {
		return g.metrics
	}
	m := &Metrics{Stages: make([]StageMetrics, len(g.Stages))}
	for s, st := range g.Stages {
		m.Stages[s] = StageMetrics{Name: st.Name, Ops: st.Ops, Tasks: make([]*TaskMetrics, st.Parallelism)}
		for t := range m.Stages[s].Tasks {
			m.Stages[s].Tasks[t] = newTaskMetrics(len(st.Ops))
		}
	}
	g.metrics = m
	return m
}

// Task returns the figures of task id.
func (m *Metrics) Task(id TaskID) *TaskMetrics {
	if m == nil || id.Stage >= len(m.Stages) || id.Task >= len(m.Stages[id.Stage].Tasks) {
		return nil
	}
	return m.Stages[id.Stage].Tasks[id.Task]
}

// LagReporter is a Reader that knows how far it is behind the end of each partition it
// reads (the Kafka source). Lag may be called from any goroutine.
type LagReporter interface {
	Lag() []PartitionLag
}

// PartitionLag is a partition's high watermark minus the reader's position in it.
type PartitionLag struct {
	Topic     string
	Partition int32
	Lag       int64
}
