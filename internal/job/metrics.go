package job

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/exec"
)

// Metrics are a job's live figures, as SHOW JOBS, DESCRIBE JOB, the metrics endpoint
// and the dashboard show them. Counts add up over the job's restarts.
type Metrics struct {
	Name     string
	State    State
	Started  time.Time
	Restarts int
	Err      string    // the latest failure, also after a restart recovered from it
	ErrTime  time.Time // when it happened

	Operators []OperatorMetrics // in data order, with the edges of the graph

	CompletedCheckpoints int64
	FailedCheckpoints    int64
	Last                 *CheckpointRecord  // the last completed checkpoint
	Checkpoints          []CheckpointRecord // recent checkpoints, oldest first

	LateRecordsDropped int64 // rows behind the watermark that no table received
	SkippedRecords     int64 // malformed records the sources skipped
	Lag                []PartitionLag
}

// OperatorMetrics are one operator of the running graph: a source's reader, or an
// operator of a stage's chain.
type OperatorMetrics struct {
	ID          string // "stage.index"; a source's reader is "stage.src"
	Name        string // the node's kind, as EXPLAIN starts its line: Filter, GroupAggregate...
	Description string // EXPLAIN's line for it
	Inputs      []string
	Parallelism int
	Tasks       []TaskOperatorMetrics
	// Totals over the tasks; the watermark is the least of them.
	RecordsIn, RecordsOut                   int64
	RecordsInPerSecond, RecordsOutPerSecond float64
	Watermark                               int64
	BackPressured                           float64 // the busiest task's share of time blocked on its output
	Busy                                    float64 // the busiest task's share of time processing
	StateBytes                              int64
}

// TaskOperatorMetrics are an operator's figures in one of its tasks. Busy and
// back-pressured times are the task's: its operators share one goroutine.
type TaskOperatorMetrics struct {
	Task                                    int
	RecordsIn, RecordsOut                   int64
	RecordsInPerSecond, RecordsOutPerSecond float64
	Watermark                               int64 // exec.MinWatermark before the first
	BusyNanos, BackPressuredNanos           int64
	Busy, BackPressured                     float64 // shares of the time since the last sample
	StateBytes                              int64   // what its last checkpoint wrote
}

// PartitionLag is how far a source's reader is behind the end of a partition.
type PartitionLag struct {
	Table     string
	Topic     string
	Partition int32
	Lag       int64 // the high watermark minus the reader's position
}

// maxHistory bounds the checkpoints a job remembers for its views.
const maxHistory = 100

// figures are what a job keeps for its views beside the graph's counters.
type figures struct {
	mu        sync.Mutex
	completed int64
	failed    int64
	last      *CheckpointRecord
	history   []CheckpointRecord

	// Rates compare the counters with a sample at least a second old.
	base, latest sample
}

// sample is every counter of the graph at one time, flattened.
type sample struct {
	at   time.Time
	vals []int64
}

func (f *figures) noteCheckpoint(r CheckpointRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Status == "COMPLETED":
		f.completed++
		rec := r
		f.last = &rec
	case strings.Contains(r.Status, "subsumed"): // a later checkpoint covers it
	default:
		f.failed++
	}
	f.history = append(f.history, r)
	if len(f.history) > maxHistory {
		f.history = f.history[len(f.history)-maxHistory:]
	}
}

