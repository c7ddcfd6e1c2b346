package ops

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

func TestValuesEmitsOnceAndRestoresDone(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	str := planner.Type{Kind: planner.String}
	n := &planner.Values{Rows: 2, Names: []string{"id", "name"}, Tuples: [][]planner.Expr{
		{&planner.Literal{Value: int32(1), T: planner.TypeInt}, &planner.Literal{Value: "a", T: str}},
		{&planner.Literal{Value: int32(2), T: planner.TypeInt}, &planner.Literal{T: str}},
	}}
	env := &expr.Env{}
	r := NewValues(mem, env, n)
	b, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := b.Rec.MarshalJSON()
	b.Release()
	if want := `[{"id":1,"name":"a"},{"id":2,"name":null}]`; strings.ReplaceAll(string(got), "\n", "") != want {
		t.Errorf("values = %s, want %s", got, want)
	}
	state, _ := r.(exec.Snapshotter).Snapshot(context.Background(), 1)
	if _, err := r.Next(context.Background()); err != io.EOF {
		t.Errorf("second Next: %v, want io.EOF", err)
	}
	// A reader restored from a checkpoint taken after the rows does not emit them again.
	again := NewValues(mem, env, n)
	if err := again.(exec.Restorer).Restore(state); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Next(context.Background()); err != io.EOF {
		t.Errorf("restored Next: %v, want io.EOF", err)
	}
}

func TestUnionRelabelsBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	left := &planner.Values{Names: []string{"x"}, Tuples: [][]planner.Expr{{&planner.Literal{Value: int32(1), T: planner.Type{Kind: planner.Int, NotNull: true}}}}}
	n := &planner.Union{Inputs: []planner.Node{left, left}}
	var names []string
	var rows int64
	op := NewUnion(n, exec.OutputFunc(func(_ context.Context, b exec.Batch) error {
		names = append(names, b.Rec.Schema().Field(0).Name)
		rows += b.Rec.NumRows()
		return nil
	}))
	in, _, err := array.RecordFromJSON(mem, arrow.NewSchema([]arrow.Field{{Name: "other", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil),
		strings.NewReader(`[{"other": 5}, {"other": null}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	for i := range 2 {
		if err := op.Process(context.Background(), i, exec.Batch{Rec: in}); err != nil {
			t.Fatal(err)
		}
	}
	if rows != 4 || names[0] != "x" || names[1] != "x" {
		t.Errorf("union emitted %d rows named %v, want 4 named x", rows, names)
	}
}
