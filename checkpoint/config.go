package checkpoint

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Mode is the consistency a checkpoint gives.
type Mode int

const (
	// ExactlyOnce aligns barriers: a task with several inputs stops reading an input
	// that delivered barrier n until barrier n arrived on all of them.
	ExactlyOnce Mode = iota
	// AtLeastOnce does not align: records after a barrier may enter the snapshot and
	// are replayed after a recovery.
	AtLeastOnce
)

func (m Mode) String() string {
	if m == AtLeastOnce {
		return "AT_LEAST_ONCE"
	}
	return "EXACTLY_ONCE"
}

// Config is a job's checkpointing, set with Flink's keys.
type Config struct {
	Interval          time.Duration // 0: checkpointing is off
	Mode              Mode
	Timeout           time.Duration
	MaxConcurrent     int
	MinPause          time.Duration
	TolerableFailures int // consecutive failed checkpoints tolerated before the job fails
	Retained          int // completed checkpoints kept on disk
	Retention         Retention
}

// Retention says what becomes of a job's checkpoints when it stops or fails for good
// (Flink's execution.checkpointing.externalized-checkpoint-retention).
type Retention int

const (
	// RetainOnCancellation keeps them: the job resumes from them when started again.
	RetainOnCancellation Retention = iota
	// DeleteOnCancellation deletes them when the job is stopped (after a stop's
	// savepoint), and keeps them when it fails.
	DeleteOnCancellation
	// NoExternalizedCheckpoints deletes them when the job stops or fails for good.
	NoExternalizedCheckpoints
)

func (r Retention) String() string {
	return [...]string{"RETAIN_ON_CANCELLATION", "DELETE_ON_CANCELLATION", "NO_EXTERNALIZED_CHECKPOINTS"}[r]
}

// DefaultConfig is Flink's defaults, with checkpointing off.
func DefaultConfig() Config {
	return Config{Timeout: 10 * time.Minute, MaxConcurrent: 1, Retained: 1}
}

// Keys are the SET keys ParseConfig reads.
var Keys = []string{
	"execution.checkpointing.interval",
	"execution.checkpointing.mode",
	"execution.checkpointing.timeout",
	"execution.checkpointing.max-concurrent-checkpoints",
	"execution.checkpointing.min-pause",
	"execution.checkpointing.tolerable-failed-checkpoints",
	"state.checkpoints.num-retained",
	"execution.checkpointing.externalized-checkpoint-retention",
}

// ParseConfig reads the checkpointing keys of settings.
func ParseConfig(settings map[string]string) (Config, error) {
	c := DefaultConfig()
	var err error
	for _, key := range Keys {
		v, ok := settings[key]
		if !ok {
			continue
		}
		switch key {
		case "execution.checkpointing.interval":
			c.Interval, err = ParseDuration(v)
		case "execution.checkpointing.mode":
			switch strings.ToUpper(strings.ReplaceAll(v, "-", "_")) {
			case "EXACTLY_ONCE":
				c.Mode = ExactlyOnce
			case "AT_LEAST_ONCE":
				c.Mode = AtLeastOnce
			default:
				err = fmt.Errorf("must be EXACTLY_ONCE or AT_LEAST_ONCE")
			}
		case "execution.checkpointing.timeout":
			c.Timeout, err = ParseDuration(v)
		case "execution.checkpointing.min-pause":
			c.MinPause, err = ParseDuration(v)
		case "execution.checkpointing.max-concurrent-checkpoints":
			c.MaxConcurrent, err = positive(v, 1)
		case "execution.checkpointing.tolerable-failed-checkpoints":
			c.TolerableFailures, err = positive(v, 0)
		case "state.checkpoints.num-retained":
			c.Retained, err = positive(v, 1)
		case "execution.checkpointing.externalized-checkpoint-retention":
			switch strings.ToUpper(strings.TrimSpace(v)) {
			case "RETAIN_ON_CANCELLATION":
				c.Retention = RetainOnCancellation
			case "DELETE_ON_CANCELLATION":
				c.Retention = DeleteOnCancellation
			case "NO_EXTERNALIZED_CHECKPOINTS":
				c.Retention = NoExternalizedCheckpoints
			default:
				err = fmt.Errorf("must be RETAIN_ON_CANCELLATION, DELETE_ON_CANCELLATION or NO_EXTERNALIZED_CHECKPOINTS")
			}
		}
		if err != nil {
			return c, fmt.Errorf("'%s' = '%s': %v", key, v, err)
		}
	}
	return c, nil
}

func positive(v string, min int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < min {
		return 0, fmt.Errorf("must be an integer of at least %d", min)
	}
	return n, nil
}

// ParseDuration reads a duration as Flink's TimeUtils does, in SET options and table
// options alike: a non-negative number and a unit (ns, us, ms, s, min, h, d and their
// long forms; 'm' is minutes), spaces allowed between; a bare number is milliseconds.
// Unlike Flink it also takes a fraction ('1.5 s').
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q, expected for example '10 s' or '500 ms'", t)
	}
	unit, ok := durationUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("unknown duration unit in %q (use ms, s, min, h or d)", t)
	}
	if d := n * float64(unit); d < math.MaxInt64 {
		return time.Duration(d), nil
	}
	return 0, fmt.Errorf("duration %q is too long (at most about 292 years)", t)
}

// durationUnits maps each unit's names to it; no unit is milliseconds.
var durationUnits = func() map[string]time.Duration {
	units := map[string]time.Duration{"": time.Millisecond}
	for unit, names := range map[time.Duration][]string{
		time.Nanosecond:  {"ns", "nano", "nanos", "nanosecond", "nanoseconds"},
		time.Microsecond: {"us", "µs", "micro", "micros", "microsecond", "microseconds"},
		time.Millisecond: {"ms", "milli", "millis", "millisecond", "milliseconds"},
		time.Second:      {"s", "sec", "secs", "second", "seconds"},
		time.Minute:      {"m", "min", "mins", "minute", "minutes"},
		time.Hour:        {"h", "hour", "hours"},
		24 * time.Hour:   {"d", "day", "days"},
	} {
		for _, name := range names {
			units[name] = unit
		}
	}
	return units
}()
