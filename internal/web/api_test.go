package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/job"
)

// fakeJobs is one running job and a record of what was asked of it.
type fakeJobs struct {
	asked []string
}

func (f *fakeJobs) JobMetrics() []job.Metrics {
	started := time.UnixMilli(1_700_000_000_000)
	return []job.Metrics{{Name: "insert-out", State: job.Running, Started: started, Restarts: 1, Err: "table out: boom",
		Operators: []job.OperatorMetrics{
			{ID: "0.src", Name: "TableSourceScan", Description: "TableSourceScan(table=[in])", Parallelism: 1, RecordsOut: 10, RecordsOutPerSecond: 5,
				Watermark: math.MinInt64, Tasks: []job.TaskOperatorMetrics{{Task: 0, RecordsOut: 10, Watermark: math.MinInt64}}},
			{ID: "0.1", Name: "Sink", Description: "Sink(table=[out])", Inputs: []string{"0.src"}, Parallelism: 1, RecordsIn: 10,
				Watermark: 42, BackPressured: 0.25, Tasks: []job.TaskOperatorMetrics{{Task: 0, RecordsIn: 10, Watermark: 42, BackPressured: 0.25}}},
		},
		CompletedCheckpoints: 2, FailedCheckpoints: 1,
		Last: &job.CheckpointRecord{ID: 3, Status: "COMPLETED", Started: started, Duration: 7 * time.Millisecond, Stats: checkpoint.TaskStats{BytesWritten: 99}},
		Checkpoints: []job.CheckpointRecord{
			{ID: 1, Status: "COMPLETED", Started: started},
			{ID: 2, Status: "ABORTED: timed out"},
			{ID: 3, Status: "COMPLETED", Started: started, Duration: 7 * time.Millisecond, Stats: checkpoint.TaskStats{BytesWritten: 99, Alignment: 2 * time.Millisecond}},
		}}}
}

func (f *fakeJobs) Savepoint(_ context.Context, name, target string) (string, error) {
	f.asked = append(f.asked, "savepoint "+name+" "+target)
	return target + "/savepoint-1", nil
}

func (f *fakeJobs) Stop(_ context.Context, name string, drain, savepoint bool, target string) (string, error) {
	f.asked = append(f.asked, strings.TrimSpace(strings.Join([]string{"stop", name, map[bool]string{true: "drain"}[drain], map[bool]string{true: "savepoint"}[savepoint], target}, " ")))
	if target == "/fails" {
		return "", errors.New("job insert-out: savepoint: disk full")
	}
	if savepoint {
		return target + "/savepoint-2", nil
	}
	return "", nil
}

func do(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	data, _ := io.ReadAll(rec.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: %q is not a JSON object: %v", method, path, data, err)
	}
	return rec.Code, out
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRESTAPI: the REST paths answer in Flink's shapes, and the savepoint and stop
// requests reach the job with what their bodies ask.
func TestRESTAPI(t *testing.T) {
	f := &fakeJobs{}
	h := Handler(f)
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string // in the JSON answer
	}{
		{"GET", "/jobs", "", 200, `{"jobs":[{"id":"insert-out","status":"RUNNING"}]}`},
		{"GET", "/jobs/overview", "", 200, `"jid":"insert-out","name":"insert-out","read-records":10,"read-records-per-second":5,"restarts":1,"root-exception":"table out: boom","start-time":1700000000000,"state":"RUNNING","write-records":10`},
		{"GET", "/jobs/insert-out", "", 200, `"inputs":["0.src"],"metrics":{"read-records":10,"read-records-per-second":0,"write-records":0,"write-records-per-second":0},"name":"Sink","parallelism":1`},
		{"GET", "/jobs/insert-out", "", 200, `"watermark":null`},
		{"GET", "/jobs/insert-out/checkpoints", "", 200, `"counts":{"completed":2,"failed":1,"total":3}`},
		{"GET", "/jobs/insert-out/checkpoints", "", 200, `"history":[{"alignment_duration":2,"end_to_end_duration":7,"id":3,"keys_changed":0,"state_size":99,"status":"COMPLETED","trigger_timestamp":1700000000000},{"alignment_duration":0,"end_to_end_duration":0,"id":2,"keys_changed":0,"state_size":0,"status":"FAILED","trigger_timestamp":0}`},
		{"GET", "/jobs/insert-out/exceptions", "", 200, `{"restarts":1,"root-exception":"table out: boom"}`},
		{"GET", "/jobs/nope", "", 404, `{"errors":["no job named 'nope'"]}`},
		{"POST", "/jobs/insert-out/savepoints", `{"target-directory": "/sp"}`, 200, `{"operation":{"location":"/sp/savepoint-1"},"status":{"id":"COMPLETED"}}`},
		{"POST", "/jobs/insert-out/savepoints", `{"target-directory": "/sp", "cancel-job": true}`, 200, `"location":"/sp/savepoint-2"`},
		{"POST", "/jobs/insert-out/savepoints", `not json`, 400, `"errors":["the request body is not JSON`},
		{"POST", "/jobs/insert-out/stop", ``, 200, `{"operation":{},"status":{"id":"COMPLETED"}}`},
		{"POST", "/jobs/insert-out/stop", `{"drain": true, "targetDirectory": "/fails"}`, 409, `"failure-cause":"job insert-out: savepoint: disk full"`},
		{"PATCH", "/jobs/insert-out?mode=cancel", ``, 202, `{}`},
		{"PATCH", "/jobs/insert-out?mode=pause", ``, 400, `mode must be 'cancel' or 'stop', not 'pause'`},
	} {
		code, out := do(t, h, c.method, c.path, c.body)
		if code != c.code || !strings.Contains(asJSON(out), c.want) {
			t.Errorf("%s %s %s: %d %s\nwant %d with %s", c.method, c.path, c.body, code, asJSON(out), c.code, c.want)
		}
	}
	want := []string{"savepoint insert-out /sp", "stop insert-out  savepoint /sp", "stop insert-out", "stop insert-out drain savepoint /fails", "stop insert-out"}
	if asJSON(f.asked) != asJSON(want) {
		t.Errorf("the job was asked %q, want %q", f.asked, want)
	}
	// The page and its files come from the binary.
	for _, path := range []string{"/", "/app.js", "/style.css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || rec.Body.Len() < 100 {
			t.Errorf("GET %s: %d, %d bytes", path, rec.Code, rec.Body.Len())
		}
	}
}
