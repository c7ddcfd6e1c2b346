package exec

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// committer records the checkpoints it was told completed, and snapshots nothing.
type committer struct{ completed []int64 }

func (c *committer) Process(context.Context, int, Batch) error       { return nil }
func (c *committer) Snapshot(context.Context, int64) ([]byte, error) { return nil, nil }
func (c *committer) CheckpointComplete(_ context.Context, id int64) error {
	c.completed = append(c.completed, id)
	return nil
}

// TestFinalCheckpointNotifiesBeforeRunReturns: once every task finished, Run takes the
// final checkpoint through Final and tells the commit listeners of it before it returns.
func TestFinalCheckpointNotifiesBeforeRunReturns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sink := &committer{}
	g := &Graph{Mem: mem, Stages: []Stage{
		{Name: "source", Parallelism: 1,
			NewReader: func(int) (Reader, error) {
				return &pacedReader{mem: mem, interval: time.Millisecond, limit: 5}, nil
			},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) { return nil, nil }},
		{Name: "sink", Parallelism: 1, Inputs: []Input{{Stage: 0, Partition: Gather}},
			NewChain: func(int, Output, [][]byte) ([]Operator, error) { return []Operator{sink}, nil }},
	}}
	triggers := make(chan int64)
	acks := make(chan TaskID, 2)
	cp := &Checkpointing{Aligned: true, Triggers: triggers,
		Ack: func(task TaskID, id int64, _ [][]byte, _ TaskStats) { acks <- task },
		Final: func(ctx context.Context) (int64, error) {
			triggers <- 7 // every task finished: each acknowledges at once
			<-acks
			<-acks
			return 7, nil
		}}
	if err := g.Run(context.Background(), cp); err != nil {
		t.Fatal(err)
	}
	if len(sink.completed) != 1 || sink.completed[0] != 7 {
		t.Errorf("the sink was told of %v, want the final checkpoint 7", sink.completed)
	}
}
