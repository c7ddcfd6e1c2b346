package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/parser"
)

// Unnest joins each input row with the elements of its ARRAY, MAP or MULTISET column Col
// (FROM t CROSS JOIN UNNEST(t.tags)): a row per element (a multiset's as often as it
// occurs), of the input's columns and then the element's: an ARRAY's ROW element's
// fields, a MAP entry's key and value, or the element itself,
// and with Ordinality its 1-based position. With Outer (LEFT JOIN UNNEST(...) ON TRUE) a
// row whose collection is empty or NULL gives one row, its element columns NULL. Each
// output row has its input row's kind, so an updating input stays updating.
type Unnest struct {
	Input      Node
	Col        int
	Outer      bool
	Ordinality bool
	Elems      Schema // the columns added to the input's
}

// unnestColumns are the columns UNNEST of a t adds, with their default names: a ROW
// element's field names, else EXPR$0, EXPR$1, and ORDINALITY. They are nullable, but for
// the ordinality of an inner join.
func unnestColumns(t Type, ordinality, outer bool) Schema {
	var cols Schema
	switch {
	case t.Kind == Map:
		cols = Schema{{Name: "EXPR$0", Type: t.Elem()}, {Name: "EXPR$1", Type: t.Value()}}
	case t.Kind == Array && t.Elem().Kind == Row:
		cols = append(cols, t.Elem().Fields()...)
	default:
		cols = Schema{{Name: "EXPR$0", Type: t.Elem()}}
	}
	for i := range cols {
		cols[i].Type = cols[i].Type.Nullable()
	}
	if ordinality {
		typ := TypeInt
		typ.NotNull = !outer
		cols = append(cols, Column{Name: "ORDINALITY", Type: typ})
	}
	return cols
}

func (n *Unnest) Schema() Schema {
	return append(append(Schema(nil), n.Input.Schema()...), n.Elems...)
}

func (n *Unnest) Children() []Node { return []Node{n.Input} }
func (n *Unnest) Updating() bool   { return n.Input.Updating() }

func (n *Unnest) Describe() string {
	kind := "INNER"
	if n.Outer {
		kind = "LEFT"
	}
	ord := ""
	if n.Ordinality {
		ord = ", ordinality"
	}
	return fmt.Sprintf("Unnest(joinType=[%s], unnest=[%s]%s)", kind, n.Input.Schema()[n.Col].Name, ord)
}

// unnest plans `left [CROSS | LEFT] JOIN UNNEST(expr) AS alias (columns)`: expr is bound
// over left's columns, and the join's condition must be TRUE for a LEFT JOIN; an inner
// join's condition filters the joined rows.
func (p *Planner) unnest(t *parser.JoinTable, u *parser.UnnestTable, depth int) (Node, *scope, error) {
	if t.Kind != "INNER" && t.Kind != "LEFT" {
		return nil, nil, errorf(u, "UNNEST joins as CROSS JOIN, INNER JOIN or LEFT JOIN, not %s JOIN", t.Kind)
	}
	left, lsc, err := p.from(t.Left, depth)
	if err != nil {
		return nil, nil, err
	}
	arg, err := (&exprBinder{sc: lsc}).bind(u.Expr)
	if err != nil {
		return nil, nil, err
	}
	if k := arg.Type().Kind; k != Array && k != Map && k != Multiset {
		return nil, nil, errorf(u.Expr, "UNNEST takes an ARRAY, a MAP or a MULTISET, not %s", arg.Type().Nullable())
	}
	n := &Unnest{Input: left, Outer: t.Kind == "LEFT", Ordinality: u.Ordinality, Elems: unnestColumns(arg.Type(), u.Ordinality, t.Kind == "LEFT")}
	width := len(left.Schema())
	if c, ok := arg.(*ColumnRef); ok {
		n.Col = c.Index
	} else { // computed first, dropped after
		n.Input = &Project{Input: left, Exprs: append(columnRefs(left.Schema()), arg), Names: append(schemaNames(left.Schema()), "$unnest")}
		n.Col = width
	}
	if u.Columns != nil {
		if len(u.Columns) != len(n.Elems) {
			return nil, nil, errorf(u, "UNNEST of %s gives %d columns, but %s names %d", arg.Type().Nullable(), len(n.Elems), orName(u.Alias, "it"), len(u.Columns))
		}
		for i, name := range u.Columns {
			n.Elems[i].Name = name
		}
	}
	var node Node = n
	if n.Input != left {
		keep := append(columnRefs(left.Schema()), columnRefs(n.Schema())[width+1:]...)
		node = &Project{Input: n, Exprs: keep, Names: append(schemaNames(left.Schema()), schemaNames(n.Elems)...)}
	}
	sc := &scope{cols: append(append([]scopeCol(nil), lsc.cols...), newScope(u.Alias, n.Elems).cols...)}
	if n.Outer {
		if b, ok := t.On.(*parser.BoolLit); !ok || !b.Value {
			return nil, nil, errorf(t.On, "LEFT JOIN UNNEST(...) takes ON TRUE")
		}
		return node, sc, nil
	}
	b := &exprBinder{sc: sc}
	cond, err := b.bind(t.On)
	if err != nil {
		return nil, nil, err
	}
	if cond, err = b.expect(t.On, cond, TypeBoolean); err != nil {
		return nil, nil, errorf(t.On, "JOIN ... ON needs a BOOLEAN condition")
	}
	if l, ok := cond.(*Literal); !ok || l.Value != true {
		node = &Filter{Input: node, Cond: cond}
	}
	return node, sc, nil
}

// columnRefs refers to every column of s, in order.
func columnRefs(s Schema) []Expr {
	refs := make([]Expr, len(s))
	for i, c := range s {
		refs[i] = &ColumnRef{Index: i, Name: c.Name, T: c.Type}
	}
	return refs
}
