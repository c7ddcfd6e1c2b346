package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// OverAggregate computes aggregates over a frame of rows for every input row, as
// agg(...) OVER (PARTITION BY ... ORDER BY rowtime frame) does in Flink: the frame is the
// row and the rows of its partition before it in event-time order, either the Preceding
// rows before it (ROWS) or the rows at most Preceding ms older (RANGE, which also holds
// the row's peers, the rows at the same time). Preceding -1 is UNBOUNDED PRECEDING.
//
// Rows wait for the watermark to pass their time, then each is emitted once with the
// aggregate values of its frame, in time order per partition: the result is insert-only.
// A row at or before the last emitted time of its partition is late: dropped and counted.
// Its output is the input's columns followed by the aggregates.
type OverAggregate struct {
	Input       Node
	PartitionBy []int
	TimeCol     int // the ORDER BY column: an event-time attribute, ascending
	Rows        bool
	Preceding   int64 // rows (ROWS) or ms (RANGE) before the current row; -1: unbounded
	Aggs        []AggCall
	Names       []string // the aggregates' output names
}

// Unbounded reports whether the frame starts at UNBOUNDED PRECEDING.
func (n *OverAggregate) Unbounded() bool { return n.Preceding < 0 }

func (n *OverAggregate) Schema() Schema {
	s := append(Schema(nil), n.Input.Schema()...)
	for i, a := range n.Aggs {
		s = append(s, Column{Name: n.Names[i], Type: a.T})
	}
	return s
}

func (n *OverAggregate) Children() []Node { return []Node{n.Input} }
func (n *OverAggregate) Updating() bool   { return false }

// FrameSQL is the frame as SQL: ROWS BETWEEN 10 PRECEDING AND CURRENT ROW, with a RANGE
// offset in milliseconds, as Flink's plans print it.
func (n *OverAggregate) FrameSQL() string {
	kind := "RANGE"
	if n.Rows {
		kind = "ROWS"
	}
	start := "UNBOUNDED"
	if !n.Unbounded() {
		start = fmt.Sprint(n.Preceding)
	}
	return fmt.Sprintf("%s BETWEEN %s PRECEDING AND CURRENT ROW", kind, start)
}

func (n *OverAggregate) Describe() string {
	in := n.Input.Schema()
	part := make([]string, len(n.PartitionBy))
	for i, c := range n.PartitionBy {
		part[i] = in[c].Name
	}
	sel := schemaNames(in)
	for i, a := range n.Aggs {
		sel = append(sel, fmt.Sprintf("%s AS %s", a.argText(func(c int) string { return in[c].Name }), n.Names[i]))
	}
	return fmt.Sprintf("OverAggregate(partitionBy=[%s], orderBy=[%s ASC], window=[%s], select=[%s])",
		strings.Join(part, ", "), in[n.TimeCol].Name, n.FrameSQL(), strings.Join(sel, ", "))
}

// overMeaning is what decides an OverAggregate's state: its partition and time columns
// as the expressions its input computes, its frame and its calls.
func overMeaning(n *OverAggregate) string {
	col := columnSQL(n.Input)
	part := make([]string, len(n.PartitionBy))
	for i, c := range n.PartitionBy {
		part[i] = col(c)
	}
	calls := make([]string, len(n.Aggs))
	for i, a := range n.Aggs {
		calls[i] = fmt.Sprintf("%s %s", a.argText(col), a.T)
	}
	return fmt.Sprintf("OverAggregate(partitionBy=[%s], orderBy=[%s], window=[%s], calls=[%s])",
		strings.Join(part, ", "), col(n.TimeCol), n.FrameSQL(), strings.Join(calls, ", "))
}

// overAggs returns the OVER calls that are no ranking function in a select list, in
// the order they are written.
func overAggs(items []*parser.SelectItem) []*parser.OverExpr {
	var found []*parser.OverExpr
	for _, it := range items {
		walkExpr(it.Expr, func(e parser.Expr) {
			if o, ok := e.(*parser.OverExpr); ok && o.Call != nil {
				found = append(found, o)
			}
		})
	}
	return found
}

