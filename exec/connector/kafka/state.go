package kafka

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"slices"

	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
	"github.com/twmb/franz-go/pkg/kerr"
)

// stateVersion is the version of this package's snapshot encodings.
const stateVersion = 1

// stateHeader opens every snapshot of this package, as package connector's do: whose
// state it is.
type stateHeader struct {
	Version   int    `json:"version"`
	Connector string `json:"connector"`
	Table     string `json:"table"`
	Task      int    `json:"task"`
	Tasks     int    `json:"tasks"`
}

// stateError is a connector.ErrInvalidState about one table's source or sink.
type stateError struct{ msg string }

func (e *stateError) Error() string { return e.msg }
func (e *stateError) Unwrap() error { return connector.ErrInvalidState }

func (h stateHeader) err(what string, f string, args ...any) error {
	return &stateError{msg: fmt.Sprintf("table %s: cannot restore the kafka %s: ", h.Table, what) + fmt.Sprintf(f, args...)}
}

// decodeState checks that data is a snapshot of what want describes and decodes it
// into v, a struct embedding stateHeader.
func decodeState(data []byte, want stateHeader, what string, v any) error {
	var got stateHeader
	if err := json.Unmarshal(data, &got); err != nil {
		return want.err(what, "corrupt state: %v", err)
	}
	switch {
	case got.Version != want.Version:
		return want.err(what, "state version %d is not supported (want %d)", got.Version, want.Version)
	case got.Connector != want.Connector || got.Table != want.Table:
		return want.err(what, "the state is of the %s connector of table %s", got.Connector, got.Table)
	case got.Task != want.Task || got.Tasks != want.Tasks:
		return want.err(what, "the state is of task %d of %d, not of task %d of %d", got.Task, got.Tasks, want.Task, want.Tasks)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return want.err(what, "corrupt state: %v", err)
	}
	return nil
}

// sourceState is a Reader's snapshot: the next offset of each of its partitions and,
// bounded, where each ends (as resolved when the job first started), e.g.
//
//	{"version":1,"connector":"kafka","table":"orders","task":0,"tasks":2,
//	 "partitions":[{"topic":"orders","partition":0,"offset":4711,"end":9000}]}
type sourceState struct {
	stateHeader
	Partitions []partitionState `json:"partitions"`
}

type partitionState struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	End       int64  `json:"end"` // -1: unbounded
	// Upserts are an upsert-kafka source's last value of each key of the partition,
	// [key, value] pairs in key order (base64 in JSON).
	Upserts [][2][]byte `json:"upserts,omitempty"`
	// UpsertInfo are, with metadata columns, the metadata of the records that hold
	// them, in the same order (absent in states of older versions, and then each key's
	// retraction carries the metadata of the record that retracts it).
	UpsertInfo []recordInfo `json:"upsert_info,omitempty"`
}

func (r *Reader) header() stateHeader {
	return stateHeader{Version: stateVersion, Connector: "kafka", Table: r.table, Task: r.task, Tasks: r.tasks}
}

