package expr_test

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// Evaluate SELECT id, temperature * 1.8 + 32 FROM t WHERE temperature > 30 over one batch.
func Example() {
	mem := memory.NewGoAllocator()
	schema := planner.Schema{{Name: "id", Type: planner.TypeBigInt}, {Name: "temperature", Type: planner.TypeDouble}}
	rec, _, _ := array.RecordFromJSON(mem, exec.ArrowSchema(schema), strings.NewReader(
		`[{"id":1,"temperature":25},{"id":2,"temperature":35},{"id":3,"temperature":null},{"id":4,"temperature":40}]`))
	defer rec.Release()

	temp := &planner.ColumnRef{Index: 1, Name: "temperature", T: planner.TypeDouble}
	lit := func(v float64) planner.Expr { return &planner.Literal{Value: v, T: planner.TypeDouble} }
	where := &planner.Call{Fn: planner.FnGt, Args: []planner.Expr{temp, lit(30)}, T: planner.TypeBoolean}
	fahrenheit := &planner.Call{Fn: planner.FnAdd, T: planner.TypeDouble, Args: []planner.Expr{
		&planner.Call{Fn: planner.FnMul, Args: []planner.Expr{temp, lit(1.8)}, T: planner.TypeDouble}, lit(32)}}

	filter, _ := expr.CompilePredicate(where, mem, nil)
	project, _ := expr.Compile(fahrenheit, mem, nil)

	sel, _ := filter.Select(rec, nil)
	passed := exec.TakeRecord(mem, rec, sel)
	defer passed.Release()
	out, _ := project.Eval(passed)
	defer out.Release()
	fmt.Println(sel, passed.Column(0), out)
	// Output: [1 3] [2 4] [95 104]
}

// Errors the job must fail on are returned by Eval.
func ExampleEvaluator_Eval() {
	mem := memory.NewGoAllocator()
	schema := planner.Schema{{Name: "s", Type: planner.TypeString}}
	rec, _, _ := array.RecordFromJSON(mem, exec.ArrowSchema(schema), strings.NewReader(`[{"s":" 42 "},{"s":"abc"}]`))
	defer rec.Release()
	s := &planner.ColumnRef{Index: 0, Name: "s", T: planner.TypeString}

	ev, _ := expr.Compile(&planner.Cast{X: s, T: planner.TypeInt}, mem, nil)
	_, err := ev.Eval(rec)
	fmt.Println(err)

	ev, _ = expr.Compile(&planner.Cast{X: s, T: planner.TypeInt, Try: true}, mem, nil)
	out, _ := ev.Eval(rec)
	defer out.Release()
	fmt.Println(out)
	// Output:
	// cannot cast 'abc' to INT
	// [42 (null)]
}
