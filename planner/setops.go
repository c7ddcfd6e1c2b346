package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// Union merges the rows of its inputs, UNION ALL: they have the same column types but
// for nullability (the planner casts them so) and the first one's names. Its result is
// updating if an input is; its watermark is the least of its inputs'. UNION (distinct)
// is an Aggregate grouping a Union by all its columns.
type Union struct {
	Inputs []Node
}

func (n *Union) Schema() Schema {
	first := n.Inputs[0].Schema()
	s := make(Schema, len(first))
	for c := range s {
		col := make([]Expr, len(n.Inputs))
		for i, in := range n.Inputs {
			col[i] = &ColumnRef{Index: c, T: in.Schema()[c].Type}
		}
		s[c] = Column{Name: first[c].Name, Type: unionType(col...)}
	}
	return s
}

func (n *Union) Children() []Node { return n.Inputs }

func (n *Union) Updating() bool {
	for _, in := range n.Inputs {
		if in.Updating() {
			return true
		}
	}
	return false
}

func (n *Union) Describe() string {
	return fmt.Sprintf("Union(all=[true], union=[%s])", strings.Join(schemaNames(n.Schema()), ", "))
}

// unionType is the type of a column whose values come from es, which the planner cast to
// one type: NOT NULL if every one is.
func unionType(es ...Expr) Type {
	t := es[0].Type()
	for _, e := range es[1:] {
		if !e.Type().NotNull {
			t.NotNull = false
		}
	}
	if t.Kind == String {
		for _, e := range es[1:] {
			if e.Type().Nullable() != t.Nullable() { // VARCHAR(n) of several lengths
				t = Type{Kind: String, NotNull: t.NotNull}
			}
		}
	}
	return t
}

// values plans VALUES (a, b), ...: constant rows, each column cast to the type all its
// values meet at. The columns are named EXPR$0, EXPR$1, ... as in Flink.
func (p *Planner) values(q *parser.Query) (Node, error) {
	b := &exprBinder{sc: &scope{}}
	width := len(q.Values[0])
	n := &Values{Rows: len(q.Values)}
	types := make([]Type, width)
	for r, row := range q.Values {
		if len(row) != width {
			return nil, errorf(row[0], "VALUES rows must have the same number of columns: the first has %d, row %d has %d", width, r+1, len(row))
		}
		tuple := make([]Expr, width)
		for c, e := range row {
			x, err := b.bind(e)
			if err != nil {
				return nil, err
			}
			if containsColumnRef(x) {
				return nil, errorf(e, "VALUES holds constant expressions only")
			}
			if r == 0 {
				types[c] = x.Type()
			} else if t, ok := commonType(types[c], x.Type()); ok {
				types[c] = t
			} else {
				return nil, errorf(e, "VALUES column %d mixes %s and %s", c+1, types[c].Nullable(), x.Type().Nullable())
			}
			tuple[c] = x
		}
		n.Tuples = append(n.Tuples, tuple)
	}
	for c, t := range types {
		if t.Kind == Null {
			return nil, errorf(q.Values[0][c], "VALUES column %d holds only NULL: CAST one of them to a type", c+1)
		}
		n.Names = append(n.Names, fmt.Sprintf("EXPR$%d", c))
		for _, tuple := range n.Tuples {
			tuple[c] = castTo(tuple[c], t)
		}
	}
	return n, nil
}

func containsColumnRef(e Expr) bool {
	found := false
	mapColumns(e, func(c *ColumnRef) Expr {
		found = true
		return c
	})
	return found
}

// setOp plans UNION ALL as a Union of its inputs, each cast to the column types they
// meet at, and UNION as that Union grouped by all its columns (updating: a row whose
// last copy is retracted is deleted). A chain of them is one Union.
func (p *Planner) setOp(s *parser.SetOp, depth int) (Node, error) {
	if s.Op != "UNION" {
		return p.intersectExcept(s, depth)
	}
	var inputs []Node
	var collect func(s *parser.SetOp) error
	collect = func(set *parser.SetOp) error {
		for _, q := range []*parser.Query{set.Left, set.Right} {
			// A UNION ALL operand merges into this Union; a UNION one merges into a UNION.
			if inner := q.Set; inner != nil && inner.Op == "UNION" && (inner.All || !s.All) &&
				len(q.With) == 0 && q.OrderBy == nil && q.Limit == nil {
				if err := collect(inner); err != nil {
					return err
				}
				continue
			}
			n, _, err := p.query(q, depth+1)
			if err != nil {
				return err
			}
			inputs = append(inputs, n)
		}
		return nil
	}
	if err := collect(s); err != nil {
		return nil, err
	}
	op := "UNION"
	if s.All {
		op = "UNION ALL"
	}
	inputs, err := castInputs(s, op, inputs)
	if err != nil {
		return nil, err
	}
	var n Node = &Union{Inputs: inputs}
	if !s.All {
		n = &Aggregate{Input: n, Keys: allColumns(len(n.Schema())), Names: schemaNames(n.Schema())}
	}
	return n, nil
}

