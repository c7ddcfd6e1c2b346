package checkpoint

import (
	"strings"
	"testing"
	"time"
)

// restarts reports the strategy's answer to failures at the given seconds.
func restarts(t *testing.T, settings map[string]string, at ...float64) string {
	t.Helper()
	s, err := ParseRestartStrategy(settings, false)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	var out []string
	for _, sec := range at {
		d, ok := s.Restart(t0.Add(time.Duration(sec * float64(time.Second))))
		if !ok {
			out = append(out, "stop")
		} else {
			out = append(out, d.String())
		}
	}
	return strings.Join(out, " ")
}

func TestRestartStrategies(t *testing.T) {
	cases := []struct {
		settings map[string]string
		at       []float64
		want     string
	}{
		{map[string]string{}, []float64{1}, "stop"},
		{map[string]string{"restart-strategy.type": "none"}, []float64{1}, "stop"},
		{map[string]string{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "2",
			"restart-strategy.fixed-delay.delay": "200 ms"}, []float64{1, 2, 3}, "200ms 200ms stop"},
		{map[string]string{"restart-strategy.type": "failure-rate",
			"restart-strategy.failure-rate.max-failures-per-interval": "2",
			"restart-strategy.failure-rate.failure-rate-interval":     "10 s",
			"restart-strategy.failure-rate.delay":                     "1 s"}, []float64{0, 5, 20, 25, 26}, "1s 1s 1s 1s stop"},
		{map[string]string{"restart-strategy.type": "exponential-delay",
			"restart-strategy.exponential-delay.initial-backoff":         "1 s",
			"restart-strategy.exponential-delay.max-backoff":             "5 s",
			"restart-strategy.exponential-delay.backoff-multiplier":      "2",
			"restart-strategy.exponential-delay.reset-backoff-threshold": "1 min"}, []float64{0, 2, 5, 10, 20, 200}, "1s 2s 4s 5s 5s 1s"},
	}
	for i, c := range cases {
		if got := restarts(t, c.settings, c.at...); got != c.want {
			t.Errorf("case %d %v: got %q, want %q", i, c.settings, got, c.want)
		}
	}
}

func TestDefaultRestartStrategyFollowsCheckpointing(t *testing.T) {
	s, _ := ParseRestartStrategy(nil, true)
	if !strings.HasPrefix(s.String(), "exponential-delay") {
		t.Errorf("with checkpointing: %s", s)
	}
	s, _ = ParseRestartStrategy(nil, false)
	if s.String() != "none" {
		t.Errorf("without checkpointing: %s", s)
	}
}

func TestRestartStrategyErrors(t *testing.T) {
	for _, settings := range []map[string]string{
		{"restart-strategy.type": "sometimes"},
		{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "many"},
		{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.delay": "soon"},
	} {
		if _, err := ParseRestartStrategy(settings, false); err == nil {
			t.Errorf("%v: no error", settings)
		}
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]string{
		"execution.checkpointing.interval": "10 s", "execution.checkpointing.mode": "AT_LEAST_ONCE",
		"execution.checkpointing.timeout": "1 min", "execution.checkpointing.max-concurrent-checkpoints": "2",
		"execution.checkpointing.min-pause": "500 ms", "execution.checkpointing.tolerable-failed-checkpoints": "3",
		"state.checkpoints.num-retained": "4",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Interval: 10 * time.Second, Mode: AtLeastOnce, Timeout: time.Minute, MaxConcurrent: 2,
		MinPause: 500 * time.Millisecond, TolerableFailures: 3, Retained: 4}
	if c != want {
		t.Errorf("got %+v, want %+v", c, want)
	}
	if _, err := ParseConfig(map[string]string{"execution.checkpointing.mode": "SOMETIMES"}); err == nil {
		t.Error("bad mode accepted")
	}
}

// TestParseDuration: Flink's duration forms (a bare number is milliseconds), with a
// fraction too; negative, unitless-but-unknown and overflowing ones fail.
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1s": time.Second, "5 s": 5 * time.Second, "100ms": 100 * time.Millisecond, "250": 250 * time.Millisecond,
		"1 min": time.Minute, "2m": 2 * time.Minute, "3h": 3 * time.Hour, "1d": 24 * time.Hour, "7 seconds": 7 * time.Second,
		"1.5 s": 1500 * time.Millisecond, "10 us": 10 * time.Microsecond, "3ns": 3, " 2 MIN ": 2 * time.Minute,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "s", "1 fortnight", "-1s", "99999999999999999999d", "1.2.3 s"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) succeeded", in)
		}
	}
}
