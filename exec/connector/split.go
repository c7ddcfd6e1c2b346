package connector

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/planner"
)

// split is the share of a source that one of its parallel tasks reads: together the
// tasks 0..tasks-1 read every row exactly once.
//
//   - datagen: the row with global index g (0, 1, ...) is task g % tasks's, so task k
//     produces rows k, k+tasks, k+2·tasks, ... (sequences interleave as in Flink), and
//     paces itself to its share of 'rows-per-second'.
//   - filesystem: whole files. Reading a path once, file i of the sorted listing is
//     task i % tasks's; monitoring a directory, where indexes shift as files arrive,
//     a file is task fnv32a(name) % tasks's.
//   - socket: one task only.
type split struct{ task, tasks int }

func newSplit(spec SourceSpec) (split, error) {
	s := split{task: spec.Task, tasks: max(spec.Tasks, 1)}
	if spec.Tasks < 0 || s.task < 0 || s.task >= s.tasks {
		return split{}, TableError(spec.Table, ErrInvalidOption, "source task %d of %d does not exist", spec.Task, spec.Tasks)
	}
	if s.tasks > 1 && !(*Registry)(nil).Parallelizable(spec.Table) {
		return split{}, TableError(spec.Table, errors.ErrUnsupported, "the %s source cannot run in parallel", spec.Table.Connector())
	}
	return s, nil
}

// Parallelizable reports whether the source of t can be read by several tasks, each
// given its own SourceSpec.Task; when not, the planner runs it as one task.
func (r *Registry) Parallelizable(t *planner.Table) bool {
	switch t.Connector() {
	case "datagen", "filesystem":
		return true
	}
	c, _ := r.source(t.Connector())
	return c.Parallel
}

// rows returns this split's share of n rows, or -1 when n is -1 (unbounded).
func (s split) rows(n int64) int64 {
	if n < 0 {
		return -1
	}
	c := n / int64(s.tasks)
	if n%int64(s.tasks) > int64(s.task) {
		c++
	}
	return c
}

// global returns the global index of this split's local row i.
func (s split) global(i int64) uint64 { return uint64(s.task) + uint64(i)*uint64(s.tasks) }

// ownsIndex reports whether file i of a sorted listing is this split's.
func (s split) ownsIndex(i int) bool { return i%s.tasks == s.task }

// ownsName reports whether the file of that name is this split's, by a hash of the name.
func (s split) ownsName(name string) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32()%uint32(s.tasks)) == s.task
}

// Replayable reports whether t's source can rewind to a checkpointed position (datagen
// and filesystem can; a socket can only with its write-ahead log).
// RescaleSource redistributes the snapshots of t's source tasks over tasks new ones,
// for a job restored at another parallelism.
func (r *Registry) RescaleSource(t *planner.Table, states [][]byte, tasks int) ([][]byte, error) {
	if err := r.CanRescaleErr(t); err != nil {
		return nil, err
	}
	switch t.Connector() {
	case "datagen":
		return rescaleDatagen(t, states, tasks)
	case "filesystem":
		return rescaleFiles(t, states, tasks)
	}
	c, _ := r.source(t.Connector())
	return c.Rescale(t, states, tasks)
}

// CanRescaleErr says why RescaleSource does not work for t, or nil when it does.
func (r *Registry) CanRescaleErr(t *planner.Table) error {
	if t == nil {
		return errors.New("its state cannot move to another number of tasks")
	}
	if c, ok := r.source(t.Connector()); (ok && c.Rescale != nil) || t.Connector() == "datagen" || t.Connector() == "filesystem" {
		return nil
	}
	return fmt.Errorf("the %s source of table %s cannot move its read positions to another number of tasks", t.Connector(), t.Name)
}

func (r *Registry) Replayable(t *planner.Table) bool {
	switch t.Connector() {
	case "datagen", "filesystem":
		return true
	case "socket":
		return strings.EqualFold(t.Options["source.wal"], "true")
	}
	c, _ := r.source(t.Connector())
	return c.Replayable
}

// Bounded reports whether the source of t ends by its options: a file read once (no
// 'source.monitor-interval'), datagen with a 'number-of-rows', or a connector of a
// package of its own that says so. The planner sorts all of a bounded input (ORDER BY
// without LIMIT) when it ends.
func (r *Registry) Bounded(t *planner.Table) bool {
	switch t.Connector() {
	case "filesystem":
		v, ok := t.Option("source.monitor-interval")
		if !ok {
			return true
		}
		d, err := checkpoint.ParseDuration(v)
		return err == nil && d == 0
	case "datagen":
		_, ok := t.Option("number-of-rows")
		return ok
	case "socket":
		return false
	}
	c, _ := r.source(t.Connector())
	return c.Bounded != nil && c.Bounded(t)
}

// DeliveryOf says what the sink of t does with rows written again after a failure.
func (r *Registry) DeliveryOf(t *planner.Table) Delivery {
	if t.Connector() == "filesystem" {
		return Commits
	}
	if c, ok := r.sink(t.Connector()); ok && c.Delivery != nil {
		return c.Delivery(t)
	}
	return Appends
}
