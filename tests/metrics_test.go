package tests

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// monitoredJobs is a script of three jobs: a checkpointed window count over
// generated rows, with late rows, whose sink fails once at its 50th record (so it
// restarts); a file read that skips a malformed line; and a Kafka read.
func monitoredJobs(t *testing.T, kafkaAddr string) string {
	dir := t.TempDir()
	data := filepath.Join(dir, "in.csv")
	os.WriteFile(data, []byte("1,a\nnot a number,b\n3,c\n"), 0o644)
	return fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '200 ms';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '3';
SET 'restart-strategy.fixed-delay.delay' = '100 ms';
CREATE TABLE gen (k BIGINT, t BIGINT, ts AS TO_TIMESTAMP_LTZ(t, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'seed' = '7',
  'fields.k.min' = '1', 'fields.k.max' = '10', 'fields.t.min' = '1000000', 'fields.t.max' = '100000000');
CREATE TABLE sink (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole', 'test.fail-at-record' = '50', 'test.fail-mode' = 'once');
CREATE TABLE lines (id BIGINT, name STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv',
  'csv.ignore-parse-errors' = 'true');
CREATE TABLE clicks (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'clicks',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'csv');
CREATE TABLE hole (id BIGINT, name STRING) WITH ('connector' = 'blackhole');
SET 'pipeline.name' = 'lines';
INSERT INTO hole SELECT * FROM lines;
SET 'pipeline.name' = 'clicks';
INSERT INTO hole SELECT * FROM clicks;
SET 'pipeline.name' = 'counts';
INSERT INTO sink SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND))
  GROUP BY k, window_start, window_end;
`, data, kafkaAddr)
}

// startMonitored starts the script with the given flags, and returns the process and
// the address it printed for what ("metrics endpoint" or "dashboard").
func startMonitored(t *testing.T, script string, what string, args ...string) (*startedLive, string) {
	t.Helper()
	p := &startedLive{errOut: &lockedBuffer{}}
	p.cmd = streamsqlCmd(append([]string{"-f", writeScript(t, script), "--state-dir", t.TempDir()}, args...)...)
	p.cmd.Stderr = p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	re := regexp.MustCompile(`the ` + what + ` is at (http://\S+)`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := re.FindStringSubmatch(p.errOut.String()); m != nil {
			return p, m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no address of the %s in stderr:\n%s", what, p.errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type startedLive struct {
	cmd    *exec.Cmd
	errOut *lockedBuffer
}

// scrape reads the metrics endpoint.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the metrics do not parse: %v", err)
	}
	return families
}

// sample finds the value of metric name whose labels include want.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := families[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

