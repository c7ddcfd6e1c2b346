package exec

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

var sourceSchema = arrow.NewSchema([]arrow.Field{{Name: "src", Type: arrow.PrimitiveTypes.Int64}}, nil)

// pacedReader emits batches of one row holding its task number, one per interval, and
// reports how many it emitted as its position.
type pacedReader struct {
	mem      memory.Allocator
	task     int64
	interval time.Duration
	rows     int64
	limit    int64
}

func (r *pacedReader) Next(ctx context.Context) (Batch, error) {
	if r.rows >= r.limit {
		return Batch{}, io.EOF
	}
	select {
	case <-time.After(r.interval):
	case <-ctx.Done():
		return Batch{}, ctx.Err()
	}
	b := array.NewInt64Builder(r.mem)
	defer b.Release()
	b.Append(r.task)
	col := b.NewArray()
	defer col.Release()
	r.rows++
	return Batch{Rec: array.NewRecord(sourceSchema, []arrow.Array{col}, 1)}, nil
}

func (r *pacedReader) Snapshot(context.Context, int64) ([]byte, error) { return json.Marshal(r.rows) }
func (r *pacedReader) Close() error                                    { return nil }

// counter counts rows by source; its snapshot is the counts.
type counter struct{ counts map[int64]int64 }

func (c *counter) Process(_ context.Context, _ int, b Batch) error {
	for _, v := range b.Rec.Column(0).(*array.Int64).Int64Values() {
		c.counts[v]++
	}
	return nil
}

func (c *counter) Snapshot(context.Context, int64) ([]byte, error) { return json.Marshal(c.counts) }

// runAlignment runs a fast and a slow source into one counting task, takes checkpoint 1
// while the slow source is between rows, and returns what the sources and the counter
// snapshotted.
func runAlignment(t *testing.T, aligned bool) (positions [2]int64, counts map[int64]int64) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := &Graph{Mem: mem, Stages: []Stage{
		{Name: "sources", Parallelism: 2,
			NewReader: func(task int) (Reader, error) {
				interval := time.Millisecond // the fast source
				if task == 1 {
					interval = 400 * time.Millisecond // the slow one: its barrier comes late
				}
				return &pacedReader{mem: mem, task: int64(task), interval: interval, limit: map[int]int64{0: 600, 1: 3}[task]}, nil
			},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) { return nil, nil }},
		{Name: "count", Parallelism: 1, Inputs: []Input{{Stage: 0, Partition: Gather}},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) {
				return []Operator{&counter{counts: map[int64]int64{}}}, nil
			}},
	}}
	states := runWithOneCheckpoint(t, g, aligned, 100*time.Millisecond)
	for task := 0; task < 2; task++ {
		json.Unmarshal(states[TaskID{0, task}][0], &positions[task])
	}
	json.Unmarshal(states[TaskID{1, 0}][0], &counts)
	return positions, counts
}

// In EXACTLY_ONCE mode the counter's snapshot holds exactly the rows before each
// source's barrier: restoring it with the sources' positions loses and repeats nothing.
func TestAlignedSnapshotHoldsNoRecordAfterTheBarrier(t *testing.T) {
	positions, counts := runAlignment(t, true)
	if counts[0] != positions[0] || counts[1] != positions[1] {
		t.Errorf("snapshot counts %v, source positions %v: they must match", counts, positions)
	}
}

// In AT_LEAST_ONCE mode the fast input keeps flowing while the slow one's barrier is on
// its way, so the snapshot holds records from after the fast source's barrier.
func TestUnalignedSnapshotDoesNotBlockTheFastInput(t *testing.T) {
	positions, counts := runAlignment(t, false)
	if counts[0] <= positions[0] {
		t.Errorf("fast input: %d counted at the snapshot, position %d at its barrier: it was blocked", counts[0], positions[0])
	}
	if counts[1] != positions[1] {
		t.Errorf("slow input: %d counted, position %d", counts[1], positions[1])
	}
}

func (r *pacedReader) Restore(state []byte) error { return json.Unmarshal(state, &r.rows) }

// failAfter counts rows and fails once it has seen limit of them.
type failAfter struct {
	seen, limit int64
}

func (f *failAfter) Process(_ context.Context, _ int, b Batch) error {
	f.seen += int64(b.Len())
	if f.limit > 0 && f.seen >= f.limit {
		return errors.New("injected failure")
	}
	return nil
}

// Without checkpoints a restarted graph's sources continue from the positions they had
// when the failed run closed them: nothing is replayed.
func TestSourcesContinueWithoutCheckpoints(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var sink *failAfter
	graph := func(limit int64) *Graph {
		return &Graph{Mem: mem, Stages: []Stage{{Name: "source", Parallelism: 1,
			NewReader: func(int) (Reader, error) {
				return &pacedReader{mem: mem, interval: time.Microsecond, limit: 100}, nil
			},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) {
				sink = &failAfter{limit: limit}
				return []Operator{sink}, nil
			}}}}
	}
	positions := map[TaskID][][]byte{}
	record := func(task TaskID, pos []byte) { positions[task] = [][]byte{pos} }
	if err := graph(30).Run(context.Background(), &Checkpointing{Positions: record}); err == nil {
		t.Fatal("the first run did not fail")
	}
	first := sink.seen
	if err := graph(0).Run(context.Background(), &Checkpointing{Restored: positions}); err != nil {
		t.Fatal(err)
	}
	if first+sink.seen != 100 {
		t.Errorf("rows seen: %d before the failure and %d after, want 100 in all", first, sink.seen)
	}
}

// runWithOneCheckpoint runs g to its end, triggering checkpoint 1 after delay, and
// returns each task's snapshot of it.
func runWithOneCheckpoint(t *testing.T, g *Graph, aligned bool, delay time.Duration) map[TaskID][][]byte {
	t.Helper()
	triggers := make(chan int64, 1)
	var mu sync.Mutex
	states := map[TaskID][][]byte{}
	cp := &Checkpointing{Aligned: aligned, Triggers: triggers, Ack: func(task TaskID, id int64, st [][]byte, _ TaskStats) {
		mu.Lock()
		states[task] = st
		mu.Unlock()
	}}
	go func() {
		time.Sleep(delay)
		triggers <- 1
	}()
	if err := g.Run(context.Background(), cp); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return states
}
