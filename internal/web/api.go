package web

import (
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/job"
)

//go:embed static
var static embed.FS

// Handler serves the dashboard at / and the REST API, shaped like Flink's:
//
//	GET   /jobs                      the jobs' names and states
//	GET   /jobs/overview             the same with their figures
//	GET   /jobs/{name}               a job: its operator graph and each operator's figures
//	GET   /jobs/{name}/checkpoints   its checkpoint counts, the latest and the history
//	GET   /jobs/{name}/exceptions    its last failure
//	POST  /jobs/{name}/savepoints    take a savepoint ({"target-directory": ..., "cancel-job": bool})
//	POST  /jobs/{name}/stop          stop gracefully ({"drain": bool, "targetDirectory": ...}; with a
//	                                 target directory, with a savepoint there)
//	PATCH /jobs/{name}?mode=cancel   stop gracefully
//
// A job is named by its name, which is its id here.
func Handler(jobs Jobs) http.Handler {
	a := &api{jobs: jobs}
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /jobs", a.list)
	mux.HandleFunc("GET /jobs/overview", a.overview)
	mux.HandleFunc("GET /jobs/{name}", a.job)
	mux.HandleFunc("GET /jobs/{name}/checkpoints", a.checkpoints)
	mux.HandleFunc("GET /jobs/{name}/exceptions", a.exceptions)
	mux.HandleFunc("POST /jobs/{name}/savepoints", a.savepoint)
	mux.HandleFunc("POST /jobs/{name}/stop", a.stop)
	mux.HandleFunc("PATCH /jobs/{name}", a.cancel)
	return mux
}

type api struct{ jobs Jobs }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// fail answers as Flink's REST API does: {"errors": ["..."]}.
func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string][]string{"errors": {msg}})
}

func (a *api) find(w http.ResponseWriter, r *http.Request) (job.Metrics, bool) {
	name := r.PathValue("name")
	var found *job.Metrics
	for _, m := range a.jobs.JobMetrics() {
		if m.Name == name {
			m := m
			found = &m // the latest of that name
		}
	}
	if found == nil {
		fail(w, http.StatusNotFound, "no job named '"+name+"'")
		return job.Metrics{}, false
	}
	return *found, true
}

func (a *api) list(w http.ResponseWriter, _ *http.Request) {
	type entry struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	out := struct {
		Jobs []entry `json:"jobs"`
	}{Jobs: []entry{}}
	for _, m := range a.jobs.JobMetrics() {
		out.Jobs = append(out.Jobs, entry{m.Name, string(m.State)})
	}
	writeJSON(w, http.StatusOK, out)
}

// jobSummary is a job in /jobs/overview, with Flink's field names where it has them.
type jobSummary struct {
	ID         string  `json:"jid"`
	Name       string  `json:"name"`
	State      string  `json:"state"`
	StartTime  int64   `json:"start-time"` // milliseconds since the epoch, -1 before it started
	Duration   int64   `json:"duration"`   // milliseconds
	Restarts   int     `json:"restarts"`
	RowsIn     int64   `json:"read-records"`
	RowsOut    int64   `json:"write-records"`
	RowsPerSec float64 `json:"read-records-per-second"`
	Completed  int64   `json:"completed-checkpoints"`
	Exception  string  `json:"root-exception,omitempty"`
}

func summary(m job.Metrics, now time.Time) jobSummary {
	s := jobSummary{ID: m.Name, Name: m.Name, State: string(m.State), StartTime: -1, Restarts: m.Restarts,
		Completed: m.CompletedCheckpoints, Exception: m.Err}
	if !m.Started.IsZero() {
		s.StartTime, s.Duration = m.Started.UnixMilli(), now.Sub(m.Started).Milliseconds()
	}
	for _, op := range m.Operators {
		switch {
		case strings.HasSuffix(op.ID, ".src"):
			s.RowsIn += op.RecordsOut
			s.RowsPerSec += op.RecordsOutPerSecond
		case op.Name == "Sink" || op.Name == "QueryResult":
			s.RowsOut += op.RecordsIn
		}
	}
	return s
}

