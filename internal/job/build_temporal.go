package job

import (
	"context"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/ops"
	"github.com/streamsql/streamsql/planner"
)

// temporalJoin starts the stage of an event-time temporal join: the left rows and the
// versions go to the task of their key (the versioned table's primary key).
func (b *builder) temporalJoin(n *planner.TemporalJoin) (int, error) {
	left, err := b.node(n.Left)
	if err != nil {
		return 0, err
	}
	right, err := b.node(n.Right)
	if err != nil {
		return 0, err
	}
	inputs := []exec.Input{{Stage: left, Partition: exec.Hash, HashKeys: n.LeftKeys}, {Stage: right, Partition: exec.Hash, HashKeys: n.RightKeys}}
	stage := b.startStage(exec.Stage{Name: "TemporalJoin", Parallelism: TasksOf(b.j.env.Connectors, n, b.j.settings.Parallelism), Inputs: inputs})
	slot := b.meaningSlot(n)
	keyed := b.keyedState(slot.UID, stage)
	b.addStateful(stage, slot, func(_ context.Context, task int, out exec.Output) (exec.Operator, error) {
		return ops.NewTemporalJoin(b.mem, b.env, n, out, keyed(task))
	})
	b.name(stage, n.Describe())
	return stage, nil
}
