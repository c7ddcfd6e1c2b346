package web

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/streamsql/streamsql/internal/job"
)

// MetricsHandler serves the jobs' figures in Prometheus's text format at /metrics
// (and /), with the Go runtime's and the process's own metrics.
func MetricsHandler(jobs Jobs) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &collector{jobs})
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	mux.Handle("/{$}", h)
	return mux
}

// The metrics take the names of Flink's where Flink has one, prefixed streamsql_ and
// scoped as Flink's reporter scopes them (job, task, operator), with labels job,
// operator (what EXPLAIN calls it), operator_id (stage.index) and task (the subtask).
var (
	opLabels   = []string{"job", "operator", "operator_id", "task"}
	jobLabels  = []string{"job"}
	lagLabels  = []string{"job", "table", "topic", "partition"}
	recordsIn  = desc("task_operator_numRecordsIn", "Rows the operator received.", opLabels)
	recordsOut = desc("task_operator_numRecordsOut", "Rows the operator emitted.", opLabels)
	inRate     = desc("task_operator_numRecordsInPerSecond", "Rows the operator received per second, over the last second or more.", opLabels)
	outRate    = desc("task_operator_numRecordsOutPerSecond", "Rows the operator emitted per second, over the last second or more.", opLabels)
	watermark  = desc("task_operator_currentInputWatermark", "The latest watermark that reached the operator, in milliseconds of event time (absent before the first).", opLabels)
	busyAcc    = desc("task_operator_accumulateBusyTimeMs", "Milliseconds the operator's task spent processing, back-pressure not included.", opLabels)
	bpAcc      = desc("task_operator_accumulateBackPressuredTimeMs", "Milliseconds the operator's task spent blocked on a full output (back-pressure).", opLabels)
	busy       = desc("task_operator_busyTimeMsPerSecond", "Milliseconds per second the operator's task spends processing.", opLabels)
	bp         = desc("task_operator_backPressuredTimeMsPerSecond", "Milliseconds per second the operator's task spends blocked on its output.", opLabels)
	stateSize  = desc("task_operator_checkpointedSize", "Bytes the operator's state wrote at the last checkpoint.", opLabels)
	restarts   = desc("job_numRestarts", "Times the job restarted after a failure.", jobLabels)
	uptime     = desc("job_uptime", "Milliseconds since the job started.", jobLabels)
	completed  = desc("job_numberOfCompletedCheckpoints", "Checkpoints completed.", jobLabels)
	failed     = desc("job_numberOfFailedCheckpoints", "Checkpoints that failed or timed out.", jobLabels)
	lastDur    = desc("job_lastCheckpointDuration", "Milliseconds the last completed checkpoint took, from trigger to completion.", jobLabels)
	lastSize   = desc("job_lastCheckpointSize", "Bytes the last completed checkpoint wrote.", jobLabels)
	lastAlign  = desc("job_lastCheckpointAlignment", "Milliseconds the last completed checkpoint spent aligning barriers (the longest task).", jobLabels)
	late       = desc("job_numLateRecordsDropped", "Rows dropped because they arrived behind the watermark.", jobLabels)
	skipped    = desc("job_numRecordsSkipped", "Malformed records the sources skipped ('*.ignore-parse-errors').", jobLabels)
	lag        = desc("kafka_partition_recordsLag", "Records of a Kafka partition not read yet: its high watermark minus the source's position.", lagLabels)
)

func desc(name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc("streamsql_"+name, help, labels, nil)
}

// collector reads the jobs' figures at every scrape.
type collector struct{ jobs Jobs }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{recordsIn, recordsOut, inRate, outRate, watermark, busyAcc, bpAcc, busy, bp, stateSize,
		restarts, uptime, completed, failed, lastDur, lastSize, lastAlign, late, skipped, lag} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	for _, m := range c.jobs.JobMetrics() {
		gauge := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
		}
		counter := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
		}
		for _, op := range m.Operators {
			for _, t := range op.Tasks {
				l := []string{m.Name, op.Name, op.ID, strconv.Itoa(t.Task)}
				counter(recordsIn, float64(t.RecordsIn), l...)
				counter(recordsOut, float64(t.RecordsOut), l...)
				gauge(inRate, t.RecordsInPerSecond, l...)
				gauge(outRate, t.RecordsOutPerSecond, l...)
				if t.Watermark != math.MinInt64 {
					gauge(watermark, float64(t.Watermark), l...)
				}
				counter(busyAcc, float64(t.BusyNanos)/1e6, l...)
				counter(bpAcc, float64(t.BackPressuredNanos)/1e6, l...)
				gauge(busy, t.Busy*1000, l...)
				gauge(bp, t.BackPressured*1000, l...)
				gauge(stateSize, float64(t.StateBytes), l...)
			}
		}
		counter(restarts, float64(m.Restarts), m.Name)
		if !m.Started.IsZero() {
			gauge(uptime, float64(now.Sub(m.Started).Milliseconds()), m.Name)
		}
		counter(completed, float64(m.CompletedCheckpoints), m.Name)
		counter(failed, float64(m.FailedCheckpoints), m.Name)
		if m.Last != nil {
			gauge(lastDur, float64(m.Last.Duration.Milliseconds()), m.Name)
			gauge(lastSize, float64(m.Last.Stats.BytesWritten), m.Name)
			gauge(lastAlign, float64(m.Last.Stats.Alignment)/1e6, m.Name)
		}
		counter(late, float64(m.LateRecordsDropped), m.Name)
		counter(skipped, float64(m.SkippedRecords), m.Name)
		for _, p := range m.Lag {
			gauge(lag, float64(p.Lag), m.Name, p.Table, p.Topic, strconv.Itoa(int(p.Partition)))
		}
	}
}

// Jobs is what the server needs of the process's jobs.
type Jobs interface {
	// JobMetrics returns the live figures of every job, in the order they started.
	JobMetrics() []job.Metrics
	// Savepoint has the running job take a savepoint under target (its
	// 'state.savepoints.dir' when empty) and returns its path.
	Savepoint(ctx context.Context, name, target string) (string, error)
	// Stop stops the job gracefully (with drain, event time first advances to the
	// end) and waits until it stopped; with savepoint, it takes one under target and
	// returns its path.
	Stop(ctx context.Context, name string, drain, savepoint bool, target string) (string, error)
}
