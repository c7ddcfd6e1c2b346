package exec

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// sideCounter counts rows by the operator input they arrived on.
type sideCounter struct{ counts [2]int64 }

func (c *sideCounter) Process(_ context.Context, in int, b Batch) error {
	c.counts[in] += int64(b.Len())
	return nil
}

func (c *sideCounter) Snapshot(context.Context, int64) ([]byte, error) { return json.Marshal(c.counts) }

// A stage with two input stages (a join's) gets each one's rows on its own operator
// input, and an aligned snapshot holds exactly the rows before both inputs' barriers.
func TestTwoInputStageAlignsBothInputs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	source := func(interval time.Duration, limit int64) Stage {
		return Stage{Name: "source", Parallelism: 2,
			NewReader: func(task int) (Reader, error) {
				return &pacedReader{mem: mem, task: int64(task), interval: interval, limit: limit}, nil
			},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) { return nil, nil }}
	}
	var op *sideCounter
	g := &Graph{Mem: mem, Stages: []Stage{
		source(time.Millisecond, 400),
		source(50*time.Millisecond, 8),
		{Name: "join", Parallelism: 1, Inputs: []Input{{Stage: 0, Partition: Gather}, {Stage: 1, Partition: Gather}},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) {
				op = &sideCounter{}
				return []Operator{op}, nil
			}},
	}}
	triggers := make(chan int64, 1)
	var mu sync.Mutex
	states := map[TaskID][][]byte{}
	cp := &Checkpointing{Aligned: true, Triggers: triggers, Ack: func(task TaskID, id int64, st [][]byte, _ TaskStats) {
		mu.Lock()
		states[task] = st
		mu.Unlock()
	}}
	go func() {
		time.Sleep(120 * time.Millisecond)
		triggers <- 1
	}()
	if err := g.Run(context.Background(), cp); err != nil {
		t.Fatal(err)
	}
	if op.counts != [2]int64{800, 16} {
		t.Errorf("rows by input: %v, want [800 16]", op.counts)
	}
	mu.Lock()
	defer mu.Unlock()
	var want [2]int64
	for s := 0; s < 2; s++ {
		for task := 0; task < 2; task++ {
			var pos int64
			json.Unmarshal(states[TaskID{s, task}][0], &pos)
			want[s] += pos
		}
	}
	var got [2]int64
	json.Unmarshal(states[TaskID{2, 0}][0], &got)
	if got != want || want[1] == 0 {
		t.Errorf("snapshot counts %v, source positions %v: they must match", got, want)
	}
}