// TestMetricsEndpoint scrapes --metrics-addr while a checkpointed job runs and after it
// restarted once: every metric is there, for every operator of the job, with a value
// that fits what the job does.
func TestMetricsEndpoint(t *testing.T) {
	addr := kafkaCluster(t, 2, "clicks")
	var vals []string
	for i := range 20 {
		vals = append(vals, fmt.Sprintf("%d,c%d", i, i))
	}
	kafkaProduce(t, addr, "clicks", vals)
	p, url := startMonitored(t, monitoredJobs(t, addr), "metrics endpoint", "--metrics-addr", "127.0.0.1:0")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("the metrics listen on %s, not loopback", url)
	}
	counts := map[string]string{"job": "counts"}
	var families map[string]*dto.MetricFamily
	deadline := time.Now().Add(30 * time.Second)
	for {
		families = scrape(t, url)
		restarts, _ := sample(families, "streamsql_job_numRestarts", counts)
		done, _ := sample(families, "streamsql_job_numberOfCompletedCheckpoints", counts)
		skipped, _ := sample(families, "streamsql_job_numRecordsSkipped", map[string]string{"job": "lines"})
		read, _ := sample(families, "streamsql_task_operator_numRecordsOut", map[string]string{"job": "clicks", "operator": "TableSourceScan"})
		up, _ := sample(families, "streamsql_job_uptime", counts)
		if restarts == 1 && done >= 3 && skipped == 1 && read == 20 && up > 1500 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never restarted and checkpointed (restarts %v, checkpoints %v, skipped %v, kafka rows %v); stderr:\n%s",
				restarts, done, skipped, read, p.errOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	within := func(name string, labels map[string]string, lo, hi float64) {
		t.Helper()
		v, ok := sample(families, name, labels)
		if !ok {
			t.Errorf("no %s%v", name, labels)
			return
		}
		if v < lo || v > hi {
			t.Errorf("%s%v = %v, want between %v and %v", name, labels, v, lo, hi)
		}
	}
	op := func(name string) map[string]string {
		return map[string]string{"job": "counts", "operator": name, "task": "0"}
	}
	// Per operator and task.
	within("streamsql_task_operator_numRecordsOut", op("TableSourceScan"), 1000, 1e6)
	within("streamsql_task_operator_numRecordsOutPerSecond", op("TableSourceScan"), 500, 5000)
	within("streamsql_task_operator_numRecordsIn", op("WindowAggregate"), 1000, 1e6)
	within("streamsql_task_operator_numRecordsInPerSecond", op("WindowAggregate"), 500, 5000)
	within("streamsql_task_operator_numRecordsOut", op("WindowAggregate"), 1, 1e6)
	within("streamsql_task_operator_numRecordsIn", op("Sink"), 50, 1e6)
	within("streamsql_task_operator_currentInputWatermark", op("Sink"), 1e6, 1e8)
	within("streamsql_task_operator_currentInputWatermark", op("WindowAggregate"), 1e6, 1e8)
	if _, ok := sample(families, "streamsql_task_operator_currentInputWatermark", op("TableSourceScan")); ok {
		t.Errorf("the source, before the watermark assigner, has a watermark")
	}
	for _, name := range []string{"TableSourceScan", "WatermarkAssigner", "WindowAggregate", "Sink"} {
		within("streamsql_task_operator_accumulateBusyTimeMs", op(name), 0.001, 60_000)
		within("streamsql_task_operator_accumulateBackPressuredTimeMs", op(name), 0, 60_000)
		within("streamsql_task_operator_busyTimeMsPerSecond", op(name), 0, 1000)
		within("streamsql_task_operator_backPressuredTimeMsPerSecond", op(name), 0, 1000)
		within("streamsql_task_operator_checkpointedSize", op(name), 0, 1e6)
	}
	within("streamsql_task_operator_checkpointedSize", op("WatermarkAssigner"), 1, 1e6)
	within("streamsql_task_operator_checkpointedSize", op("TableSourceScan"), 1, 1e6) // its read position
	// Per job.
	within("streamsql_job_numRestarts", counts, 1, 1)
	within("streamsql_job_numberOfCompletedCheckpoints", counts, 3, 1000)
	within("streamsql_job_numberOfFailedCheckpoints", counts, 0, 0)
	within("streamsql_job_lastCheckpointDuration", counts, 0, 5000)
	within("streamsql_job_lastCheckpointSize", counts, 100, 1e6)
	within("streamsql_job_lastCheckpointAlignment", counts, 0, 1000)
	within("streamsql_job_numLateRecordsDropped", counts, 1, 1e6) // event time jumps at random: most rows are late
	within("streamsql_job_numRecordsSkipped", counts, 0, 0)
	within("streamsql_job_numRecordsSkipped", map[string]string{"job": "lines"}, 1, 1)
	within("streamsql_job_uptime", counts, 1500, 60_000)
	// Per Kafka partition: everything produced was read.
	for _, part := range []string{"0", "1"} {
		within("streamsql_kafka_partition_recordsLag", map[string]string{"job": "clicks", "table": "clicks", "topic": "clicks", "partition": part}, 0, 0)
	}
	if testing.Verbose() {
		resp, _ := http.Get(url)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("%s", b)
	}
	// The process's own.
	within("go_goroutines", nil, 1, 1e5)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("the process did not stop cleanly: %v\n%s", err, p.errOut.String())
	}
}
