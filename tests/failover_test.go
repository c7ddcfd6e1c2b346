package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// failingJob counts generated rows per key into a blackhole sink that fails at the
// given record, once or always; settings are prepended as SET statements.
func failingJob(settings map[string]string, failMode string, rows int) string {
	var b strings.Builder
	for k, v := range settings {
		fmt.Fprintf(&b, "SET '%s' = '%s';\n", k, v)
	}
	fmt.Fprintf(&b, `
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
  'rows-per-second' = '5000', 'seed' = '1', 'fields.k.min' = '1', 'fields.k.max' = '10');
CREATE TABLE sink (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole'%s);
INSERT INTO sink SELECT k, COUNT(*) FROM gen GROUP BY k;
`, rows, map[string]string{"": "", "once": ", 'test.fail-at-record' = '5', 'test.fail-mode' = 'once'",
		"always": ", 'test.fail-at-record' = '5', 'test.fail-mode' = 'always'"}[failMode])
	return b.String()
}

func runScript(t *testing.T, sql string, args ...string) (stderr string, code int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.sql")
	os.WriteFile(path, []byte(sql), 0o644)
	_, errOut, code := runCLI(t, "", append([]string{"-f", path, "--state-dir", t.TempDir()}, args...)...)
	return errOut, code
}

func TestRestartStrategiesEndToEnd(t *testing.T) {
	cases := []struct {
		name     string
		settings map[string]string
		fail     string
		wantCode int
		want     []string // in stderr, in order
		restarts int      // exact number of "restart" lines
	}{
		{"no checkpoints, no restart", nil, "always", 1, []string{"failing at record 5"}, 0},
		{"fixed-delay gives up after its attempts",
			map[string]string{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "2", "restart-strategy.fixed-delay.delay": "50 ms"},
			"always", 1, []string{"checkpointing is off", "at-most-once", "restart 1 in 50ms", "restart 2 in 50ms", "failing at record 5"}, 2},
		{"fixed-delay recovers from one failure",
			map[string]string{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "3", "restart-strategy.fixed-delay.delay": "50 ms"},
			"once", 0, []string{"restart 1 in 50ms"}, 1},
		{"failure-rate stops at the second failure within the interval",
			map[string]string{"restart-strategy.type": "failure-rate", "restart-strategy.failure-rate.max-failures-per-interval": "1",
				"restart-strategy.failure-rate.failure-rate-interval": "1 min", "restart-strategy.failure-rate.delay": "20 ms"},
			"always", 1, []string{"restart 1 in 20ms"}, 1},
		{"exponential-delay grows up to its maximum",
			map[string]string{"restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.initial-backoff": "20 ms",
				"restart-strategy.exponential-delay.max-backoff": "50 ms", "restart-strategy.exponential-delay.backoff-multiplier": "2"},
			"once", 0, []string{"restart 1 in 20ms"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stderr, code := runScript(t, failingJob(c.settings, c.fail, 2000))
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.wantCode, stderr)
			}
			rest := stderr
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stderr lacks %q (in order):\n%s", w, stderr)
				}
				rest = rest[i+len(w):]
			}
			if n := strings.Count(stderr, "; restart "); n != c.restarts {
				t.Errorf("%d restarts, want %d:\n%s", n, c.restarts, stderr)
			}
		})
	}
}

// An always-failing job under exponential delay restarts with growing pauses capped at
// the maximum; the test stops it after a few.
func TestExponentialDelayBackoff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.sql")
	os.WriteFile(path, []byte(failingJob(map[string]string{"restart-strategy.type": "exponential-delay",
		"restart-strategy.exponential-delay.initial-backoff": "20 ms", "restart-strategy.exponential-delay.max-backoff": "50 ms",
		"restart-strategy.exponential-delay.backoff-multiplier": "2"}, "always", 2000)), 0o644)
	cmd := streamsqlCmd("-f", path, "--state-dir", t.TempDir())
	var errOut strings.Builder
	cmd.Stderr = &errOut
	cmd.Start()
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	delays := regexp.MustCompile(`restart \d+ in (\w+)`).FindAllStringSubmatch(errOut.String(), -1)
	if len(delays) < 4 {
		t.Fatalf("only %d restarts:\n%s", len(delays), errOut.String())
	}
	for i, want := range []string{"20ms", "40ms", "50ms", "50ms"} {
		if delays[i][1] != want {
			t.Errorf("restart %d waited %s, want %s", i+1, delays[i][1], want)
		}
	}
}

// A checkpoint that cannot finish within its timeout is aborted; more consecutive
// failures than tolerated fail the job, while a higher tolerance lets it finish.
func TestCheckpointTimeoutAndToleratedFailures(t *testing.T) {
	settings := map[string]string{"execution.checkpointing.interval": "50 ms", "execution.checkpointing.timeout": "1 ms",
		"restart-strategy.type": "none"}
	stderr, code := runScript(t, failingJob(settings, "", 3000))
	if code == 0 || !strings.Contains(stderr, "expired after 1ms") || !strings.Contains(stderr, "consecutive checkpoints failed") {
		t.Errorf("intolerant job: exit %d\n%s", code, stderr)
	}
	settings["execution.checkpointing.tolerable-failed-checkpoints"] = "1000"
	stderr, code = runScript(t, failingJob(settings, "", 3000))
	if code != 0 || !strings.Contains(stderr, "expired after 1ms") {
		t.Errorf("tolerant job: exit %d\n%s", code, stderr)
	}
}

// min-pause spaces checkpoints out: far fewer complete than the interval alone allows
// (at most three in a 1 s job, and the final one).
func TestCheckpointMinPause(t *testing.T) {
	count := func(settings map[string]string) int {
		stderr, code := runScript(t, failingJob(settings, "", 5000), "--log-level", "debug") // checkpoint lines are debug
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		return strings.Count(stderr, " completed in ")
	}
	base := map[string]string{"execution.checkpointing.interval": "20 ms"}
	free := count(base)
	base["execution.checkpointing.min-pause"] = "400 ms"
	paused := count(base)
	if free < 5 || paused > 4 || paused >= free {
		t.Errorf("%d checkpoints without a pause, %d with a 400 ms pause over a 1 s job", free, paused)
	}
}

// Checkpoint ids keep increasing across a restart, and num-retained bounds what stays on
// disk.
func TestRetainedCheckpoints(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "job.sql")
	os.WriteFile(path, []byte(failingJob(map[string]string{"execution.checkpointing.interval": "30 ms",
		"state.checkpoints.num-retained": "3"}, "", 50000)), 0o644)
	cmd := streamsqlCmd("-f", path, "--state-dir", dir)
	cmd.Start()
	time.Sleep(1200 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	dirs, _ := filepath.Glob(filepath.Join(dir, "*", "checkpoints", "chk-*"))
	if len(dirs) < 3 || len(dirs) > 4 { // 3 complete, perhaps 1 in progress when killed
		t.Errorf("checkpoint directories: %v", dirs)
	}
}
