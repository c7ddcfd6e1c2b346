package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestNexmarkCrashRecovery kills a real streamsql process 10 times while it runs
// Nexmark's q5 (a window join of hopping window aggregates, one of them cascading), q7
// (bids joined with their window's highest price, expired by the watermark) and q8 (a
// window join of tumbling ones) at parallelism 2 with exactly-once checkpoints; the
// result, printed when the input ends, equals a failure-free run's row for row.
func TestNexmarkCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	for _, c := range []struct {
		query        string
		events, rate int // the rate sets how much event time the events span
		rows         int // at least, in the result: q5 and q7 have a row or two per window
	}{{"q5", 6_000_000, 50_000, 10}, {"q7", 2_000_000, 40_000, 4}, {"q8", 8_000_000, 100_000, 1000}} {
		t.Run(c.query, func(t *testing.T) {
			script := writeScript(t, nexmarkCrashJob(t, c.query, c.events, c.rate))
			want := sortedLines(t, runUntilDone(t, script, t.TempDir(), 0, nil))
			if len(want) < c.rows {
				t.Fatalf("the failure-free run printed only %d rows", len(want))
			}
			got := sortedLines(t, runUntilDone(t, script, t.TempDir(), 10, rand.New(rand.NewPCG(8, uint64(c.events)))))
			if !slices.Equal(got, want) {
				t.Fatalf("after 10 kills: %d rows, want %d; first difference: %s", len(got), len(want), firstDifference(got, want))
			}
		})
	}
}

// nexmarkCrashJob is queries/nexmark/<q>.sql with checkpoints every 100 ms, the given
// number of events at the given rate of event time, and its INSERT turned into a query
// whose result is printed.
func nexmarkCrashJob(t *testing.T, q string, events, rate int) string {
	text, err := os.ReadFile("../queries/nexmark/" + q + ".sql")
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(string(text), "'events.num' = '10000000'", fmt.Sprintf("'events.num' = '%d'", events), 1)
	for _, key := range []string{"first-event.rate", "next-event.rate"} {
		script = strings.Replace(script, fmt.Sprintf("'%s' = '10000000'", key), fmt.Sprintf("'%s' = '%d'", key, rate), 1)
	}
	script = strings.Replace(script, "INSERT INTO nexmark_"+q+"\n", "", 1)
	if strings.Contains(script, "'10000000'") || strings.Contains(script, "INSERT INTO") {
		t.Fatalf("%s.sql is not shaped as this test expects", q)
	}
	return `SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'parallelism.default' = '2';
` + script
}

// sortedLines is a CSV result's rows, header first, the rest sorted: the tasks' rows
// interleave in any order.
func sortedLines(t *testing.T, csv string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) < 2 {
		t.Fatalf("unexpected output:\n%.500s", csv)
	}
	slices.Sort(lines[1:])
	return lines
}

func firstDifference(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d: got %q, want %q", i, got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}
