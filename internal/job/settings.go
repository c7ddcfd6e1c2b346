package job

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// Settings is what a job reads of the session's SET options: parsed once, when its
// statement runs, and frozen for the job's life, so a later SET never reaches it.
type Settings struct {
	Name         string // 'pipeline.name'; "" derives one from the statement
	Parallelism  int
	Checkpoint   checkpoint.Config
	Restart      checkpoint.RestartStrategy
	IdleTimeout  time.Duration // 'table.exec.source.idle-timeout'
	StateTTL     time.Duration // 'table.exec.state.ttl'
	CacheMaxKeys int           // groups an aggregate task keeps in memory
	Emit         planner.EmitControl
	// SavepointPath is the savepoint the job starts from ('execution.savepoint.path'),
	// and IgnoreUnclaimed lets its state that no operator claims go
	// ('execution.savepoint.ignore-unclaimed-state').
	SavepointPath   string
	IgnoreUnclaimed bool
	SavepointsDir   string // 'state.savepoints.dir': where savepoints go unless told
	// MaxResultRows bounds the rows a query's materialized result keeps
	// ('sql-client.execution.max-table-result.rows'); ResultMode is how the shell
	// shows a query's result ('sql-client.execution.result-mode').
	MaxResultRows int
	ResultMode    string
}

// Checkpointed says whether the job takes checkpoints.
func (s Settings) Checkpointed() bool { return s.Checkpoint.Interval > 0 }

// DefaultMaxResultRows is Flink's default of 'sql-client.execution.max-table-result.rows'.
const DefaultMaxResultRows = 1_000_000

// ResultModes are the values of 'sql-client.execution.result-mode'.
var ResultModes = []string{"table", "changelog", "tableau"}

// defaultCacheGroups is how many groups an aggregate task keeps in memory unless
// 'state.cache.max-keys' says otherwise.
const defaultCacheGroups = 2_000_000

// ParseSettings reads a job's settings from the session's options.
func ParseSettings(options map[string]string) (Settings, error) {
	s := Settings{Name: options["pipeline.name"], Parallelism: 1, CacheMaxKeys: defaultCacheGroups,
		MaxResultRows: DefaultMaxResultRows, ResultMode: "table"}
	for key, value := range options {
		if err := Check(key, value); err != nil {
			return s, err
		}
	}
	var err error
	if s.Checkpoint, err = checkpoint.ParseConfig(options); err != nil {
		return s, err
	}
	if s.Restart, err = checkpoint.ParseRestartStrategy(options, s.Checkpointed()); err != nil {
		return s, err
	}
	if v, ok := options["parallelism.default"]; ok {
		s.Parallelism, _ = strconv.Atoi(strings.TrimSpace(v))
	}
	if v, ok := options["state.cache.max-keys"]; ok {
		s.CacheMaxKeys, _ = strconv.Atoi(strings.TrimSpace(v))
	}
	if v, ok := options["sql-client.execution.max-table-result.rows"]; ok {
		s.MaxResultRows, _ = strconv.Atoi(strings.TrimSpace(v))
	}
	if v, ok := options["sql-client.execution.result-mode"]; ok {
		s.ResultMode = strings.ToLower(strings.TrimSpace(v))
	}
	s.SavepointPath = strings.TrimSpace(options["execution.savepoint.path"])
	s.IgnoreUnclaimed, _ = strconv.ParseBool(options["execution.savepoint.ignore-unclaimed-state"])
	s.SavepointsDir = strings.TrimSpace(options["state.savepoints.dir"])
	s.IdleTimeout, _ = duration(options, "table.exec.source.idle-timeout")
	s.StateTTL, _ = duration(options, "table.exec.state.ttl")
	lateness, _ := duration(options, "table.exec.emit.allow-lateness")
	s.Emit.AllowLateness = lateness.Milliseconds()
	if on, _ := strconv.ParseBool(options["table.exec.emit.early-fire.enabled"]); on {
		delay, _ := duration(options, "table.exec.emit.early-fire.delay")
		s.Emit.EarlyFireDelay = delay.Milliseconds()
	}
	return s, nil
}

func duration(options map[string]string, key string) (time.Duration, error) {
	v, ok := options[key]
	if !ok {
		return 0, nil
	}
	return checkpoint.ParseDuration(v)
}

