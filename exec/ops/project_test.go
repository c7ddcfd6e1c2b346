package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// passRow is a projection that passes a ROW column through and picks one of its
// fields, over a batch whose types are values of their own (as a source's are).
func passRow(t testing.TB, mem memory.Allocator, out exec.Output) (exec.Operator, arrow.Record) {
	row := planner.RowType([]planner.Column{{Name: "a", Type: planner.TypeBigInt}, {Name: "b", Type: planner.TypeString}})
	schema := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "r", Type: row}}
	node := &planner.Project{Input: input{schema: schema}, Names: []string{"r", "a"}, Exprs: []planner.Expr{
		&planner.ColumnRef{Index: 1, Name: "r", T: row},
		&planner.Call{Fn: planner.FnField, Args: []planner.Expr{&planner.ColumnRef{Index: 1, Name: "r", T: row},
			&planner.Literal{Value: int32(0), T: planner.TypeInt}}, T: planner.TypeBigInt},
	}}
	op, err := NewProject(mem, &expr.Env{}, node, out)
	if err != nil {
		t.Fatal(err)
	}
	// Closed before the caller's allocator check, which was registered first.
	t.Cleanup(func() { op.(exec.Closer).Close() })
	rec, _, err := array.RecordFromJSON(mem, exec.ArrowSchema(schema), // a schema of its own
		strings.NewReader(`[{"k": 1, "r": {"a": 10, "b": "x"}}, {"k": 2, "r": null}, {"k": 3, "r": {"a": 30, "b": "z"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	return op, rec
}

func TestProjectPassesRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	var got []string
	var types []arrow.DataType
	op, rec := passRow(t, mem, exec.OutputFunc(func(_ context.Context, b exec.Batch) error {
		got = append(got, b.Rec.Column(0).String()+" "+b.Rec.Column(1).String())
		types = append(types, b.Rec.Schema().Field(0).Type)
		return nil
	}))
	defer rec.Release()
	for range 2 {
		if err := op.Process(context.Background(), 0, exec.Batch{Rec: rec}); err != nil {
			t.Fatal(err)
		}
	}
	want := `{[10 (null) 30] ["x" (null) "z"]} [10 (null) 30]`
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("got %q, want twice %q", got, want)
	}
	// The output's schema took the batch's ROW type, so that records check it by
	// pointer rather than field by field.
	if types[1] != rec.Column(1).DataType() {
		t.Errorf("the output's ROW type is %p, not the input's %p", types[1], rec.Column(1).DataType())
	}
}

func BenchmarkProjectPassesRow(b *testing.B) {
	mem := memory.NewGoAllocator()
	op, rec := passRow(b, mem, exec.OutputFunc(func(context.Context, exec.Batch) error { return nil }))
	defer rec.Release()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := op.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
			b.Fatal(err)
		}
	}
}
