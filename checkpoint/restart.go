package checkpoint

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RestartStrategy decides whether and when a failed job restarts, as Flink's do. It reads
// no clock: the runner passes the time of each failure.
type RestartStrategy interface {
	// Restart returns how long to wait before restarting after a failure at now, or
	// false when the job must stay failed.
	Restart(now time.Time) (time.Duration, bool)
	String() string
}

// ParseRestartStrategy reads the restart-strategy keys of settings. Without
// restart-strategy.type, a job with checkpointing restarts with exponential delay and a
// job without does not restart, as in Flink.
func ParseRestartStrategy(settings map[string]string, checkpointing bool) (RestartStrategy, error) {
	typ := strings.ToLower(strings.TrimSpace(settings["restart-strategy.type"]))
	if typ == "" {
		typ = "none"
		if checkpointing {
			typ = "exponential-delay"
		}
	}
	p := settingsReader{settings: settings}
	var s RestartStrategy
	switch typ {
	case "none", "off", "disable":
		s = noRestart{}
	case "fixed-delay", "fixeddelay":
		s = &fixedDelay{
			attempts: p.int("restart-strategy.fixed-delay.attempts", 1),
			delay:    p.duration("restart-strategy.fixed-delay.delay", time.Second),
		}
	case "failure-rate", "failurerate":
		s = &failureRate{
			max:      p.int("restart-strategy.failure-rate.max-failures-per-interval", 1),
			interval: p.duration("restart-strategy.failure-rate.failure-rate-interval", time.Minute),
			delay:    p.duration("restart-strategy.failure-rate.delay", time.Second),
		}
	case "exponential-delay", "exponentialdelay":
		s = &exponentialDelay{
			initial:    p.duration("restart-strategy.exponential-delay.initial-backoff", time.Second),
			max:        p.duration("restart-strategy.exponential-delay.max-backoff", time.Minute),
			multiplier: p.float("restart-strategy.exponential-delay.backoff-multiplier", 1.5),
			reset:      p.duration("restart-strategy.exponential-delay.reset-backoff-threshold", time.Hour),
		}
	default:
		return nil, fmt.Errorf("unknown 'restart-strategy.type' = '%s' (use none, fixed-delay, failure-rate or exponential-delay)", typ)
	}
	return s, p.err
}

type settingsReader struct {
	settings map[string]string
	err      error
}

func (p *settingsReader) get(key string) (string, bool) {
	v, ok := p.settings[key]
	return strings.TrimSpace(v), ok
}

func (p *settingsReader) fail(key, v, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("'%s' = '%s': expected %s", key, v, want)
	}
}

func (p *settingsReader) int(key string, def int) int {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		p.fail(key, v, "a non-negative integer")
	}
	return n
}

func (p *settingsReader) float(key string, def float64) float64 {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 1 {
		p.fail(key, v, "a number of at least 1")
	}
	return f
}

func (p *settingsReader) duration(key string, def time.Duration) time.Duration {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	d, err := ParseDuration(v)
	if err != nil {
		p.fail(key, v, "a duration such as '1 s'")
	}
	return d
}

type noRestart struct{}

func (noRestart) Restart(time.Time) (time.Duration, bool) { return 0, false }
func (noRestart) String() string                          { return "none" }

// fixedDelay restarts at most attempts times, each after delay.
type fixedDelay struct {
	attempts int
	delay    time.Duration
	used     int
}

func (s *fixedDelay) Restart(time.Time) (time.Duration, bool) {
	if s.used >= s.attempts {
		return 0, false
	}
	s.used++
	return s.delay, true
}

func (s *fixedDelay) String() string {
	return fmt.Sprintf("fixed-delay (%d attempts, %v delay; %d used)", s.attempts, s.delay, s.used)
}

// failureRate restarts after delay unless more than max failures fell within interval.
type failureRate struct {
	max      int
	interval time.Duration
	delay    time.Duration
	failures []time.Time
}

func (s *failureRate) Restart(now time.Time) (time.Duration, bool) {
	recent := s.failures[:0]
	for _, f := range s.failures {
		if now.Sub(f) < s.interval {
			recent = append(recent, f)
		}
	}
	s.failures = append(recent, now)
	if len(s.failures) > s.max {
		return 0, false
	}
	return s.delay, true
}

func (s *failureRate) String() string {
	return fmt.Sprintf("failure-rate (at most %d failures per %v, %v delay)", s.max, s.interval, s.delay)
}

// exponentialDelay waits longer after each failure, up to max, and starts again from
// initial once the job ran for reset without failing.
type exponentialDelay struct {
	initial, max, reset time.Duration
	multiplier          float64
	next                time.Duration
	lastRestart         time.Time
}

func (s *exponentialDelay) Restart(now time.Time) (time.Duration, bool) {
	if s.next == 0 || (!s.lastRestart.IsZero() && now.Sub(s.lastRestart) >= s.reset) {
		s.next = s.initial
	}
	d := s.next
	s.next = min(time.Duration(float64(s.next)*s.multiplier), s.max)
	s.lastRestart = now.Add(d)
	return d, true
}

func (s *exponentialDelay) String() string {
	return fmt.Sprintf("exponential-delay (%v initial, %v max, x%g)", s.initial, s.max, s.multiplier)
}
