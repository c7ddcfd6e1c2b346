package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const progressJob = `CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '150000', 'rows-per-second' = '100000');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT id FROM g;
`

// TestProgressLine: a script's run on a terminal shows a status line on stderr,
// redrawn in place, that is gone when the run ends; --quiet and a stderr that is no
// terminal show none.
func TestProgressLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.sql")
	os.WriteFile(path, []byte(progressJob), 0o644)

	cmd := streamsqlCmd("-f", path, "--state-dir", t.TempDir())
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	p := startOnPTY(t, cmd)
	if err := p.wait(); err != nil {
		t.Fatalf("%v: %q", err, p.output())
	}
	term := p.output()
	last := strings.LastIndex(term, "rows read ")
	if strings.Count(term, "rows read ") < 2 || !strings.Contains(term, " rows/s | checkpoints 0 | watermark ") || !strings.Contains(term, "| elapsed ") {
		t.Fatalf("no status line redrawn on the terminal:\n%q", term)
	}
	if !strings.Contains(term, "\r\x1b[2Krows read ") {
		t.Errorf("the status line is not redrawn in place:\n%q", term)
	}
	if end := strings.LastIndex(term, "\r\x1b[2K"); end < last || strings.TrimSpace(term[end+len("\r\x1b[2K"):]) != "" {
		t.Errorf("the status line stays after the run:\n%q", term[max(last-10, 0):])
	}
	if strings.Contains(stdout.String(), "rows read") {
		t.Errorf("the status line went to stdout: %q", stdout.String())
	}

	quiet := streamsqlCmd("-f", path, "--state-dir", t.TempDir(), "--quiet")
	quiet.Stdout = &stdout
	p = startOnPTY(t, quiet)
	if err := p.wait(); err != nil || strings.Contains(p.output(), "rows read") {
		t.Errorf("--quiet: %v: %q", err, p.output())
	}

	piped := streamsqlCmd("-f", path, "--state-dir", t.TempDir())
	var stderr bytes.Buffer
	piped.Stderr = &stderr
	p = startOnPTY(t, piped)
	if err := p.wait(); err != nil || strings.Contains(p.output()+stderr.String(), "rows read") {
		t.Errorf("stderr piped: %v: %q %q", err, p.output(), stderr.String())
	}
}
