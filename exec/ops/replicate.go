package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// replicate emits each row as many times as its count column says, in order and with
// its kind: a retraction of a row counted n times retracts its n copies.
type replicate struct {
	mem   memory.Allocator
	count int
	out   exec.Output
	sel   []int32
}

var _ exec.Operator = (*replicate)(nil)

// NewReplicate returns the operator for a plan's Replicate node.
func NewReplicate(mem memory.Allocator, n *planner.Replicate, out exec.Output) exec.Operator {
	return &replicate{mem: mem, count: n.Count, out: out}
}

func (r *replicate) Process(ctx context.Context, _ int, b exec.Batch) error {
	counts, ok := b.Rec.Column(r.count).(*array.Int64)
	if !ok {
		return fmt.Errorf("replicate: column %d is %s, not BIGINT", r.count, b.Rec.Column(r.count).DataType())
	}
	r.sel = r.sel[:0]
	for i := range b.Len() {
		for range max(counts.Value(i), 0) {
			r.sel = append(r.sel, int32(i))
		}
	}
	if len(r.sel) == 0 {
		return nil
	}
	out := exec.Batch{Rec: exec.TakeRecord(r.mem, b.Rec, r.sel), Origin: exec.Selected(b.Origin, r.sel)}
	defer out.Release()
	if b.Kinds != nil {
		out.Kinds = make([]exec.RowKind, len(r.sel))
		for k, i := range r.sel {
			out.Kinds[k] = b.Kinds[i]
		}
	}
	return r.out.Emit(ctx, out)
}