// overWindow returns the window an OVER call is computed on: its own, or the one the
// WINDOW clause defines under its name.
func overWindow(o *parser.OverExpr, defs []*parser.WindowDef) (parser.WindowSpec, error) {
	if o.Name == "" {
		return o.WindowSpec, nil
	}
	for _, d := range defs {
		if equalFold(d.Name, o.Name) {
			return d.Spec, nil
		}
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	return parser.WindowSpec{}, errorf(o, "unknown window `%s`%s", o.Name, suggest(o.Name, names))
}

// checkWindowDefs refuses a WINDOW clause that defines a name twice.
func checkWindowDefs(defs []*parser.WindowDef) error {
	for i, d := range defs {
		for _, e := range defs[:i] {
			if equalFold(d.Name, e.Name) {
				return &Error{Pos: d.Pos, Msg: fmt.Sprintf("WINDOW defines `%s` twice", d.Name)}
			}
		}
	}
	return nil
}

// overAggregate plans a select list with aggregates OVER a window:
// Project(input columns, partition keys, arguments) → OverAggregate → Project(select
// list). Every call must be over the same window, as Flink requires in streaming.
func (p *Planner) overAggregate(q *parser.Query, items []*parser.SelectItem, overs []*parser.OverExpr, input Node, b *exprBinder) (Node, error) {
	if err := checkWindowDefs(q.Windows); err != nil {
		return nil, err
	}
	spec, err := overWindow(overs[0], q.Windows)
	if err != nil {
		return nil, err
	}
	for _, o := range overs[1:] {
		s, err := overWindow(o, q.Windows)
		if err != nil {
			return nil, err
		}
		if s.String() != spec.String() {
			return nil, errorf(o, "all aggregates must be computed on the same window, as Flink requires in streaming: "+
				"this window (%s) differs from the one at %s (%s)", s, overs[0].Pos, spec)
		}
	}
	in := input.Schema()
	pre := &Project{Input: input, Exprs: columnRefs(in), Names: schemaNames(in)}
	column := func(x Expr, what string) int {
		if c, ok := x.(*ColumnRef); ok {
			return c.Index
		}
		pre.Exprs = append(pre.Exprs, x)
		pre.Names = append(pre.Names, fmt.Sprintf("$%s%d", what, len(pre.Exprs)-1))
		return len(pre.Exprs) - 1
	}
	n := &OverAggregate{}
	for _, e := range spec.PartitionBy {
		x, err := b.bind(e)
		if err != nil {
			return nil, err
		}
		if x.Type().Kind == Null {
			return nil, errorf(e, "cannot partition by NULL")
		}
		n.PartitionBy = append(n.PartitionBy, column(x, "partition"))
	}
	if n.TimeCol, err = overOrder(overs[0], spec, input, b); err != nil {
		return nil, err
	}
	if !rowtime(input, n.TimeCol) {
		// A processing-time attribute of an event-time stream: the window follows the
		// clock, rows in their order of arrival, as a window over it does.
		pre.Input = proctimeWatermarked(input, n.TimeCol)
	}
	if n.Rows, n.Preceding, err = overFrame(overs[0], spec.Frame); err != nil {
		return nil, err
	}
	ab := &aggBinding{input: b}
	callOf := map[*parser.OverExpr]int{}
	calls := map[string]int{}
	for _, o := range overs {
		sql := o.Call.String()
		i, seen := calls[sql]
		if !seen {
			call, name, err := overCall(o, ab, len(n.Aggs), n.Preceding < 0, func(x Expr) int { return column(x, "arg") })
			if err != nil {
				return nil, err
			}
			i = len(n.Aggs)
			calls[sql] = i
			n.Aggs = append(n.Aggs, call)
			n.Names = append(n.Names, name)
		}
		callOf[o] = i
	}
	n.Input = pre
	// Name the aggregate outputs after the select items that are exactly them.
	for at, it := range items {
		if o, ok := it.Expr.(*parser.OverExpr); ok && o.Call != nil {
			if i := callOf[o]; strings.HasPrefix(n.Names[i], "w0$o") {
				n.Names[i] = itemName(it, at)
			}
		}
	}
	refs := map[*parser.OverExpr]Expr{}
	for o, i := range callOf {
		refs[o] = &ColumnRef{Index: len(pre.Exprs) + i, Name: n.Names[i], T: n.Aggs[i].T}
	}
	return project(items, n, &exprBinder{sc: b.sc, over: refs})
}

// overOrder checks a window's ORDER BY, which Flink requires in streaming to be one
// ascending time attribute (event or processing time), and returns its column.
func overOrder(o *parser.OverExpr, spec parser.WindowSpec, input Node, b *exprBinder) (int, error) {
	switch {
	case len(spec.OrderBy) == 0:
		return 0, errorf(o, "OVER windows' ordering in stream mode must be defined on a time attribute: the window needs ORDER BY a rowtime column")
	case len(spec.OrderBy) > 1:
		return 0, errorf(spec.OrderBy[1].Expr, "the window can only be ordered by a single time column")
	case spec.OrderBy[0].Desc:
		return 0, errorf(spec.OrderBy[0].Expr, "the window can only be ordered in ASCENDING mode")
	}
	e := spec.OrderBy[0].Expr
	x, err := b.bind(e)
	if err != nil {
		return 0, err
	}
	if input.Updating() {
		return 0, errorf(o, "an OVER window does not consume updates, and its input is updating (as in Flink, whose OverAggregate does not consume update changes)")
	}
	c, ok := x.(*ColumnRef)
	if !ok || !rowtime(input, c.Index) && !proctime(input, c.Index) {
		return 0, errorf(e, "OVER windows' ordering in stream mode must be defined on a time attribute: %s is no column with a WATERMARK nor a PROCTIME() column", e)
	}
	return c.Index, nil
}

// overFrame reads a window's frame: whether it counts rows, and how far back it reaches
// (-1: unbounded). Without one, the frame is RANGE BETWEEN UNBOUNDED PRECEDING AND
// CURRENT ROW, as in SQL.
func overFrame(o *parser.OverExpr, f *parser.Frame) (bool, int64, error) {
	if f == nil {
		return false, -1, nil
	}
	kind := "RANGE"
	if !f.Range {
		kind = "ROWS"
	}
	if f.Start.Following || f.End.Following {
		return false, 0, &Error{Pos: f.Pos, Msg: fmt.Sprintf("OVER %s FOLLOWING windows are not supported (nor in Flink): a frame ends at CURRENT ROW", kind)}
	}
	if !f.End.Current {
		return false, 0, &Error{Pos: f.End.Pos, Msg: "a window's frame must end at CURRENT ROW"}
	}
	switch {
	case f.Start.Unbounded:
		return !f.Range, -1, nil
	case f.Start.Current:
		return !f.Range, 0, nil
	}
	x, err := (&exprBinder{sc: &scope{}}).bind(f.Start.Offset)
	if err != nil {
		return false, 0, err
	}
	lit, _ := x.(*Literal)
	var v int64
	isInt := false
	if lit != nil {
		switch x := lit.Value.(type) {
		case int32:
			v, isInt = int64(x), true
		case int64:
			v, isInt = x, true
		}
	}
	switch {
	case !f.Range && (lit == nil || !lit.T.IsNumeric() || !isInt || v < 0):
		return false, 0, errorf(f.Start.Offset, "ROWS frames take a constant count of rows such as 10 PRECEDING, got %s", f.Start.Offset)
	case f.Range && (lit == nil || lit.T.Kind != IntervalDayTime || !isInt || v < 0):
		return false, 0, errorf(f.Start.Offset, "RANGE frames over a time attribute take a constant interval such as INTERVAL '1' HOUR PRECEDING, got %s", f.Start.Offset)
	}
	return !f.Range, v, nil
}

// overAggFuncs are the aggregates an OVER window computes: those whose accumulators take
// rows one at a time and retract those that leave a frame.
var overAggFuncs = map[AggFunc]bool{
	AggCount: true, AggSum: true, AggAvg: true, AggMin: true, AggMax: true,
	AggStddevPop: true, AggStddevSamp: true, AggVarPop: true, AggVarSamp: true,
	AggFirstValue: true, AggLastValue: true, AggListAgg: true,
}

// overCall binds the call of an OVER aggregate, the i-th of its node, adding its input
// columns with input; unbounded tells whether the frame starts at UNBOUNDED PRECEDING.
// It returns the call and its output name.
func overCall(o *parser.OverExpr, ab *aggBinding, i int, unbounded bool, input func(Expr) int) (AggCall, string, error) {
	f := o.Call
	switch {
	case f.Name == "LEAD":
		return AggCall{}, "", errorf(o, "LEAD Function is not supported in stream mode (as in Flink): a row's result cannot wait for the rows after it")
	case f.Name == "LAG" && !unbounded:
		return AggCall{}, "", errorf(o, "LAG Function with retraction is not supported in stream mode (as in Flink): "+
			"LAG works over a frame from UNBOUNDED PRECEDING, such as the default one")
	case f.Name == "LAG":
		return lagCall(o, ab.input, i, input)
	case !isAggCall(f):
		return AggCall{}, "", errorf(o, "%s is no aggregate function: OVER applies to aggregates (COUNT, SUM, AVG, MIN, MAX, ...) and ROW_NUMBER", f.Name)
	case !overAggFuncs[aggIndex[f.Name].Fn]:
		return AggCall{}, "", errorf(o, "%s over an OVER window is not supported", f.Name)
	}
	spec, err := ab.bindAgg(f)
	if err != nil {
		return AggCall{}, "", err
	}
	call := AggCall{Fn: spec.fn, Arg: -1, Distinct: spec.distinct, T: spec.t, Separator: spec.sep, KeepNulls: spec.keepNulls}
	if spec.arg != nil {
		call.Arg = input(spec.arg)
	}
	for _, m := range spec.more {
		call.More = append(call.More, input(m))
	}
	if spec.filter != nil {
		call.Filter = input(spec.filter) + 1
	}
	return call, fmt.Sprintf("w0$o%d", i), nil
}

// lagCall binds LAG(x [, offset [, default]]): offset a constant count of rows (1 when
// absent), default an expression of x's type (NULL when absent), computed per row like
// x; the result is that of the latest row of the frame, as Flink computes it (so peers
// of a RANGE frame share it).
func lagCall(o *parser.OverExpr, b *exprBinder, i int, input func(Expr) int) (AggCall, string, error) {
	f := o.Call
	if len(f.Args) < 1 || len(f.Args) > 3 || f.Star || f.Distinct || f.Filter != nil {
		return AggCall{}, "", errorf(o, "LAG takes (x [, offset [, default]]), without *, DISTINCT or FILTER")
	}
	x, err := b.bind(f.Args[0])
	if err != nil {
		return AggCall{}, "", err
	}
	t := x.Type().Nullable()
	if t.Kind == Null {
		return AggCall{}, "", errorf(f.Args[0], "cannot LAG NULL")
	}
	call := AggCall{Fn: AggLag, Offset: 1, T: t}
	if len(f.Args) > 1 {
		off, _ := (&exprBinder{sc: &scope{}}).bind(f.Args[1])
		lit, _ := off.(*Literal)
		v, ok := int64(0), false
		if lit != nil {
			switch n := lit.Value.(type) {
			case int32:
				v, ok = int64(n), true
			case int64:
				v, ok = n, true
			}
		}
		if !ok || v < 0 || v > 1000 {
			return AggCall{}, "", errorf(f.Args[1], "LAG's offset is a constant count of rows from 0 to 1000, got %s", f.Args[1])
		}
		call.Offset = v
	}
	var def Expr = &Literal{T: t}
	if len(f.Args) > 2 {
		if def, err = b.bind(f.Args[2]); err != nil {
			return AggCall{}, "", err
		}
		if _, ok := commonType(def.Type(), t); !ok {
			return AggCall{}, "", errorf(f.Args[2], "LAG's default is %s, not of the type of %s (%s)", def.Type().Nullable(), f.Args[0], t)
		}
		def = castTo(def, t)
	}
	call.Arg = input(x)
	call.More = []int{input(def)}
	return call, fmt.Sprintf("w0$o%d", i), nil
}
