package nexmark

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// stateVersion is the version of this package's snapshot encoding.
const stateVersion = 1

// state is a Reader's snapshot: whose it is (as package connector's snapshots open),
// the generator settings it holds positions of, and the next event id of each lane, e.g.
//
//	{"version":1,"connector":"nexmark","table":"datagen","task":0,"tasks":2,
//	 "options":"10000000/10000/1:3:46/1436918400000","lanes":[{"next":4096,"step":2,"end":10000000}]}
type state struct {
	Version   int    `json:"version"`
	Connector string `json:"connector"`
	Table     string `json:"table"`
	Task      int    `json:"task"`
	Tasks     int    `json:"tasks"`
	Options   string `json:"options"`
	Lanes     []lane `json:"lanes"`
}

// lane is a run of event ids: next, next+step, ... below end (-1: unbounded). A task
// starts with the lane (task, tasks); one restored at another parallelism holds the
// lanes the old tasks had left, split or merged (see rescale).
type lane struct {
	Next int64 `json:"next"`
	Step int64 `json:"step"`
	End  int64 `json:"end"`
}

func (l lane) done() bool { return l.End >= 0 && l.Next >= l.End }

// left is the number of ids left in the lane (MaxInt64 when unbounded).
func (l lane) left() int64 {
	switch {
	case l.End < 0:
		return math.MaxInt64
	case l.Next >= l.End:
		return 0
	}
	return (l.End - l.Next + l.Step - 1) / l.Step
}

// Snapshot returns the position after the last batch returned; see exec.Snapshotter.
func (r *Reader) Snapshot(context.Context, int64) ([]byte, error) {
	return json.Marshal(r.state(r.task, r.tasks, r.lanes))
}

func (r *Reader) state(task, tasks int, lanes []lane) state {
	return state{Version: stateVersion, Connector: "nexmark", Table: r.table, Task: task, Tasks: tasks,
		Options: r.opts.fingerprint(), Lanes: slices.Clone(lanes)}
}

// Restore makes a reader that has not been read yet continue from a snapshot of the
// same table and task; see exec.Restorer.
func (r *Reader) Restore(data []byte) error {
	s, err := r.decode(data, r.task, r.tasks)
	if err != nil {
		return err
	}
	r.lanes = s.Lanes
	return nil
}

// decode checks that data is a snapshot of task of tasks of this reader's table, with
// its settings and sound lanes.
func (r *Reader) decode(data []byte, task, tasks int) (state, error) {
	fail := func(f string, args ...any) error {
		return &stateError{msg: fmt.Sprintf("table %s: cannot restore the nexmark source: ", r.table) + fmt.Sprintf(f, args...)}
	}
	var s state
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return state{}, fail("corrupt state: %v", err)
	}
	want := r.state(task, tasks, nil)
	switch {
	case s.Version != stateVersion:
		return state{}, fail("state version %d is not supported (want %d)", s.Version, stateVersion)
	case s.Connector != want.Connector || s.Table != want.Table:
		return state{}, fail("the state is of the %s source of table %s", s.Connector, s.Table)
	case s.Task != task || s.Tasks != tasks:
		return state{}, fail("the state is of task %d of %d, not of task %d of %d", s.Task, s.Tasks, task, tasks)
	case s.Options != want.Options:
		return state{}, fail("the state is of other generator options (events.num/rate/proportions/base time %s, now %s)", s.Options, want.Options)
	case s.Lanes == nil:
		return state{}, fail("corrupt state: no lanes")
	}
	for _, l := range s.Lanes {
		if l.Step <= 0 || l.Next < 0 || l.End != r.opts.events {
			return state{}, fail("corrupt state: lane %+v", l)
		}
	}
	return s, nil
}

// stateError is a connector.ErrInvalidState.
type stateError struct{ msg string }

func (e *stateError) Error() string { return e.msg }
func (e *stateError) Unwrap() error { return connector.ErrInvalidState }

// rescale redistributes the snapshots of a nexmark table's tasks over tasks new ones:
// the lanes the old tasks had left are split in two (even and odd ids of a lane) until
// there is one for every new task, and dealt out so the new tasks' shares are even.
// Every event is still produced once, and each task still produces its ids in order.
func rescale(t *planner.Table, states [][]byte, tasks int) ([][]byte, error) {
	probe, err := Open(connector.SourceSpec{Table: t, BatchSize: 1})
	if err != nil {
		return nil, err
	}
	probe.Close()
	var lanes []lane
	for i, data := range states {
		s, err := probe.decode(data, i, len(states))
		if err != nil {
			return nil, err
		}
		lanes = append(lanes, s.Lanes...)
	}
	lanes = slices.DeleteFunc(lanes, func(l lane) bool { return l.done() })
	for len(lanes) > 0 && len(lanes) < tasks {
		i := 0
		for k := range lanes {
			if lanes[k].left() > lanes[i].left() {
				i = k
			}
		}
		l := lanes[i]
		if l.left() < 2 {
			break
		}
		lanes[i] = lane{Next: l.Next, Step: 2 * l.Step, End: l.End}
		lanes = append(lanes, lane{Next: l.Next + l.Step, Step: 2 * l.Step, End: l.End})
	}
	slices.SortStableFunc(lanes, func(a, b lane) int { return cmp.Compare(b.left(), a.left()) })
	shares := make([][]lane, tasks)
	load := make([]int64, tasks)
	for _, l := range lanes {
		least := 0
		for k := range load {
			if load[k] < load[least] {
				least = k
			}
		}
		shares[least] = append(shares[least], l)
		load[least] = min(load[least]+l.left(), math.MaxInt64/2)
	}
	out := make([][]byte, tasks)
	for task := range out {
		if out[task], err = json.Marshal(probe.state(task, tasks, append([]lane{}, shares[task]...))); err != nil {
			return nil, err
		}
	}
	return out, nil
}