// Metrics returns the job's live figures.
func (j *Job) Metrics() Metrics {
	st := j.Status()
	m := Metrics{Name: st.Name, State: st.State, Started: st.Started, Restarts: st.Restarts}
	j.mu.Lock()
	m.Err, m.ErrTime = j.lastFailure, j.lastFailureAt
	j.mu.Unlock()
	gm := j.graph.Metrics()
	now := time.Now()
	vals := flatten(gm)
	j.figures.mu.Lock()
	if j.figures.base.at.IsZero() {
		j.figures.base = sample{at: st.Started, vals: make([]int64, len(vals))}
		if st.Started.IsZero() {
			j.figures.base.at = now
		}
		j.figures.latest = j.figures.base
	}
	if now.Sub(j.figures.latest.at) >= time.Second {
		j.figures.base, j.figures.latest = j.figures.latest, sample{at: now, vals: vals}
	}
	base := j.figures.base
	m.CompletedCheckpoints, m.FailedCheckpoints = j.figures.completed, j.figures.failed
	if j.figures.last != nil {
		last := *j.figures.last
		m.Last = &last
	}
	m.Checkpoints = append([]CheckpointRecord(nil), j.figures.history...)
	j.figures.mu.Unlock()

	elapsed := now.Sub(base.at).Seconds()
	rate := func(k int) float64 {
		if elapsed <= 0 || k >= len(base.vals) {
			return 0
		}
		return float64(vals[k]-base.vals[k]) / elapsed
	}
	share := func(k int) float64 {
		if elapsed <= 0 || k >= len(base.vals) {
			return 0
		}
		return min(1, max(0, float64(vals[k]-base.vals[k])/1e9/elapsed))
	}
	ids := make([]string, len(gm.Stages)) // the last visible operator of each stage
	k := 0                                // the index in vals
	for s, sm := range gm.Stages {
		stage := j.graph.Stages[s]
		var prev []string // what feeds the next operator of the chain
		for _, in := range stage.Inputs {
			if ids[in.Stage] != "" {
				prev = append(prev, ids[in.Stage])
			}
		}
		routesLate := false
		for _, side := range stage.Side {
			routesLate = routesLate || side
		}
		// The source's reader, then the chain's operators.
		nOps := len(sm.Ops)
		ops := make([]OperatorMetrics, nOps+1)
		ops[0] = OperatorMetrics{ID: strconv.Itoa(s) + ".src", Description: j.sources[s], Parallelism: len(sm.Tasks)}
		for i := range nOps {
			ops[i+1] = OperatorMetrics{ID: strconv.Itoa(s) + "." + strconv.Itoa(i), Description: sm.Ops[i], Parallelism: len(sm.Tasks)}
		}
		for t, tm := range sm.Tasks {
			busy, blocked := tm.BusyNanos.Load(), tm.BackPressuredNanos.Load()
			kTask := k
			k += taskVals
			src := TaskOperatorMetrics{Task: t, RecordsOut: tm.RecordsIn.Load(), RecordsOutPerSecond: rate(kTask),
				Watermark: tm.Watermark.Load(), BusyNanos: busy, BackPressuredNanos: blocked, Busy: share(kTask + 2), BackPressured: share(kTask + 3),
				StateBytes: tm.ReaderStateBytes.Load()}
			ops[0].Tasks = append(ops[0].Tasks, src)
			m.SkippedRecords += tm.Skipped.Load()
			for i := range nOps {
				om := &tm.Ops[i]
				ops[i+1].Tasks = append(ops[i+1].Tasks, TaskOperatorMetrics{Task: t, RecordsIn: om.RecordsIn.Load(), RecordsOut: om.RecordsOut.Load(),
					RecordsInPerSecond: rate(k), RecordsOutPerSecond: rate(k + 1), Watermark: om.Watermark.Load(),
					BusyNanos: busy, BackPressuredNanos: blocked, Busy: src.Busy, BackPressured: src.BackPressured, StateBytes: om.StateBytes.Load()})
				if !routesLate {
					m.LateRecordsDropped += om.LateRows.Load()
				}
				k += opVals
			}
		}
		for i := range ops {
			op := &ops[i]
			if op.Description == "" || (i == 0 && stage.NewReader == nil) {
				continue // plumbing: a row counter, or the reader of a stage that has none
			}
			op.Name, _, _ = strings.Cut(op.Description, "(")
			op.Watermark = exec.MaxWatermark
			for _, t := range op.Tasks {
				op.RecordsIn += t.RecordsIn
				op.RecordsOut += t.RecordsOut
				op.RecordsInPerSecond += t.RecordsInPerSecond
				op.RecordsOutPerSecond += t.RecordsOutPerSecond
				op.Watermark = min(op.Watermark, t.Watermark)
				op.Busy = max(op.Busy, t.Busy)
				op.BackPressured = max(op.BackPressured, t.BackPressured)
				op.StateBytes += t.StateBytes
			}
			if len(op.Tasks) == 0 {
				op.Watermark = exec.MinWatermark
			}
			if i > 0 && i-1 < len(stage.Side) && stage.Side[i-1] {
				// A side operator is fed by the operator before it, and feeds nothing.
				if n := len(m.Operators); n > 0 {
					op.Inputs = []string{m.Operators[n-1].ID}
				}
				m.Operators = append(m.Operators, *op)
				continue
			}
			op.Inputs = prev
			prev = []string{op.ID}
			m.Operators = append(m.Operators, *op)
		}
		if len(prev) == 1 {
			ids[s] = prev[0]
		}
	}
	for _, r := range j.currentReaders() {
		if l, ok := r.reader.(exec.LagReporter); ok {
			for _, p := range l.Lag() {
				m.Lag = append(m.Lag, PartitionLag{Table: r.table, Topic: p.Topic, Partition: p.Partition, Lag: p.Lag})
			}
		}
	}
	return m
}

// The counters of a task and of each of its operators, as flatten orders them.
const (
	taskVals = 4 // records in, records out, busy, back-pressured
	opVals   = 2 // records in, records out
)

// flatten lists every counter of the graph, task by task.
func flatten(m *exec.Metrics) []int64 {
	var vals []int64
	for _, sm := range m.Stages {
		for _, tm := range sm.Tasks {
			vals = append(vals, tm.RecordsIn.Load(), tm.RecordsOut.Load(), tm.BusyNanos.Load(), tm.BackPressuredNanos.Load())
			for i := range tm.Ops {
				vals = append(vals, tm.Ops[i].RecordsIn.Load(), tm.Ops[i].RecordsOut.Load())
			}
		}
	}
	return vals
}

func (j *Job) currentReaders() []tableReader {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]tableReader(nil), j.readers...)
}