func (a *api) overview(w http.ResponseWriter, _ *http.Request) {
	out := struct {
		Jobs []jobSummary `json:"jobs"`
	}{Jobs: []jobSummary{}}
	now := time.Now()
	for _, m := range a.jobs.JobMetrics() {
		out.Jobs = append(out.Jobs, summary(m, now))
	}
	writeJSON(w, http.StatusOK, out)
}

// vertex is an operator in /jobs/{name}, as Flink lists a job's vertices.
type vertex struct {
	ID            string       `json:"id"`
	Name          string       `json:"name"`
	Description   string       `json:"description"`
	Parallelism   int          `json:"parallelism"`
	Inputs        []string     `json:"inputs"`
	Metrics       vertexFigure `json:"metrics"`
	Subtasks      []subtask    `json:"subtasks"`
	BackPressured float64      `json:"backPressuredRatio"` // the busiest subtask's share, 0 to 1
	Busy          float64      `json:"busyRatio"`
	Watermark     *int64       `json:"watermark"` // the least over the subtasks; null before one
	StateSize     int64        `json:"checkpointed-size"`
}

type vertexFigure struct {
	ReadRecords           int64   `json:"read-records"`
	WriteRecords          int64   `json:"write-records"`
	ReadRecordsPerSecond  float64 `json:"read-records-per-second"`
	WriteRecordsPerSecond float64 `json:"write-records-per-second"`
}

type subtask struct {
	Subtask       int          `json:"subtask"`
	Metrics       vertexFigure `json:"metrics"`
	BackPressured float64      `json:"backPressuredRatio"`
	Busy          float64      `json:"busyRatio"`
	Watermark     *int64       `json:"watermark"`
	StateSize     int64        `json:"checkpointed-size"`
}

func wm(w int64) *int64 {
	if w == math.MinInt64 {
		return nil
	}
	return &w
}

