package planner

import (
	"strings"
	"testing"
)

func TestPicksBeforeFilter(t *testing.T) {
	row := RowType([]Column{{Name: "a", Type: TypeInt}, {Name: "b", Type: TypeString}})
	x := &Scan{Table: &Table{Name: "t", Columns: []TableColumn{{Name: "k", Type: TypeInt}, {Name: "r", Type: row}, {Name: "z", Type: TypeString}}}}
	ref := func(i int) *ColumnRef { return &ColumnRef{Index: i, Name: x.Schema()[i].Name, T: x.Schema()[i].Type} }
	field := &Call{Fn: FnField, Args: []Expr{ref(1), &Literal{Value: int32(1), T: TypeInt}}, T: TypeString}
	cond := &Call{Fn: FnGt, Args: []Expr{ref(0), &Literal{Value: int32(2), T: TypeInt}}, T: TypeBoolean}
	p := &Project{Input: &Filter{Input: x, Cond: cond}, Exprs: []Expr{field, ref(2)}, Names: []string{"b", "z"}}
	n, ok := PicksBeforeFilter(p)
	if !ok {
		t.Fatal("a projection of picks over a filter was not swapped")
	}
	got := describeTree(n)
	want := "Project(select=[b, z])|Filter(where=[(k > 2)])|Project(select=[r.b AS b, z, k])|"
	if !strings.HasPrefix(got, want) {
		t.Errorf("swapped plan:\n%s\nwant it to start\n%s", got, want)
	}
	if s := n.Schema(); len(s) != 2 || s[0].Name != "b" || s[1].Name != "z" {
		t.Errorf("schema %v, want (b, z)", s)
	}
	// A condition on a picked column reads the pick: no extra column, no projection above.
	p.Input.(*Filter).Cond = &Call{Fn: FnIsNotNull, Args: []Expr{ref(2)}, T: TypeBoolean}
	if n, _ := PicksBeforeFilter(p); !strings.HasPrefix(describeTree(n), "Project(select=[b, z])|Filter(where=[(z IS NOT NULL)])|Project(select=[r.b AS b, z])|") {
		t.Errorf("swapped plan: %s", describeTree(n))
	}
	// An expression that can fail (or costs) stays after the filter; its columns are
	// picked before it.
	p.Exprs[1] = &Call{Fn: FnDiv, Args: []Expr{ref(0), ref(0)}, T: TypeInt}
	n, ok = PicksBeforeFilter(p)
	if !ok {
		t.Fatal("a projection reading picks over a filter was not swapped")
	}
	want = "Project(select=[b, (k / k) AS z])|Filter(where=[(z IS NOT NULL)])|Project(select=[r.b AS b, k, z])|"
	if got := describeTree(n); !strings.HasPrefix(got, want) {
		t.Errorf("swapped plan:\n%s\nwant it to start\n%s", got, want)
	}
	// Picks of every column as they are leave nothing behind.
	p.Exprs = []Expr{ref(0), ref(1), ref(2)}
	p.Names = []string{"k", "r", "z"}
	if n, ok := PicksBeforeFilter(p); ok {
		t.Errorf("an identity was swapped: %s", describeTree(n))
	}
}

func TestMergePicks(t *testing.T) {
	row := RowType([]Column{{Name: "a", Type: TypeInt}, {Name: "b", Type: TypeString}})
	x := &Scan{Table: &Table{Name: "t", Columns: []TableColumn{{Name: "k", Type: TypeInt}, {Name: "r", Type: row}}}}
	ref := func(i int) *ColumnRef { return &ColumnRef{Index: i, Name: x.Schema()[i].Name, T: x.Schema()[i].Type} }
	field := func(i int32, name string, t Type) *Call {
		return &Call{Fn: FnField, Args: []Expr{ref(1), &Literal{Value: i, T: TypeInt}}, T: t}
	}
	view := &Project{Input: x, Exprs: []Expr{field(0, "a", TypeInt), field(1, "b", TypeString), ref(0)}, Names: []string{"a", "b", "k"}}
	double := &Call{Fn: FnMul, Args: []Expr{&ColumnRef{Index: 0, Name: "a", T: TypeInt}, &Literal{Value: int32(2), T: TypeInt}}, T: TypeInt}
	p := &Project{Input: view, Exprs: []Expr{double, &ColumnRef{Index: 2, Name: "k", T: TypeInt}}, Names: []string{"a2", "k"}}
	n, ok := MergePicks(p)
	if !ok {
		t.Fatal("a projection over picks was not merged")
	}
	if got, want := describeTree(n), "Project(select=[(r.a * 2) AS a2, k])|"; !strings.HasPrefix(got, want) {
		t.Errorf("merged plan:\n%s\nwant it to start\n%s", got, want)
	}
	view.Exprs[2] = double // not a pick
	if _, ok := MergePicks(p); ok {
		t.Error("a projection over a computation was merged")
	}
}

func describeTree(n Node) string {
	s := n.Describe() + "|"
	for _, c := range n.Children() {
		s += describeTree(c)
	}
	return s
}
