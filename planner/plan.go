package planner

import (
	"fmt"
	"strings"
)

// Node is an immutable plan node. Plans are trees for now: every node has its inputs as
// Children.
type Node interface {
	Schema() Schema
	Children() []Node
	// Updating reports whether the node's output holds retractions (-U, -D), not only inserts.
	Updating() bool
	// Describe is the node's one-line description, without children.
	Describe() string
}

// Scan reads a table's source. Its schema is the table's physical columns.
type Scan struct {
	Table *Table
}

// Values produces fixed rows: Tuples, each row's constant expressions (of one type per
// column but for nullability), or without Tuples, Rows rows of no columns (a SELECT
// without FROM reads one).
type Values struct {
	Rows   int
	Tuples [][]Expr
	Names  []string
}

// Filter keeps the rows where Cond is TRUE.
type Filter struct {
	Input Node
	Cond  Expr
}

// Project computes one column per expression.
type Project struct {
	Input Node
	Exprs []Expr
	Names []string
}

// Aggregate groups its input by the Keys columns and computes Aggs per group. Its output
// is the keys followed by the aggregates, an updating result. Grouped by the window_start
// and window_end of a window function, it is a window aggregate: each window's rows are
// final, emitted once when the watermark passes the window's end.
type Aggregate struct {
	Input       Node
	Keys        []int
	Aggs        []AggCall
	Names       []string   // output names: keys, then aggregates
	Window      *WindowTVF // the window function of a window aggregate, or nil
	WindowStart int        // for a window aggregate, the key that is window_start
	WindowEnd   int        // and the one that is window_end
	Late        *LateRows  // where a window aggregate's late rows go, or nil
	Emit        EmitControl
}

// EmitControl is when a window aggregate emits, besides once when a window fires (the
// session's table.exec.emit options). Either makes its result updating.
type EmitControl struct {
	AllowLateness  int64 // ms a fired window's state is kept, for late rows to update it
	EarlyFireDelay int64 // ms between emissions of open windows' partial rows; 0: none
}

// On reports whether any emit option is set.
func (e EmitControl) On() bool { return e.AllowLateness > 0 || e.EarlyFireDelay > 0 }

// AggFunc names an aggregate function.
type AggFunc string

// The aggregate functions.
const (
	AggCount AggFunc = "COUNT"
	AggSum   AggFunc = "SUM"
	AggAvg   AggFunc = "AVG"
	AggMin   AggFunc = "MIN"
	AggMax   AggFunc = "MAX"

	AggStddevPop  AggFunc = "STDDEV_POP"
	AggStddevSamp AggFunc = "STDDEV_SAMP"
	AggVarPop     AggFunc = "VAR_POP"
	AggVarSamp    AggFunc = "VAR_SAMP"
	AggFirstValue AggFunc = "FIRST_VALUE"
	AggLastValue  AggFunc = "LAST_VALUE"
	AggListAgg    AggFunc = "LISTAGG"
	AggCollect    AggFunc = "COLLECT"
	AggArrayAgg   AggFunc = "ARRAY_AGG"
	AggJSONArray  AggFunc = "JSON_ARRAYAGG"
	AggJSONObject AggFunc = "JSON_OBJECTAGG"

	// AggLag is LAG(x, offset, default) over an OVER window: the value of x offset rows
	// before, or the default (More[0]) when there is none.
	AggLag AggFunc = "LAG"
)

// AggCall is one aggregate: Fn over input column Arg (-1 for COUNT(*)).
type AggCall struct {
	Fn       AggFunc
	Arg      int
	Distinct bool
	T        Type // result type
	// More are the further argument columns: of COUNT(DISTINCT a, b, ...), counted as
	// one tuple with Arg; JSON_OBJECTAGG's value (Arg is its key).
	More []int
	// KeepNulls keeps NULL values as elements: ARRAY_AGG (unless IGNORE NULLS),
	// JSON_ARRAYAGG ... NULL ON NULL, JSON_OBJECTAGG (unless ABSENT ON NULL).
	KeepNulls bool
	// Filter is 1 + the BOOLEAN input column of FILTER (WHERE ...): only rows where it is
	// TRUE reach the call. 0: no filter.
	Filter int
	// Separator is LISTAGG's.
	Separator string
	// Offset is LAG's: how many rows back it reads.
	Offset int64
}

// FilterCol returns the input column of the call's FILTER condition, or -1.
func (a AggCall) FilterCol() int { return a.Filter - 1 }

