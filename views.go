package streamsql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/job"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// JobMetrics returns the live figures of every job of the session, in the order they
// started: what SHOW JOBS, DESCRIBE JOB, the metrics endpoint and the dashboard show.
func (s *Session) JobMetrics() []job.Metrics {
	s.mu.Lock()
	jobs := append([]*job.Job(nil), s.jobs...)
	s.mu.Unlock()
	out := make([]job.Metrics, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j.Metrics())
	}
	return out
}

// showJobs prints the session's jobs with their live figures.
func (s *Session) showJobs() error {
	var rows [][]string
	for _, m := range s.JobMetrics() {
		started, last := "", ""
		if !m.Started.IsZero() {
			started = m.Started.Format("2006-01-02 15:04:05")
		}
		if m.Last != nil {
			last = strconv.FormatInt(m.Last.ID, 10)
		}
		in, out, inRate, bp := jobTotals(m)
		rows = append(rows, []string{m.Name, string(m.State), started, strconv.FormatInt(in, 10), strconv.FormatInt(out, 10),
			formatRate(inRate), percent(bp), last, strconv.Itoa(m.Restarts)})
	}
	return s.printTable([]string{"job id", "status", "start time", "rows in", "rows out", "rows/s", "back-pressure", "last checkpoint", "restarts"}, rows)
}

// jobTotals sums what a job's sources read and its sinks (or its query result)
// received, the sources' rate, and the highest back-pressure of its operators.
func jobTotals(m job.Metrics) (in, out int64, inRate, bp float64) {
	for _, op := range m.Operators {
		switch {
		case strings.HasSuffix(op.ID, ".src"):
			in += op.RecordsOut
			inRate += op.RecordsOutPerSecond
		case op.Name == "Sink" || op.Name == "QueryResult":
			out += op.RecordsIn
		}
		bp = max(bp, op.BackPressured)
	}
	return in, out, inRate, bp
}

// describeJob prints a job's running operator graph with each operator's figures, then
// its recent checkpoints.
func (s *Session) describeJob(st *parser.DescribeJobStmt) error {
	j := s.Job(st.Name)
	if j == nil {
		return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("no job named '%s' (SHOW JOBS lists them)", st.Name)}
	}
	m := j.Metrics()
	var rows [][]string
	for _, op := range m.Operators {
		rows = append(rows, []string{op.ID, op.Description, strings.Join(op.Inputs, ", "), strconv.Itoa(op.Parallelism),
			strconv.FormatInt(op.RecordsIn, 10), strconv.FormatInt(op.RecordsOut, 10), formatRate(op.RecordsInPerSecond),
			formatRate(op.RecordsOutPerSecond), percent(op.BackPressured), s.formatWatermark(op.Watermark), strconv.FormatInt(op.StateBytes, 10)})
	}
	summary := fmt.Sprintf("Job %s: %s, %d restarts, %d checkpoints completed, %d failed, %d late rows dropped, %d malformed records skipped.",
		m.Name, m.State, m.Restarts, m.CompletedCheckpoints, m.FailedCheckpoints, m.LateRecordsDropped, m.SkippedRecords)
	if _, err := fmt.Fprintln(s.cfg.Out, summary); err != nil {
		return err
	}
	if m.Err != "" {
		fmt.Fprintf(s.cfg.Out, "Last exception: %s\n", m.Err)
	}
	if err := s.printTable([]string{"id", "operator", "input", "parallelism", "rows in", "rows out", "rows in/s", "rows out/s",
		"back-pressure", "watermark", "state bytes"}, rows); err != nil {
		return err
	}
	if len(m.Lag) > 0 {
		var lag [][]string
		for _, p := range m.Lag {
			lag = append(lag, []string{p.Table, p.Topic, strconv.Itoa(int(p.Partition)), strconv.FormatInt(p.Lag, 10)})
		}
		if err := s.printTable([]string{"table", "topic", "partition", "lag"}, lag); err != nil {
			return err
		}
	}
	if len(m.Checkpoints) == 0 {
		return nil
	}
	recent := m.Checkpoints[max(0, len(m.Checkpoints)-5):]
	var cps [][]string
	for _, r := range recent {
		cps = append(cps, []string{strconv.FormatInt(r.ID, 10), r.Status, r.Duration.Round(time.Millisecond).String(),
			strconv.FormatInt(r.Stats.BytesWritten, 10), r.Stats.Alignment.Round(time.Microsecond).String()})
	}
	return s.printTable([]string{"checkpoint", "status", "duration", "size", "alignment"}, cps)
}

// formatWatermark prints a watermark as a TIMESTAMP(3) prints (event time is wall-clock milliseconds).
func (s *Session) formatWatermark(wm int64) string {
	switch wm {
	case exec.MinWatermark:
		return "-"
	case exec.MaxWatermark:
		return "end"
	}
	return time.UnixMilli(wm).UTC().Format("2006-01-02 15:04:05.000")
}

func formatRate(r float64) string { return strconv.FormatFloat(r, 'f', 1, 64) }

func percent(share float64) string { return strconv.Itoa(int(share*100+0.5)) + "%" }