// Snapshot returns the position after the last batch returned and remembers it for
// CheckpointComplete; see exec.Snapshotter.
func (r *Reader) Snapshot(_ context.Context, id int64) ([]byte, error) {
	if r.closed {
		return nil, errClosed
	}
	s := sourceState{stateHeader: r.header(), Partitions: make([]partitionState, len(r.parts))}
	offsets := make(map[topicPartition]int64, len(r.parts))
	for i, p := range r.parts {
		s.Partitions[i] = partitionState{Topic: p.Topic, Partition: p.Partition, Offset: p.offset, End: p.end}
		if p.last != nil {
			ups := make([][2][]byte, 0, len(p.last))
			for k, v := range p.last {
				ups = append(ups, [2][]byte{[]byte(k), v})
			}
			slices.SortFunc(ups, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
			s.Partitions[i].Upserts = ups
			if p.lastInfo != nil {
				infos := make([]recordInfo, len(ups))
				for j, kv := range ups {
					if info := p.lastInfo[string(kv[0])]; info != nil {
						infos[j] = *info
					}
				}
				s.Partitions[i].UpsertInfo = infos
			}
		}
		offsets[p.topicPartition] = p.offset
	}
	if r.group != "" {
		r.snaps = append(r.snaps, offsetsAt{id: id, offsets: offsets})
	}
	return json.Marshal(s)
}

// rescaleSource redistributes the snapshots of a table's source tasks over tasks new
// ones, as readers of that many assign partitions: partition i of the topics'
// partitions, in order, is task i % tasks's. Each partition keeps its offset and end.
func rescaleSource(t *planner.Table, states [][]byte, tasks int) ([][]byte, error) {
	// Only the topics matter here (an upsert-kafka table has other options).
	o, err := connector.NewOptions(t, nil, false, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	names, err := topics(o)
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, n := range names {
		order[n] = i
	}
	var all []partitionState
	for i, data := range states {
		var s sourceState
		want := stateHeader{Version: stateVersion, Connector: "kafka", Table: t.Name, Task: i, Tasks: len(states)}
		if err := decodeState(data, want, "source", &s); err != nil {
			return nil, err
		}
		for _, p := range s.Partitions {
			if _, ok := order[p.Topic]; !ok {
				return nil, want.err("source", "the state names topic %s, which the table no longer reads", p.Topic)
			}
		}
		all = append(all, s.Partitions...)
	}
	slices.SortFunc(all, func(a, b partitionState) int {
		if c := cmp.Compare(order[a.Topic], order[b.Topic]); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	out := make([][]byte, tasks)
	for task := range out {
		s := sourceState{stateHeader: stateHeader{Version: stateVersion, Connector: "kafka", Table: t.Name, Task: task, Tasks: tasks}, Partitions: []partitionState{}}
		for i, p := range all {
			if i%tasks == task {
				s.Partitions = append(s.Partitions, p)
			}
		}
		if out[task], err = json.Marshal(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Restore makes a reader that has not been read yet continue from a snapshot of the
// same table and task: each partition from its snapshotted offset, bounded by its
// snapshotted end. A partition the snapshot does not name (added to the topic since)
// keeps the offset resolved at open. See exec.Restorer.
func (r *Reader) Restore(state []byte) error {
	if r.closed {
		return errClosed
	}
	if r.started {
		return fmt.Errorf("table %s: cannot restore a kafka source that has been read", r.table)
	}
	h := r.header()
	var s sourceState
	if err := decodeState(state, h, "source", &s); err != nil {
		return err
	}
	seen := map[topicPartition]bool{}
	for _, ps := range s.Partitions {
		tp := topicPartition{ps.Topic, ps.Partition}
		p := r.byTP[tp]
		switch {
		case p == nil:
			return h.err("source", "the state names partition %s, which is not this task's", tp)
		case seen[tp]:
			return h.err("source", "corrupt state: partition %s twice", tp)
		case (ps.End >= 0) != r.bounded:
			return h.err("source", "the state is of a source with another 'scan.bounded.mode'")
		case ps.Offset < 0 || ps.End < -1:
			return h.err("source", "corrupt state: partition %s at offset %d, end %d", tp, ps.Offset, ps.End)
		}
		seen[tp] = true
		p.offset, p.end = ps.Offset, ps.End
		switch {
		case p.last != nil:
			clear(p.last)
			for _, kv := range ps.Upserts {
				p.last[string(kv[0])] = kv[1]
			}
			if ps.UpsertInfo != nil && len(ps.UpsertInfo) != len(ps.Upserts) {
				return h.err("source", "corrupt state: partition %s has %d keys and metadata of %d", tp, len(ps.Upserts), len(ps.UpsertInfo))
			}
			if p.lastInfo != nil {
				clear(p.lastInfo)
				for j, info := range ps.UpsertInfo {
					info.Topic, info.Partition = tp.Topic, tp.Partition
					p.lastInfo[string(ps.Upserts[j][0])] = &info
				}
			}
		case len(ps.Upserts) > 0:
			return h.err("source", "the state is of an upsert-kafka source")
		}
	}
	return nil
}

// CheckpointComplete commits the offsets the snapshot of checkpoint id captured to
// 'properties.group.id', for monitoring: recovery always starts from the checkpoint.
// A retriable failure (the coordinator moving) is left to the next checkpoint; others
// fail the job. See exec.CommitListener.
func (r *Reader) CheckpointComplete(ctx context.Context, id int64) error {
	var offsets map[topicPartition]int64
	i := 0
	for ; i < len(r.snaps) && r.snaps[i].id <= id; i++ {
		offsets = r.snaps[i].offsets
	}
	r.snaps = append(r.snaps[:0], r.snaps[i:]...)
	if offsets == nil || r.closed {
		return nil
	}
	err := commitOffsets(ctx, r.admin, r.group, r.ids, offsets)
	if ke, ok := errors.AsType[*kerr.Error](err); ok && ke.Retriable {
		return nil // the next completed checkpoint commits newer offsets
	}
	if err != nil {
		return tableErr(r.table, err)
	}
	return nil
}