// Inputs lists every input column the call reads: its arguments and its filter.
func (a AggCall) Inputs() []int {
	var cols []int
	if a.Arg >= 0 {
		cols = append(cols, a.Arg)
	}
	cols = append(cols, a.More...)
	if a.Filter > 0 {
		cols = append(cols, a.Filter-1)
	}
	return cols
}

// argText is how Describe and the state's meaning write the call's arguments and
// filter, naming input columns with col. A call without the newer clauses prints as it
// always did, so the meaning (and id) of existing aggregate state does not change.
func (a AggCall) argText(col func(int) string) string {
	arg := "*"
	if a.Arg >= 0 {
		arg = col(a.Arg)
	}
	for _, c := range a.More {
		arg += ", " + col(c)
	}
	if a.Distinct {
		arg = "DISTINCT " + arg
	}
	if a.Fn == AggListAgg {
		arg += ", " + quoteString(a.Separator)
	}
	if a.Fn == AggLag {
		arg = fmt.Sprintf("%s, %d, %s", col(a.Arg), a.Offset, col(a.More[0]))
	}
	switch {
	case a.Fn == AggArrayAgg && !a.KeepNulls:
		arg += " IGNORE NULLS"
	case a.Fn == AggJSONArray && a.KeepNulls:
		arg += " NULL ON NULL"
	case a.Fn == AggJSONObject && !a.KeepNulls:
		arg += " ABSENT ON NULL"
	}
	s := a.Fn.String() + "(" + arg + ")"
	if a.Filter > 0 {
		s += " FILTER (WHERE " + col(a.Filter-1) + ")"
	}
	return s
}

func (f AggFunc) String() string { return string(f) }

// Sink writes its input into a table's connector (INSERT INTO).
type Sink struct {
	Input Node
	Table *Table
}

func (n *Scan) Schema() Schema { return n.Table.SourceSchema() }
func (n *Values) Schema() Schema {
	if n.Tuples == nil {
		return nil
	}
	s := make(Schema, len(n.Names))
	for c := range s {
		col := make([]Expr, len(n.Tuples))
		for r, t := range n.Tuples {
			col[r] = t[c]
		}
		s[c] = Column{Name: n.Names[c], Type: unionType(col...)}
	}
	return s
}
func (n *Filter) Schema() Schema { return n.Input.Schema() }
func (n *Sink) Schema() Schema   { return n.Input.Schema() }

func (n *Project) Schema() Schema {
	s := make(Schema, len(n.Exprs))
	for i, e := range n.Exprs {
		s[i] = Column{Name: n.Names[i], Type: e.Type()}
	}
	return s
}

func (n *Aggregate) Schema() Schema {
	in := n.Input.Schema()
	s := make(Schema, 0, len(n.Keys)+len(n.Aggs))
	for i, k := range n.Keys {
		s = append(s, Column{Name: n.Names[i], Type: in[k].Type})
	}
	for i, a := range n.Aggs {
		s = append(s, Column{Name: n.Names[len(n.Keys)+i], Type: a.T})
	}
	return s
}

func (n *Scan) Children() []Node      { return nil }
func (n *Values) Children() []Node    { return nil }
func (n *Filter) Children() []Node    { return []Node{n.Input} }
func (n *Project) Children() []Node   { return []Node{n.Input} }
func (n *Aggregate) Children() []Node { return []Node{n.Input} }
func (n *Sink) Children() []Node      { return []Node{n.Input} }

func (n *Scan) Updating() bool      { return n.Table.Changelog() }
func (n *Values) Updating() bool    { return false }
func (n *Filter) Updating() bool    { return n.Input.Updating() }
func (n *Project) Updating() bool   { return n.Input.Updating() }
func (n *Aggregate) Updating() bool { return n.Window == nil || n.Emit.On() }
func (n *Sink) Updating() bool      { return n.Input.Updating() }

func (n *Scan) Describe() string {
	return fmt.Sprintf("TableSourceScan(table=[%s], connector=[%s]%s)", n.Table.Name, n.Table.Connector(), n.Table.hintText())
}

// hintText names the options an OPTIONS hint set on the table, for Describe: keys only,
// as their values may be secrets.
func (t *Table) hintText() string {
	if len(t.Hinted) == 0 {
		return ""
	}
	return ", dynamicOptions=[" + strings.Join(t.Hinted, ", ") + "]"
}

func (n *Values) Describe() string {
	if n.Tuples == nil {
		return fmt.Sprintf("Values(rows=[%d])", n.Rows)
	}
	rows := make([]string, len(n.Tuples))
	for i, t := range n.Tuples {
		vals := make([]string, len(t))
		for j, e := range t {
			vals[j] = e.String()
		}
		rows[i] = "(" + strings.Join(vals, ", ") + ")"
	}
	return fmt.Sprintf("Values(tuples=[%s])", strings.Join(rows, ", "))
}