// Check checks the value of one SET key the engine reads; other keys pass.
func Check(key, value string) error {
	var err error
	switch key {
	case "table.exec.source.idle-timeout", "table.exec.state.ttl", "table.exec.emit.allow-lateness", "table.exec.emit.early-fire.delay":
		_, err = checkpoint.ParseDuration(value)
	case "table.exec.emit.early-fire.enabled", "execution.savepoint.ignore-unclaimed-state":
		if _, perr := strconv.ParseBool(value); perr != nil {
			err = fmt.Errorf("must be true or false")
		}
	case "parallelism.default", "state.cache.max-keys":
		if n, perr := strconv.Atoi(strings.TrimSpace(value)); perr != nil || n < 1 {
			err = fmt.Errorf("must be a positive integer")
		} else if key == "parallelism.default" && n > exec.MaxParallelism {
			return fmt.Errorf("'parallelism.default' = '%s' is above 'pipeline.max-parallelism' (%d), the number of key groups keyed state is spread over", value, exec.MaxParallelism)
		}
	case "pipeline.max-parallelism":
		// Keyed state, checkpoints and savepoints are laid out in exec.MaxParallelism key
		// groups; another number would need every savepoint redistributed.
		if n, perr := strconv.Atoi(strings.TrimSpace(value)); perr != nil || n != exec.MaxParallelism {
			err = fmt.Errorf("streamsql keeps keyed state in %d key groups, fixed: only '%d' is accepted", exec.MaxParallelism, exec.MaxParallelism)
		}
	case "sql-client.execution.max-table-result.rows":
		if n, perr := strconv.Atoi(strings.TrimSpace(value)); perr != nil || n < 1 {
			err = fmt.Errorf("must be a positive integer")
		}
	case "sql-client.execution.result-mode":
		if !slices.Contains(ResultModes, strings.ToLower(strings.TrimSpace(value))) {
			err = fmt.Errorf("must be one of %s", strings.Join(ResultModes, ", "))
		}
	case "pipeline.name":
		err = checkName(value)
	default:
		if strings.HasPrefix(key, "execution.checkpointing.") || key == "state.checkpoints.num-retained" {
			_, err = checkpoint.ParseConfig(map[string]string{key: value})
			return err
		}
		if strings.HasPrefix(key, "restart-strategy.") {
			_, err = checkpoint.ParseRestartStrategy(map[string]string{key: value}, true)
			return err
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("'%s' = '%s': %v", key, value, err)
	}
	return nil
}

// EngineKeys are the SET keys the engine reads.
var EngineKeys = append([]string{
	"pipeline.name", "parallelism.default", "pipeline.max-parallelism", "table.local-time-zone",
	"sql-client.execution.result-mode", "sql-client.execution.max-table-result.rows",
	"execution.savepoint.path", "execution.savepoint.ignore-unclaimed-state", "state.savepoints.dir",
	"table.exec.source.idle-timeout", "table.exec.state.ttl", "table.exec.emit.allow-lateness",
	"table.exec.emit.early-fire.enabled", "table.exec.emit.early-fire.delay", "state.cache.max-keys",
	"restart-strategy.type", "restart-strategy.fixed-delay.attempts", "restart-strategy.fixed-delay.delay",
	"restart-strategy.failure-rate.max-failures-per-interval", "restart-strategy.failure-rate.failure-rate-interval",
	"restart-strategy.failure-rate.delay", "restart-strategy.exponential-delay.initial-backoff",
	"restart-strategy.exponential-delay.max-backoff", "restart-strategy.exponential-delay.backoff-multiplier",
	"restart-strategy.exponential-delay.reset-backoff-threshold",
}, checkpoint.Keys...)

// IgnoredKeys are keys of Flink's that scripts set and streamsql accepts without
// acting on them: a single process has no cluster, memory or slot settings, and its
// planner and state backend are its own.
var IgnoredKeys = []string{
	"execution.runtime-mode", "execution.checkpointing.unaligned",
	"execution.buffer-timeout", "pipeline.operator-chaining",
	"sql-client.verbose",
	"sql-client.display.max-column-width", "table.dml-sync", "table.exec.mini-batch.enabled",
	"table.exec.mini-batch.allow-latency", "table.exec.mini-batch.size", "table.exec.resource.default-parallelism",
	"table.exec.sink.not-null-enforcer", "table.exec.sink.upsert-materialize", "table.optimizer.agg-phase-strategy",
	"table.optimizer.distinct-agg.split.enabled", "state.backend.type", "state.backend.incremental",
	"state.checkpoints.dir", "taskmanager.numberOfTaskSlots",
	"taskmanager.memory.process.size", "jobmanager.memory.process.size",
}

// Suggest returns the known key closest to an unknown key, when it is close enough to
// be a misspelling of it, or "".
func Suggest(key string) string {
	best, bestDist := "", 1<<30
	for _, list := range [][]string{EngineKeys, IgnoredKeys} {
		for _, k := range list {
			if k == key {
				return ""
			}
			if d := planner.EditDistance(key, k); d < bestDist {
				best, bestDist = k, d
			}
		}
	}
	if bestDist > 3 || bestDist > len(key)/4 {
		return ""
	}
	return best
}
