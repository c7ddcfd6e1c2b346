package tests

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startShell starts the interactive shell on a pseudo-terminal and waits for its
// prompt.
func startShell(t *testing.T) *ptyProcess {
	t.Helper()
	cmd := streamsqlCmd("--state-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TERM=xterm")
	p := startOnPTY(t, cmd)
	p.waitFor(0, "streamsql> ")
	return p
}

const slowCounts = "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '40'," +
	" 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000000');\r"

// TestShellResultModes drives the shell through a terminal: in each of Flink's result
// modes an updating query shows rows while it runs and updates them; Ctrl-C ends the
// query and the prompt comes back.
func TestShellResultModes(t *testing.T) {
	p := startShell(t)
	m := p.mark()
	p.send(slowCounts)
	p.waitFor(m, "[INFO] Table has been created.")
	query := "SELECT id % 2 AS k, COUNT(*) AS n FROM g GROUP BY id % 2;\r"

	// table: a table of two rows, redrawn in place (cursor up) as the counts grow.
	m = p.mark()
	p.send(query)
	out := p.waitFor(m, "2 rows, last change ")
	redraws := regexp.MustCompile(`\x1b\[\d+A`)
	for len(redraws.FindAllString(p.output()[m:], -1)) < 3 {
		p.waitFor(len(p.output()), "2 rows, last change ")
	}
	out = p.output()[m:]
	if !strings.Contains(out, "| k |") || !regexp.MustCompile(`\|\s+1 \|\s+\d+ \|`).MatchString(out) {
		t.Fatalf("table mode shows no rows:\n%q", out)
	}
	counts := regexp.MustCompile(`\|\s+1 \|\s+(\d+) \|`).FindAllStringSubmatch(out, -1)
	if len(counts) < 2 || counts[0][1] == counts[len(counts)-1][1] {
		t.Errorf("table mode does not update the counts: %v", counts)
	}
	p.send("\x03")
	p.waitForAfter(m, "the query ended.", "streamsql> ")

	// changelog: the latest changes with their kinds.
	m = p.mark()
	p.send("SET 'sql-client.execution.result-mode' = 'changelog';\r")
	p.waitFor(m, "Session property has been set.")
	m = p.mark()
	p.send(query)
	p.waitFor(m, "| op | k |")
	p.waitFor(m, "| -U |")
	p.waitFor(m, "| +U |")
	p.waitFor(m, " changes, last change ")
	p.send("\x03")
	p.waitForAfter(m, "the query ended.", "streamsql> ")

	// tableau: every change printed as it comes.
	m = p.mark()
	p.send("SET 'sql-client.execution.result-mode' = 'tableau';\r")
	p.waitFor(m, "Session property has been set.")
	m = p.mark()
	p.send(query)
	p.waitFor(m, "| op |            k |            n |")
	// The first count is 1, or more when the first rows came in one batch.
	p.waitFor(m, "| +I |            1 |")
	p.waitFor(m, "| -U |            1 |")
	p.waitFor(m, "| +U |            1 |")
	p.send("\x03")
	p.waitForAfter(m, "Received a total of ", "streamsql> ")

	p.send("quit\r")
	if err := p.wait(); err != nil {
		t.Fatalf("%v\n%q", err, p.output())
	}
}