func (n *Filter) Describe() string {
	return fmt.Sprintf("Filter(where=[%s])", exprSQL(n.Cond, n.Input.Schema()))
}

func (n *Project) Describe() string {
	in := n.Input.Schema()
	items := make([]string, len(n.Exprs))
	for i, e := range n.Exprs {
		s := exprSQL(e, in)
		if s != n.Names[i] {
			s += " AS " + n.Names[i]
		}
		items[i] = s
	}
	return fmt.Sprintf("Project(select=[%s])", strings.Join(items, ", "))
}

func (n *Aggregate) Describe() string {
	in := n.Input.Schema()
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = in[k].Name
	}
	aggs := make([]string, len(n.Aggs))
	for i, a := range n.Aggs {
		aggs[i] = fmt.Sprintf("%s AS %s", a.argText(func(c int) string { return in[c].Name }), n.Names[len(n.Keys)+i])
	}
	if len(keys) == 0 {
		return fmt.Sprintf("GroupAggregate(select=[%s])", strings.Join(aggs, ", "))
	}
	if n.Window != nil {
		window := n.Window.Kind
		if n.Sliced() {
			window += ", slices of " + duration(n.Window.Slide)
		}
		late := ""
		if n.Emit.AllowLateness > 0 {
			late += ", allowLateness=[" + duration(n.Emit.AllowLateness) + "]"
		}
		if n.Emit.EarlyFireDelay > 0 {
			late += ", earlyFire=[every " + duration(n.Emit.EarlyFireDelay) + "]"
		}
		if n.Late != nil {
			late += fmt.Sprintf(", lateRowsTo=[%s]", n.Late.Table)
		}
		return fmt.Sprintf("WindowAggregate(window=[%s], groupBy=[%s], select=[%s]%s)", window, strings.Join(keys, ", "), strings.Join(append(keys, aggs...), ", "), late)
	}
	return fmt.Sprintf("GroupAggregate(groupBy=[%s], select=[%s])", strings.Join(keys, ", "), strings.Join(append(keys, aggs...), ", "))
}

func (n *Sink) Describe() string {
	return fmt.Sprintf("Sink(table=[%s], connector=[%s]%s)", n.Table.Name, n.Table.Connector(), n.Table.hintText())
}

// Walk calls fn for n and every node below it, parents first.
func Walk(n Node, fn func(Node)) {
	fn(n)
	for _, c := range n.Children() {
		Walk(c, fn)
	}
}

// ExprSQL prints e as SQL over its input schema in, without the parentheses around the
// whole, as errors name an expression: a / b.
func ExprSQL(e Expr, in Schema) string {
	s := exprSQL(e, in)
	if len(s) > 1 && s[0] == '(' && s[len(s)-1] == ')' && matching(s) {
		return s[1 : len(s)-1]
	}
	return s
}

// matching reports whether the parenthesis that opens s closes at its end.
func matching(s string) bool {
	depth, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i == len(s)-1
			}
		}
	}
	return false
}

// exprSQL prints e with column names instead of positions: the names of schema in,
// which a join may have made unique (id0), not those the query wrote.
func exprSQL(e Expr, in Schema) string {
	s := mapColumns(e, func(c *ColumnRef) Expr {
		if c.Index >= len(in) {
			return c
		}
		return &ColumnRef{Index: c.Index, Name: in[c.Index].Name, T: c.T}
	}).String()
	// ColumnRef prints as $i:name; EXPLAIN shows the name only.
	for i := len(in) - 1; i >= 0; i-- {
		s = strings.ReplaceAll(s, fmt.Sprintf("$%d:%s", i, in[i].Name), in[i].Name)
	}
	return s
}

// Explain prints the plan as an indented tree, one operator a line with its changelog
// mode, its parallelism (as parallelism reports it) and its output schema.
func Explain(root Node, parallelism func(Node) int) string {
	var b strings.Builder
	var walk func(n Node, prefix string, first bool)
	walk = func(n Node, prefix string, first bool) {
		mode := "insert-only"
		if n.Updating() {
			mode = "updating"
		}
		lead := prefix
		if !first {
			lead += "+- "
		}
		fmt.Fprintf(&b, "%s%s\n", lead, n.Describe())
		pad := prefix
		if !first {
			pad += "   "
		}
		fmt.Fprintf(&b, "%s   changelog=[%s], parallelism=[%d], schema=%s\n", pad, mode, parallelism(n), n.Schema())
		for _, c := range n.Children() {
			walk(c, pad, false)
		}
	}
	walk(root, "", true)
	return b.String()
}