func (a *api) job(w http.ResponseWriter, r *http.Request) {
	m, ok := a.find(w, r)
	if !ok {
		return
	}
	out := struct {
		jobSummary
		Now      int64    `json:"now"`
		Vertices []vertex `json:"vertices"`
	}{jobSummary: summary(m, time.Now()), Now: time.Now().UnixMilli(), Vertices: []vertex{}}
	for _, op := range m.Operators {
		v := vertex{ID: op.ID, Name: op.Name, Description: op.Description, Parallelism: op.Parallelism, Inputs: op.Inputs,
			Metrics:       vertexFigure{op.RecordsIn, op.RecordsOut, op.RecordsInPerSecond, op.RecordsOutPerSecond},
			BackPressured: op.BackPressured, Busy: op.Busy, Watermark: wm(op.Watermark), StateSize: op.StateBytes, Subtasks: []subtask{}}
		if v.Inputs == nil {
			v.Inputs = []string{}
		}
		for _, t := range op.Tasks {
			v.Subtasks = append(v.Subtasks, subtask{Subtask: t.Task, Metrics: vertexFigure{t.RecordsIn, t.RecordsOut, t.RecordsInPerSecond, t.RecordsOutPerSecond},
				BackPressured: t.BackPressured, Busy: t.Busy, Watermark: wm(t.Watermark), StateSize: t.StateBytes})
		}
		out.Vertices = append(out.Vertices, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// checkpointJSON is an entry of /jobs/{name}/checkpoints, with Flink's field names.
type checkpointJSON struct {
	ID        int64  `json:"id"`
	Status    string `json:"status"`
	Trigger   int64  `json:"trigger_timestamp"`   // milliseconds since the epoch
	Duration  int64  `json:"end_to_end_duration"` // milliseconds
	StateSize int64  `json:"state_size"`          // bytes written
	Alignment int64  `json:"alignment_duration"`  // milliseconds, the longest task's
	Keys      int64  `json:"keys_changed"`
}

func checkpointOf(r job.CheckpointRecord) checkpointJSON {
	c := checkpointJSON{ID: r.ID, Status: r.Status, Duration: r.Duration.Milliseconds(), StateSize: r.Stats.BytesWritten,
		Alignment: r.Stats.Alignment.Milliseconds(), Keys: r.Stats.KeysChanged}
	if !r.Started.IsZero() {
		c.Trigger = r.Started.UnixMilli()
	}
	if strings.HasPrefix(r.Status, "ABORTED") {
		c.Status = "FAILED"
	}
	return c
}

func (a *api) checkpoints(w http.ResponseWriter, r *http.Request) {
	m, ok := a.find(w, r)
	if !ok {
		return
	}
	type counts struct {
		Completed int64 `json:"completed"`
		Failed    int64 `json:"failed"`
		Total     int64 `json:"total"`
	}
	out := struct {
		Counts counts `json:"counts"`
		Latest struct {
			Completed *checkpointJSON `json:"completed"`
		} `json:"latest"`
		History []checkpointJSON `json:"history"` // newest first, as Flink lists it
	}{Counts: counts{m.CompletedCheckpoints, m.FailedCheckpoints, m.CompletedCheckpoints + m.FailedCheckpoints}, History: []checkpointJSON{}}
	if m.Last != nil {
		c := checkpointOf(*m.Last)
		out.Latest.Completed = &c
	}
	for i := len(m.Checkpoints) - 1; i >= 0; i-- {
		out.History = append(out.History, checkpointOf(m.Checkpoints[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *api) exceptions(w http.ResponseWriter, r *http.Request) {
	m, ok := a.find(w, r)
	if !ok {
		return
	}
	out := map[string]any{"root-exception": m.Err, "restarts": m.Restarts}
	if !m.ErrTime.IsZero() {
		out["timestamp"] = m.ErrTime.UnixMilli()
	}
	writeJSON(w, http.StatusOK, out)
}

// body decodes a request's JSON body, which may be empty.
func body(r *http.Request, v any) error {
	err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(v)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (a *api) savepoint(w http.ResponseWriter, r *http.Request) {
	m, ok := a.find(w, r)
	if !ok {
		return
	}
	var req struct {
		Target string `json:"target-directory"`
		Cancel bool   `json:"cancel-job"`
	}
	if err := body(r, &req); err != nil {
		fail(w, http.StatusBadRequest, "the request body is not JSON: "+err.Error())
		return
	}
	var path string
	var err error
	if req.Cancel {
		path, err = a.jobs.Stop(r.Context(), m.Name, false, true, req.Target)
	} else {
		path, err = a.jobs.Savepoint(r.Context(), m.Name, req.Target)
	}
	a.operation(w, path, err)
}

// operation answers a savepoint or stop as Flink's status of a finished asynchronous
// operation reads: here the request waits for it.
func (a *api) operation(w http.ResponseWriter, path string, err error) {
	if err != nil {
		writeJSON(w, http.StatusConflict, map[string]any{"status": map[string]string{"id": "COMPLETED"},
			"operation": map[string]string{"failure-cause": err.Error()}})
		return
	}
	op := map[string]string{}
	if path != "" {
		op["location"] = path
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": map[string]string{"id": "COMPLETED"}, "operation": op})
}

func (a *api) stop(w http.ResponseWriter, r *http.Request) {
	m, ok := a.find(w, r)
	if !ok {
		return
	}
	var req struct {
		Drain  bool   `json:"drain"`
		Target string `json:"targetDirectory"`
	}
	if err := body(r, &req); err != nil {
		fail(w, http.StatusBadRequest, "the request body is not JSON: "+err.Error())
		return
	}
	path, err := a.jobs.Stop(r.Context(), m.Name, req.Drain, req.Target != "", req.Target)
	a.operation(w, path, err)
}

func (a *api) cancel(w http.ResponseWriter, r *http.Request) {
	m, ok := a.find(w, r)
	if !ok {
		return
	}
	if mode := r.URL.Query().Get("mode"); mode != "" && mode != "cancel" && mode != "stop" {
		fail(w, http.StatusBadRequest, "mode must be 'cancel' or 'stop', not '"+mode+"'")
		return
	}
	if _, err := a.jobs.Stop(r.Context(), m.Name, false, false, ""); err != nil {
		fail(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{})
}
