package checkpoint

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// transcript drives a coordinator with a script of events and records its actions:
//
//	tick T            the time is T (milliseconds since start)
//	ack ID TASK       task TASK acknowledged checkpoint ID
//	fail ID           checkpoint ID failed
//	final             the input ended: the final checkpoint starts
type transcript struct {
	t   *testing.T
	c   *Coordinator
	t0  time.Time
	now time.Time
}

func newTranscript(t *testing.T, cfg Config, tasks int) *transcript {
	t0 := time.Unix(1000, 0)
	return &transcript{t: t, c: NewCoordinator(cfg, tasks, 1, t0), t0: t0, now: t0}
}

func (tr *transcript) run(script string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		var acts []Action
		var a, b int64
		switch f := strings.Fields(line); f[0] {
		case "tick":
			fmt.Sscan(f[1], &a)
			tr.now = tr.t0.Add(time.Duration(a) * time.Millisecond)
			acts = tr.c.Tick(tr.now)
		case "ack":
			fmt.Sscan(f[1], &a)
			fmt.Sscan(f[2], &b)
			acts = tr.c.Ack(tr.now, a, Ack{Task: int(b)})
		case "fail":
			fmt.Sscan(f[1], &a)
			acts = tr.c.Failed(tr.now, a, "declined")
		case "final":
			acts = []Action{tr.c.TriggerFinal(tr.now)}
		default:
			tr.t.Fatalf("bad transcript line %q", line)
		}
		for _, act := range acts {
			switch act := act.(type) {
			case Trigger:
				out = append(out, fmt.Sprintf("trigger %d", act.ID))
			case Complete:
				out = append(out, fmt.Sprintf("complete %d (%d acks)", act.ID, len(act.Acks)))
			case Abort:
				out = append(out, fmt.Sprintf("abort %d", act.ID))
			case FailJob:
				out = append(out, "fail job")
			}
		}
	}
	return strings.Join(out, "\n")
}

func check(t *testing.T, cfg Config, tasks int, script, want string) {
	t.Helper()
	if got := newTranscript(t, cfg, tasks).run(script); got != strings.TrimSpace(want) {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
	}
}

func cfg(mod func(*Config)) Config {
	c := DefaultConfig()
	c.Interval = 100 * time.Millisecond
	mod(&c)
	return c
}

func TestTriggersOnIntervalAndCompletesOnAllAcks(t *testing.T) {
	check(t, cfg(func(*Config) {}), 2, `
tick 50
tick 100
tick 150
ack 1 0
ack 1 1
tick 199
tick 200`, `
trigger 1
complete 1 (2 acks)
trigger 2`)
}

func TestCheckpointingOffNeverTriggers(t *testing.T) {
	check(t, DefaultConfig(), 1, "tick 100000", "")
}

func TestMaxConcurrentCheckpoints(t *testing.T) {
	script := `
tick 100
tick 200
tick 300
ack 1 0
ack 2 0`
	// One at a time: the ticks at 200 and 300 find checkpoint 1 still running.
	check(t, cfg(func(*Config) {}), 1, script, `
trigger 1
complete 1 (1 acks)`)
	check(t, cfg(func(c *Config) { c.MaxConcurrent = 2 }), 1, script, `
trigger 1
trigger 2
complete 1 (1 acks)
complete 2 (1 acks)`)
}

func TestCompletingSubsumesOlderPending(t *testing.T) {
	check(t, cfg(func(c *Config) { c.MaxConcurrent = 3 }), 1, `
tick 100
tick 200
ack 2 0`, `
trigger 1
trigger 2
complete 2 (1 acks)
abort 1`)
}

func TestMinPauseCountsFromTheEndOfTheLastCheckpoint(t *testing.T) {
	check(t, cfg(func(c *Config) { c.MinPause = 500 * time.Millisecond }), 1, `
tick 100
tick 250
ack 1 0
tick 300
tick 749
tick 750`, `
trigger 1
complete 1 (1 acks)
trigger 2`)
}

func TestTimeoutAbortsAndToleratedFailures(t *testing.T) {
	c := cfg(func(c *Config) { c.Timeout = 150 * time.Millisecond; c.TolerableFailures = 1 })
	check(t, c, 2, `
tick 100
ack 1 0
tick 249
tick 250
tick 350
tick 500`, `
trigger 1
abort 1
trigger 2
abort 2
fail job`)
}

func TestSuccessResetsFailureCount(t *testing.T) {
	c := cfg(func(c *Config) { c.TolerableFailures = 1 })
	check(t, c, 1, `
tick 100
fail 1
tick 200
ack 2 0
tick 300
fail 3
tick 400
fail 4`, `
trigger 1
abort 1
trigger 2
complete 2 (1 acks)
trigger 3
abort 3
trigger 4
abort 4
fail job`)
}

func TestLateAckOfAbortedCheckpointIsIgnored(t *testing.T) {
	c := cfg(func(c *Config) { c.Timeout = 50 * time.Millisecond; c.TolerableFailures = 5 })
	check(t, c, 1, `
tick 100
tick 150
ack 1 0`, `
trigger 1
abort 1`)
}

// The final checkpoint starts at once, beside one in progress, and no periodic one
// follows it.
func TestFinalCheckpoint(t *testing.T) {
	check(t, cfg(func(*Config) {}), 1, `
tick 100
final
ack 2 0
ack 1 0
tick 200
tick 300`, `
trigger 1
trigger 2
complete 2 (1 acks)
abort 1`)
}
