package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const checkpointedJob = `SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000', 'rows-per-second' = '2000');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT id FROM g;
`

// TestLogs: log lines carry their time and level; checkpoint lines show at debug only;
// --log-format json prints one JSON object a line; a bad level is refused.
func TestLogs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.sql")
	os.WriteFile(path, []byte(checkpointedJob), 0o644)
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (DEBUG|INFO |WARN |ERROR) \S`)

	_, errOut, code := runCLI(t, "", "-f", path, "--state-dir", t.TempDir())
	if code != 0 || !strings.Contains(errOut, " INFO  Job ID: insert-hole\n") || strings.Contains(errOut, "completed in") {
		t.Errorf("default level: exit %d, stderr:\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "-f", path, "--state-dir", t.TempDir(), "--log-level", "debug")
	if code != 0 || !regexp.MustCompile(` DEBUG job insert-hole: checkpoint \d+ completed in `).MatchString(errOut) {
		t.Errorf("--log-level debug: exit %d, stderr:\n%s", code, errOut)
	}
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !line.MatchString(l) {
			t.Errorf("log line without time and level: %q", l)
		}
	}
	_, errOut, code = runCLI(t, "", "-f", path, "--state-dir", t.TempDir(), "--log-level", "debug", "--log-format", "json")
	if code != 0 {
		t.Fatalf("--log-format json: exit %d: %s", code, errOut)
	}
	levels := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		var rec struct{ Time, Level, Msg, Job string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Time == "" || rec.Msg == "" || rec.Job != "insert-hole" {
			t.Errorf("not a JSON log line of the job: %q (%v)", l, err)
		}
		levels[rec.Level]++
	}
	if levels["DEBUG"] == 0 || levels["INFO"] == 0 {
		t.Errorf("levels %v", levels)
	}
	_, errOut, code = runCLI(t, "", "-f", path, "--log-level", "loud")
	if code != 2 || errOut != "streamsql: --log-level must be debug, info, warn or error, got \"loud\"\n" {
		t.Errorf("bad level: exit %d, %q", code, errOut)
	}
}