// TestShellCompletionAndHistory: Tab completes a table's columns, functions and SET
// keys; a statement typed over several lines comes back from the history as one line.
func TestShellCompletionAndHistory(t *testing.T) {
	home := t.TempDir()
	cmd := streamsqlCmd("--state-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "HOME="+home, "TERM=xterm")
	p := startOnPTY(t, cmd)
	p.waitFor(0, "streamsql> ")
	m := p.mark()
	p.send("CREATE TABLE readings (id STRING, ts BIGINT, temperature DOUBLE) WITH ('connector' = 'datagen', 'number-of-rows' = '3');\r")
	p.waitFor(m, "[INFO] Table has been created.")

	// Columns complete: of every table while the statement names none, then of those it names.
	m = p.mark()
	p.send("SELECT MAX(tempe\t")
	p.waitFor(m, "SELECT MAX(temperature")
	p.send(") AS hottest FROM readings WHERE readings.i\t")
	p.waitFor(m, "WHERE readings.id")
	p.send(" IS NOT NULL;\r")
	p.waitFor(m, "| hottest |")
	p.waitFor(m, "the query ended.") // keys typed while a table view runs scroll it
	// Functions, and SET keys inside the quotes.
	m = p.mark()
	p.send("SELECT char_len\t")
	p.waitFor(m, "char_length(")
	p.send("'abc') AS n;\r")
	p.waitFor(m, "| n |")
	p.waitFor(m, "the query ended.")
	m = p.mark()
	p.send("SET 'sql-client.execution.res\t")
	p.waitFor(m, "sql-client.execution.result-mode' = '")
	p.send("tableau';\r")
	p.waitFor(m, "Session property has been set.")

	// A statement over three lines, then Up: it comes back whole, on one line.
	m = p.mark()
	p.send("SELECT 41 + 1\r")
	p.send("  AS answer -- the answer\r")
	p.send(";\r")
	p.waitFor(m, "answer")
	p.waitForAfter(m, "Received a total of", "streamsql> ")
	m = p.mark()
	p.send("\x1b[A")
	p.waitFor(m, "SELECT 41 + 1 AS answer /* the answer */ ;")
	p.send("\x03quit\r")
	if err := p.wait(); err != nil {
		t.Fatalf("%v\n%q", err, p.output())
	}
	history, _ := os.ReadFile(home + "/.streamsql_history")
	if !strings.Contains(string(history), "\nSELECT 41 + 1 AS answer /* the answer */ ;\n") {
		t.Errorf("history:\n%s", history)
	}
}

// TestShellTableModeScrolls: a table longer than the screen shows its first page;
// Page Down, the arrows and Home move the view, the keys are not echoed, and the
// shell reads lines as before once Ctrl-C ends the query.
func TestShellTableModeScrolls(t *testing.T) {
	p := startShell(t) // 30 lines: 24 rows a page
	m := p.mark()
	p.send(slowCounts)
	p.waitFor(m, "[INFO] Table has been created.")
	m = p.mark()
	query := m
	p.send("SELECT id FROM g;\r")
	shown := regexp.MustCompile(`(\d+) rows \((\d+) to (\d+) shown;`)
	view := func(mark int, first string) int {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			out, _ := p.since(mark)
			if all := shown.FindAllStringSubmatch(out, -1); len(all) > 0 {
				if last := all[len(all)-1]; last[2] == first || (first == ">1" && last[2] != "1") {
					return p.mark()
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the view never started at row %s:\n%q", first, out)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	view(m, "1")
	for {
		out, _ := p.since(m)
		if all := shown.FindAllStringSubmatch(out, -1); len(all) > 0 {
			if n, _ := strconv.Atoi(all[len(all)-1][1]); n >= 60 {
				break // more than two pages
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	m = p.mark()
	p.send("\x1b[6~") // Page Down
	m = view(m, "25")
	p.send("\x1b[A") // Up
	m = view(m, "24")
	p.send("\x1b[H") // Home
	m = view(m, "1")
	p.send("G") // the last page
	view(m, ">1")
	if out, _ := p.since(query); strings.Contains(out, "^[") || strings.Contains(out, "[6~") {
		t.Errorf("the keys were echoed:\n%q", out)
	}
	m = p.mark()
	p.send("\x03")
	p.waitForAfter(m, "the query ended.", "streamsql> ")
	m = p.mark()
	p.send("SHOW TABLES;\r")
	p.waitFor(m, "1 row in set")
	p.send("quit\r")
	if err := p.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestShellResultModesBoundedMemory: an unbounded SELECT * at 200,000 rows/s in each
// of the shell's result modes shows rows as they come, and the shell's peak memory
// stays under 200 MB: the table mode keeps at most its bounds, the changelog mode the
// latest changes, the tableau mode nothing.
func TestShellResultModesBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three shells for 15 seconds")
	}
	for _, mode := range []struct{ name, shows string }{
		{"table", " rows ("}, {"changelog", " changes, last change "}, {"tableau", "| +I |"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			p := startShell(t)
			p.keepTail()
			m := p.mark()
			p.send("SET 'sql-client.execution.result-mode' = '" + mode.name + "';\r")
			p.waitFor(m, "Session property has been set.")
			m = p.mark()
			p.send("CREATE TABLE g (id BIGINT, name STRING, v DOUBLE) WITH ('connector' = 'datagen', 'rows-per-second' = '200000');\r")
			p.waitFor(m, "[INFO] Table has been created.")
			m = p.mark()
			p.send("SELECT * FROM g;\r")
			p.waitFor(m, mode.shows)
			var peak int64
			for start := time.Now(); time.Since(start) < 15*time.Second; time.Sleep(500 * time.Millisecond) {
				peak = max(peak, peakRSS(t, p.cmd.Process.Pid))
			}
			out, _ := p.since(p.mark() - 1<<17)
			t.Logf("peak memory %d MB; the screen ends:\n%s", peak>>20, out[max(len(out)-600, 0):])
			if peak > 200<<20 {
				t.Errorf("peak memory %d MB, want under 200 MB", peak>>20)
			}
			m = p.mark()
			p.send("\x03")
			p.waitFor(m, "streamsql> ")
			p.send("quit\r")
			if err := p.wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
