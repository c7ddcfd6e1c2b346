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
	// An expression that can fail (or costs) stays after the filter.
	p.Exprs[1] = &Call{Fn: FnDiv, Args: []Expr{ref(0), ref(0)}, T: TypeInt}
	if _, ok := PicksBeforeFilter(p); ok {
		t.Error("a division was moved before the filter")
	}
}

func describeTree(n Node) string {
	s := n.Describe() + "|"
	for _, c := range n.Children() {
		s += describeTree(c)
	}
	return s
}
