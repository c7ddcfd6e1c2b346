package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// Errors callers can tell apart with errors.Is.
var (
	// ErrUnknownConnector: the 'connector' option names no connector, or one that
	// cannot be used in this direction (a sink read as a source).
	ErrUnknownConnector = errors.New("unknown connector")
	// ErrInvalidOption: an option is unknown, missing or has a bad value.
	ErrInvalidOption = errors.New("invalid option")
	// ErrDamaged: a file a connector keeps for a checkpoint (a spool, a pending part
	// file, a write-ahead log) failed its checksum; no restart cures it.
	ErrDamaged = errors.New("damaged")
)

// builtin lists the connectors of this package, as error messages name them.
var builtin = []string{"blackhole", "datagen", "filesystem", "print", "socket"}

// SourceConnector is a source that lives in a package of its own, as it brings its
// client library.
type SourceConnector struct {
	Open func(context.Context, SourceSpec) (exec.Reader, error)
	// Replayable: the source can rewind to a checkpointed position.
	Replayable bool
	// Parallel: several tasks can read the table, each its own SourceSpec.Task.
	Parallel bool
	// Rescale, when set, redistributes the snapshots of a table's source tasks over
	// another number of tasks, as readers of that many would hold them.
	Rescale func(t *planner.Table, states [][]byte, tasks int) ([][]byte, error)
	// Bounded, when set, tells from a table's options whether its source ends; nil: it
	// never does.
	Bounded func(t *planner.Table) bool
}

// SinkConnector is a sink that lives in a package of its own.
type SinkConnector struct {
	Open func(context.Context, SinkSpec) (Sink, error)
	// Delivery says what the sink of a table does with output written again on replay.
	Delivery func(t *planner.Table) Delivery
}

// Delivery is what a sink does with rows written again after a failure.
type Delivery int

const (
	// Appends: a replayed row is written again (at-least-once).
	Appends Delivery = iota
	// Upserts: rows are applied by primary key, so a replay rewrites the same final
	// state (exactly-once final state).
	Upserts
	// Commits: output becomes visible only when a checkpoint completes (exactly-once).
	Commits
)

// Registry is the set of connectors a session can use: those of this package and
// those of packages of their own, by 'connector' name. The nil Registry has the
// built-in ones only.
type Registry struct {
	Sources map[string]SourceConnector
	Sinks   map[string]SinkConnector
	Lookups map[string]LookupConnector // tables that lookup joins read
}

