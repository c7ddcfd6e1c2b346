package connector

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

// datagenState is a DatagenReader's snapshot: with the header, the rows its task
// produced and the seed of its random values, e.g.
//
//	{"version":1,"connector":"datagen","table":"orders","task":0,"tasks":1,
//	 "seed":6510615555426900570,"seeded":false,"rows":4096}
type datagenState struct {
	stateHeader
	Seed   uint64 `json:"seed"`
	Seeded bool   `json:"seeded"` // the seed is the 'seed' option, not drawn at open
	Rows   int64  `json:"rows"`
	// Lanes, when not null (even when empty), are the rows left to this task of a
	// source restored at another parallelism (see rescaleDatagen); Rows then counts
	// what it produced of them.
	Lanes []lane `json:"lanes"`
}

// lane is a run of a datagen source's rows: the global indexes next, next+step, ...
// below end (-1: unbounded), with the values of seed. A task reads the lane (task,
// tasks) of its split; one restored at another parallelism reads the lanes the old
// tasks had left, split or merged.
type lane struct {
	Seed uint64 `json:"seed"`
	Next uint64 `json:"next"`
	Step uint64 `json:"step"`
	End  int64  `json:"end"`
}

// left is the number of rows left in the lane.
func (l lane) left() int64 {
	switch {
	case l.End < 0:
		return math.MaxInt64
	case int64(l.Next) >= l.End:
		return 0
	}
	return (l.End - int64(l.Next) + int64(l.Step) - 1) / int64(l.Step)
}

// rescaleDatagen redistributes the snapshots of a datagen table's tasks over tasks new
// ones: the rows each old task had left become lanes, split in two (even and odd rows
// of a lane) until there is one for every new task, and dealt out so the new tasks'
// shares are even. Every row is still produced once, with the values it had.
func rescaleDatagen(t *planner.Table, states [][]byte, tasks int) ([][]byte, error) {
	probe, err := openDatagen(SourceSpec{Table: t, Mem: memory.DefaultAllocator, Tasks: 1, BatchSize: 1, Now: time.Now, Location: time.UTC})
	if err != nil {
		return nil, err
	}
	probe.Close()
	var lanes []lane
	var first datagenState
	for i, data := range states {
		var s datagenState
		if err := decodeState(data, stateHeader{Version: stateVersion, Connector: "datagen", Table: t.Name, Task: i, Tasks: len(states)}, &s); err != nil {
			return nil, err
		}
		if i == 0 {
			first = s
		}
		if s.Lanes != nil {
			lanes = append(lanes, s.Lanes...)
		} else {
			n := uint64(len(states))
			lanes = append(lanes, lane{Seed: s.Seed, Next: uint64(i) + uint64(s.Rows)*n, Step: n, End: probe.limit})
		}
	}
	lanes = slices.DeleteFunc(lanes, func(l lane) bool { return l.left() == 0 })
	for len(lanes) < tasks {
		i := 0
		for k := range lanes {
			if lanes[k].left() > lanes[i].left() {
				i = k
			}
		}
		if len(lanes) == 0 || lanes[i].left() < 2 {
			break
		}
		l := lanes[i]
		lanes[i] = lane{Seed: l.Seed, Next: l.Next, Step: 2 * l.Step, End: l.End}
		lanes = append(lanes, lane{Seed: l.Seed, Next: l.Next + l.Step, Step: 2 * l.Step, End: l.End})
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
		s := datagenState{stateHeader: stateHeader{Version: stateVersion, Connector: "datagen", Table: t.Name, Task: task, Tasks: tasks},
			Seed: first.Seed, Seeded: first.Seeded, Lanes: append([]lane{}, shares[task]...)}
		if out[task], err = json.Marshal(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (d *DatagenReader) header() stateHeader { return newStateHeader("datagen", d.table, d.split) }

// Snapshot returns the position after the last batch returned; see exec.Snapshotter.
func (d *DatagenReader) Snapshot(context.Context, int64) ([]byte, error) {
	return json.Marshal(datagenState{stateHeader: d.header(), Seed: d.seed, Seeded: d.seeded, Rows: d.pos, Lanes: slices.Clone(d.lanes)})
}

// Restore makes a reader that has not been read yet continue from a snapshot of the
// same table and task: it produces the rows that followed the snapshot, with the same
// values (but unseeded timestamps, which follow the clock); see exec.Restorer.
func (d *DatagenReader) Restore(state []byte) error {
	h := d.header()
	var s datagenState
	if err := decodeState(state, h, &s); err != nil {
		return err
	}
	switch {
	case s.Seeded != d.seeded || (d.seeded && s.Seed != d.seed):
		return h.Err("the state is of another 'seed'")
	case s.Rows < 0 || (s.Lanes == nil && d.limit >= 0 && s.Rows > d.limit):
		return h.Err("position %d is out of range", s.Rows)
	}
	for _, l := range s.Lanes {
		if l.Step == 0 || (d.seeded && l.Seed != d.seed) {
			return h.Err("corrupt state: lane %+v", l)
		}
	}
	d.seed, d.pos, d.lanes = s.Seed, s.Rows, s.Lanes
	return nil
}
