package exec

import (
	"context"
	"encoding/json"
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
	states := runWithOneCheckpoint(t, g, true, 120*time.Millisecond)
	if op.counts != [2]int64{800, 16} {
		t.Errorf("rows by input: %v, want [800 16]", op.counts)
	}
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

// A stage feeding several others sends each of them all its rows, whatever their
// partitioning, also when it feeds both inputs of one stage (a self-join); an aligned
// snapshot of every consumer holds exactly the rows before the source's barrier.
func TestStageFeedsSeveralStages(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const limit = 300
	sides := make([]*sideCounter, 5) // by consumer task: forward 0, 1; hash 0, 1; join
	consumer := func(name string, parallelism, first int, inputs ...Input) Stage {
		return Stage{Name: name, Parallelism: parallelism, Inputs: inputs,
			NewChain: func(task int, _ Output, _ [][]byte) ([]Operator, error) {
				sides[first+task] = &sideCounter{}
				return []Operator{sides[first+task]}, nil
			}}
	}
	g := &Graph{Mem: mem, Stages: []Stage{
		{Name: "source", Parallelism: 2,
			NewReader: func(task int) (Reader, error) {
				return &pacedReader{mem: mem, task: int64(task), interval: time.Millisecond, limit: limit}, nil
			},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) { return nil, nil }},
		consumer("forward", 2, 0, Input{Stage: 0, Partition: Forward}),
		consumer("hash", 2, 2, Input{Stage: 0, Partition: Hash, HashKeys: []int{0}}),
		consumer("self-join", 1, 4, Input{Stage: 0, Partition: Gather}, Input{Stage: 0, Partition: Gather}),
	}}
	states := runWithOneCheckpoint(t, g, true, 100*time.Millisecond)
	total := func(cs ...*sideCounter) (sum [2]int64) {
		for _, c := range cs {
			sum[0] += c.counts[0]
			sum[1] += c.counts[1]
		}
		return sum
	}
	for name, got := range map[string][2]int64{
		"forward": total(sides[0], sides[1]), "hash": total(sides[2], sides[3]), "self-join": total(sides[4]),
	} {
		want := [2]int64{2 * limit, 0}
		if name == "self-join" {
			want[1] = 2 * limit
		}
		if got != want {
			t.Errorf("%s got rows %v, want %v", name, got, want)
		}
	}
	var before int64
	for task := 0; task < 2; task++ {
		var pos int64
		json.Unmarshal(states[TaskID{0, task}][0], &pos)
		before += pos
	}
	if before == 0 || before == 2*limit {
		t.Fatalf("the checkpoint came at %d rows: the test needs one mid-stream", before)
	}
	snapshot := func(id TaskID) (c [2]int64) {
		json.Unmarshal(states[id][0], &c)
		return c
	}
	fw, hs := snapshot(TaskID{1, 0}), snapshot(TaskID{1, 1})
	h0, h1 := snapshot(TaskID{2, 0}), snapshot(TaskID{2, 1})
	if fw[0]+hs[0] != before || h0[0]+h1[0] != before || snapshot(TaskID{3, 0}) != [2]int64{before, before} {
		t.Errorf("snapshots forward %v %v, hash %v %v, join %v: each must hold the %d rows before the barrier",
			fw, hs, h0, h1, snapshot(TaskID{3, 0}), before)
	}
}