// castInputs casts the inputs of a set operation to the column types they meet at.
func castInputs(s *parser.SetOp, op string, inputs []Node) ([]Node, error) {
	first := inputs[0].Schema()
	types := make([]Type, len(first))
	for c := range types {
		types[c] = first[c].Type
	}
	for i, in := range inputs[1:] {
		schema := in.Schema()
		if len(schema) != len(first) {
			return nil, errorf(s, "the queries of a %s must produce the same number of columns: the first produces %d, query %d produces %d", op, len(first), i+2, len(schema))
		}
		for c, col := range schema {
			t, ok := commonType(types[c], col.Type)
			if !ok {
				return nil, errorf(s, "%s: column %d (%s) is %s in the first query but %s in query %d", op, c+1, first[c].Name, first[c].Type.Nullable(), col.Type.Nullable(), i+2)
			}
			types[c] = t
		}
	}
	for i, in := range inputs {
		inputs[i] = castColumns(in, types)
	}
	return inputs, nil
}

// intersectExcept plans `l INTERSECT r` and `l EXCEPT r` as their rows tagged with the
// side they come from, grouped by all columns with a count per side: the distinct rows
// found on both sides, or on the left only. The grouping is updating: a row leaves the
// result when a change of either side's counts makes it fail the test (an EXCEPT row, when
// it turns up on the right), so its state is keyed state in checkpoints like UNION's.
//
// With ALL, a row's count in the result is the least of its counts on both sides
// (INTERSECT ALL), or its left count less its right one (EXCEPT ALL): a Replicate
// emits each group's row that many times, and retracts as many when the counts change.
func (p *Planner) intersectExcept(s *parser.SetOp, depth int) (Node, error) {
	var inputs []Node
	for _, q := range []*parser.Query{s.Left, s.Right} {
		n, _, err := p.query(q, depth+1)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, n)
	}
	inputs, err := castInputs(s, s.Op, inputs)
	if err != nil {
		return nil, err
	}
	width := len(inputs[0].Schema())
	names := schemaNames(inputs[0].Schema())
	count := Type{Kind: BigInt, NotNull: true}
	for side, in := range inputs {
		tags := []Expr{&Literal{Value: int64(1 - side), T: count}, &Literal{Value: int64(side), T: count}}
		inputs[side] = &Project{Input: in, Exprs: append(columnRefs(in.Schema()), tags...), Names: append(append([]string(nil), names...), "$left", "$right")}
	}
	agg := &Aggregate{Input: &Union{Inputs: inputs}, Keys: allColumns(width),
		Aggs:  []AggCall{{Fn: AggSum, Arg: width, T: count}, {Fn: AggSum, Arg: width + 1, T: count}},
		Names: append(append([]string(nil), names...), "$onLeft", "$onRight")}
	cmp := func(fn Func, col int) Expr {
		return &Call{Fn: fn, Args: []Expr{&ColumnRef{Index: col, Name: agg.Names[col], T: count}, &Literal{Value: int64(0), T: count}}, T: TypeBoolean}
	}
	right := cmp(FnGt, width+1) // INTERSECT: also on the right
	if s.Op == "EXCEPT" {
		right = cmp(FnEq, width+1)
	}
	if s.All {
		l, r := columnRefs(agg.Schema())[width], columnRefs(agg.Schema())[width+1]
		times := &Call{Fn: FnLeast, Args: []Expr{l, r}, T: count} // INTERSECT ALL
		if s.Op == "EXCEPT" {
			times = &Call{Fn: FnSub, Args: []Expr{l, r}, T: count}
		}
		counted := &Project{Input: agg, Exprs: append(columnRefs(agg.Schema())[:width], times), Names: append(append([]string(nil), names...), "$times")}
		kept := &Filter{Input: counted, Cond: cmp(FnGt, width)}
		return &Project{Input: &Replicate{Input: kept, Count: width}, Exprs: columnRefs(kept.Schema())[:width], Names: names}, nil
	}
	cond := &Call{Fn: FnAnd, Args: []Expr{cmp(FnGt, width), right}, T: TypeBoolean}
	filtered := &Filter{Input: agg, Cond: cond}
	return &Project{Input: filtered, Exprs: columnRefs(agg.Schema())[:width], Names: names}, nil
}

// Replicate emits each input row as many times as its column Count says (a BIGINT;
// none when it is not positive), each copy with the row's kind.
type Replicate struct {
	Input Node
	Count int
}

func (n *Replicate) Schema() Schema   { return n.Input.Schema() }
func (n *Replicate) Children() []Node { return []Node{n.Input} }
func (n *Replicate) Updating() bool   { return n.Input.Updating() }
func (n *Replicate) Describe() string {
	return fmt.Sprintf("Replicate(times=[%s])", n.Input.Schema()[n.Count].Name)
}

// allColumns is 0, 1, ..., n-1.
func allColumns(n int) []int {
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	return cols
}

// castColumns casts n's columns to types (but for nullability), with a projection if any
// column changes.
func castColumns(n Node, types []Type) Node {
	schema := n.Schema()
	proj := &Project{Input: n, Names: schemaNames(schema)}
	changed := false
	for c, col := range schema {
		ref := &ColumnRef{Index: c, Name: col.Name, T: col.Type}
		e := castTo(ref, types[c])
		changed = changed || e != Expr(ref)
		proj.Exprs = append(proj.Exprs, e)
	}
	if !changed {
		return n
	}
	return proj
}