// names lists every connector, sorted.
func (r *Registry) names() []string {
	names := append([]string(nil), builtin...)
	if r != nil {
		for n := range r.Sources {
			names = append(names, n)
		}
		for n := range r.Sinks {
			if _, ok := r.Sources[n]; !ok {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

func (r *Registry) source(name string) (SourceConnector, bool) {
	if r == nil {
		return SourceConnector{}, false
	}
	c, ok := r.Sources[name]
	return c, ok
}

func (r *Registry) sink(name string) (SinkConnector, bool) {
	if r == nil {
		return SinkConnector{}, false
	}
	c, ok := r.Sinks[name]
	return c, ok
}

// DefaultBatchSize is the number of rows a source puts in a batch when the spec does
// not say.
const DefaultBatchSize = 1024

// pollInterval is how long a Reader waits for data before it returns an empty batch.
const pollInterval = 50 * time.Millisecond

// SourceSpec is what OpenSource needs to open a table's source.
type SourceSpec struct {
	Table     *planner.Table   // name and options; the source reads Table.PhysicalSchema()
	Mem       memory.Allocator // nil means memory.DefaultAllocator
	Location  *time.Location   // session time zone; nil means UTC
	BatchSize int              // rows per batch, a target; 0 means DefaultBatchSize
	// Now is the clock of datagen's timestamps (without a seed) and of its pacing;
	// nil means time.Now.
	Now func() time.Time
	// Task and Tasks say which share of the source to read when Tasks tasks read it in
	// parallel (see split); 0 and 0 mean a single task. Only Parallelizable sources
	// accept Tasks > 1.
	Task, Tasks int
	// TablesDir is where embedded tables keep their files when 'path' is not given.
	TablesDir string
	// StateDir is a directory of the job's own where the source may keep files (a
	// write-ahead log of what it received); "" when the job keeps no state.
	StateDir string
	// Unread names the columns ("person") and ROW fields ("bid.extra"), in lower case,
	// that the query never reads: a source may leave them empty (zeros, empty strings).
	Unread []string
}

// SinkSpec is what OpenSink needs to open a table's sink.
type SinkSpec struct {
	Table    *planner.Table
	Schema   planner.Schema   // the rows the sink receives
	Mem      memory.Allocator // nil means memory.DefaultAllocator
	Location *time.Location   // session time zone; nil means UTC
	Stdout   io.Writer        // where print writes; nil means os.Stdout
	Stderr   io.Writer        // where print writes with 'standard-error' = 'true'; nil means os.Stderr

	// ID names this task of the sink, the same across restarts of the same job:
	// transactional sinks name their files, transactions and commit records by it.
	ID string
	// Task and Tasks: this task's index among the sink's parallel tasks.
	Task, Tasks int
	// Checkpointed says the job takes checkpoints. A transactional sink then
	// pre-commits on each barrier and makes output visible only when the checkpoint
	// completes; Finish leaves the last output to the job's final checkpoint. Without
	// checkpoints, Finish commits.
	Checkpointed bool
	// TablesDir is where embedded tables keep their files when 'path' is not given
	// (<state-dir>/tables); the same for every job of a state directory.
	TablesDir string
	// StateDir is a directory of the job's own where the sink may keep files (a
	// write-ahead spool, an embedded table's default file); "" when the job keeps no
	// state, and then the sink keeps none either.
	StateDir string
	// Now is the clock of time-based rolling and partition commit; nil means time.Now.
	Now func() time.Time
}

// Sink is what OpenSink returns: an operator that is also a Finisher (called at the end
// of bounded input: the sink flushes, and commits what it wrote unless checkpointed) and
// a Closer.
//
// A transactional sink also implements exec.Snapshotter, exec.CommitListener and
// exec.Restorer: on a barrier it pre-commits what it wrote for the checkpoint and
// returns what names it; when told the checkpoint completed, it commits that and every
// earlier pre-commit; when restored, it commits the pre-commits of the restored
// checkpoint (whose notice a crash may have lost; committing twice must be harmless)
// and discards what later, failed attempts left behind.
type Sink interface {
	exec.Operator
	exec.Finisher
	exec.Closer
}

// OpenSource opens the source of spec.Table with the built-in connectors.
func OpenSource(ctx context.Context, spec SourceSpec) (exec.Reader, error) {
	return (*Registry)(nil).OpenSource(ctx, spec)
}

// OpenSink opens the sink of spec.Table with the built-in connectors.
func OpenSink(ctx context.Context, spec SinkSpec) (Sink, error) {
	return (*Registry)(nil).OpenSink(ctx, spec)
}

// OpenSource opens the source of spec.Table, as its 'connector' option says.
func (r *Registry) OpenSource(ctx context.Context, spec SourceSpec) (exec.Reader, error) {
	if spec.Table == nil {
		return nil, errors.New("connector: no table to read")
	}
	if spec.Mem == nil {
		spec.Mem = memory.DefaultAllocator
	}
	if spec.Location == nil {
		spec.Location = time.UTC
	}
	if spec.BatchSize <= 0 {
		spec.BatchSize = DefaultBatchSize
	}
	if spec.Now == nil {
		spec.Now = time.Now
	}
	t := spec.Table
	if err := checkPartitioned(t); err != nil {
		return nil, err
	}
	if _, err := ReadAlignment(t); err != nil {
		return nil, err
	}
	switch c := t.Connector(); c {
	case "datagen":
		return openDatagen(spec)
	case "filesystem":
		return openFileSource(spec)
	case "socket":
		return openSocket(ctx, spec)
	default:
		if src, ok := r.source(c); ok {
			return src.Open(ctx, spec)
		}
		if _, ok := r.sink(c); ok || c == "print" || c == "blackhole" {
			return nil, TableError(t, ErrUnknownConnector, "connector '%s' is a sink; it cannot be read", c)
		}
		return nil, r.unknownConnector(t)
	}
}

// OpenSink opens the sink of spec.Table, as its 'connector' option says.
func (r *Registry) OpenSink(ctx context.Context, spec SinkSpec) (Sink, error) {
	if spec.Table == nil {
		return nil, errors.New("connector: no table to write")
	}
	if spec.Mem == nil {
		spec.Mem = memory.DefaultAllocator
	}
	if spec.Location == nil {
		spec.Location = time.UTC
	}
	if spec.Stdout == nil {
		spec.Stdout = os.Stdout
	}
	if spec.Stderr == nil {
		spec.Stderr = os.Stderr
	}
	if len(spec.Schema) == 0 {
		spec.Schema = spec.Table.PhysicalSchema()
	}
	if spec.Now == nil {
		spec.Now = time.Now
	}
	t := spec.Table
	if err := checkPartitioned(t); err != nil {
		return nil, err
	}
	switch c := t.Connector(); c {
	case "print":
		return openPrint(spec)
	case "blackhole":
		return openBlackhole(spec)
	case "filesystem":
		return openFileSink(spec)
	default:
		if sink, ok := r.sink(c); ok {
			return sink.Open(ctx, spec)
		}
		if _, ok := r.source(c); ok || c == "datagen" || c == "socket" {
			return nil, TableError(t, ErrUnknownConnector, "connector '%s' is a source; it cannot be written", c)
		}
		return nil, r.unknownConnector(t)
	}
}

// checkPartitioned refuses PARTITIONED BY on a connector other than filesystem, the
// only one with partition directories.
func checkPartitioned(t *planner.Table) error {
	if len(t.PartitionKeys) > 0 && t.Connector() != "filesystem" {
		return TableError(t, ErrInvalidOption, "connector '%s' does not support PARTITIONED BY; only the filesystem connector writes partitions", t.Connector())
	}
	return nil
}

func (r *Registry) unknownConnector(t *planner.Table) error {
	connectors := r.names()
	c, ok := t.Option("connector")
	if !ok {
		return TableError(t, ErrInvalidOption, "option 'connector' is required (supported: %s)", strings.Join(connectors, ", "))
	}
	return TableError(t, ErrUnknownConnector, "unknown connector %q (supported: %s)", c, strings.Join(connectors, ", "))
}

// tableError is an error about a table: "table <name>: <msg>".
type tableError struct {
	table string
	msg   string
	kind  error // a sentinel of this package, or a wrapped cause
}

func (e *tableError) Error() string { return "table " + e.table + ": " + e.msg }
func (e *tableError) Unwrap() error { return e.kind }

// TableError is an error about table t, "table <name>: <msg>", that errors.Is matches
// to kind.
func TableError(t *planner.Table, kind error, f string, args ...any) error {
	return &tableError{table: t.Name, msg: fmt.Sprintf(f, args...), kind: kind}
}

// kindError is an error with its own message that errors.Is matches to kind.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// WrapError prefixes err with the table's name, keeping it for errors.Is and errors.As.
func WrapError(t *planner.Table, err error) error {
	return &tableError{table: t.Name, msg: err.Error(), kind: err}
}

// Options reads and checks a table's WITH options for one connector.
type Options struct {
	t         *planner.Table
	connector string
	allowed   []string // keys without a pattern; '#' in a key stands for a field name
}

// NewOptions checks that every option key of t is allowed: one of keys, a key of the
// table's format (when withFormat), or one accepted by extra.
func NewOptions(t *planner.Table, keys []string, withFormat bool, extra func(key string) bool) (*Options, error) {
	o := &Options{t: t, connector: t.Connector()}
	o.allowed = append(append(o.allowed, "connector"), keys...)
	if withFormat {
		o.allowed = append(o.allowed, "format")
		f, ok := t.Option("format")
		if !ok {
			return nil, TableError(t, ErrInvalidOption, "option 'format' is required (supported: %s)", strings.Join(format.Formats(), ", "))
		}
		fkeys, ok := format.OptionKeys(strings.ToLower(f))
		if !ok {
			return nil, TableError(t, ErrInvalidOption, "unknown format %q (supported: %s)", f, strings.Join(format.Formats(), ", "))
		}
		o.allowed = append(o.allowed, fkeys...)
	}
	sort.Strings(o.allowed)
	for _, k := range t.OptionKeys() {
		if contains(o.allowed, k) || (extra != nil && extra(k)) || k == planner.LateDataSink || planner.IsLookupOption(k) || planner.IsWatermarkOption(k) {
			continue // the engine's own options are not the connector's
		}
		return nil, TableError(t, ErrInvalidOption, "unsupported option '%s' for connector '%s'%s (supported: %s)",
			k, o.connector, didYouMean(k, o.allowed), strings.Join(o.allowed, ", "))
	}
	return o, nil
}

// FileName is the name a file of table t's own takes under a directory of the engine
// (an embedded table without 'path', a socket's write-ahead log): the table's name in
// lower case. A name that would leave the directory is refused.
func FileName(t *planner.Table) (string, error) {
	name := strings.ToLower(t.Name)
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return "", TableError(t, ErrInvalidOption, "the name `%s` cannot name a file in the state directory (no '/', '\\' or '..'); rename the table or give it a 'path'", t.Name)
	}
	return name, nil
}

// didYouMean names the allowed key closest to a misspelt one, when one is close.
func didYouMean(key string, allowed []string) string {
	best, bestDist := "", 4
	for _, a := range allowed {
		if d := planner.EditDistance(key, a); d < bestDist {
			best, bestDist = a, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean '%s'?)", best)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Err is an ErrInvalidOption about the table.
func (o *Options) Err(f string, args ...any) error {
	return TableError(o.t, ErrInvalidOption, f, args...)
}

// Format is the table's 'format' option, lower case.
func (o *Options) Format() string { return strings.ToLower(o.t.Options["format"]) }

// Required returns an option that must be given and not blank.
func (o *Options) Required(key string) (string, error) {
	v, ok := o.t.Option(key)
	if !ok || strings.TrimSpace(v) == "" {
		return "", o.Err("option '%s' is required", key)
	}
	return v, nil
}

// Int64 reads an integer option in [min, max].
func (o *Options) Int64(key string, def, min, max int64) (int64, error) {
	v, ok := o.t.Option(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < min || n > max {
		return 0, o.Err("option '%s' must be an integer from %d to %d, got %q", key, min, max, v)
	}
	return n, nil
}

// Bool reads a boolean option, 'true' or 'false'.
func (o *Options) Bool(key string, def bool) (bool, error) {
	v, ok := o.t.Option(key)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, o.Err("option '%s' must be true or false, got %q", key, v)
}

// Duration reads a duration option in Flink's form ('5s', '100 ms', '1 min', '2h';
// a bare number is milliseconds).
func (o *Options) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := o.t.Option(key)
	if !ok {
		return def, nil
	}
	d, err := checkpoint.ParseDuration(v)
	if err != nil {
		return 0, o.Err("option '%s': %v", key, err)
	}
	return d, nil
}

// formatErr turns an error of package format (a bad format option, a column type the
// format cannot read) into an option error of the table.
func formatErr(o *Options, err error) error {
	return o.Err("%v", err)
}
