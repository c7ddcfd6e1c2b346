package connector

import (
	"context"
	"encoding/json"
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
}

func (d *DatagenReader) header() stateHeader { return newStateHeader("datagen", d.table, d.split) }

// Snapshot returns the position after the last batch returned; see exec.Snapshotter.
func (d *DatagenReader) Snapshot(context.Context, int64) ([]byte, error) {
	return json.Marshal(datagenState{stateHeader: d.header(), Seed: d.seed, Seeded: d.seeded, Rows: d.pos})
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
	case s.Rows < 0 || (d.limit >= 0 && s.Rows > d.limit):
		return h.Err("position %d is out of range", s.Rows)
	}
	d.seed, d.pos = s.Seed, s.Rows
	return nil
}
