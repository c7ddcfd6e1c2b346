package planner

import (
	"fmt"
	"sort"
	"strings"
)

// StateMeaning is what the state of a stateful plan node means: its kind, what decides
// its state (keys, aggregate calls, join conditions, window, row range) and the lineage
// of its input (the tables, filters and projections that decide what reaches it). It
// leaves out output names and where the node sits in the plan, so a query edited above
// the node (a filter, a projection, a renamed or reordered column, another sink) keeps
// the node's meaning, and a savepoint of the original restores into it.
type StateMeaning struct {
	Kind  string   // "aggregate", "join", "temporal", "rank", "over", "sort", "match" or "watermark"
	Lines []string // what decides the state, then the input lineage
}

// MeaningOf returns the meaning of a stateful node's state; ok is false for a node
// that keeps none.
func MeaningOf(n Node) (m StateMeaning, ok bool) {
	var head string
	switch n := n.(type) {
	case *Aggregate:
		m.Kind, head = "aggregate", aggregateMeaning(n)
	case *Join:
		m.Kind, head = "join", n.Describe()
	case *TemporalJoin:
		m.Kind, head = "temporal", n.Describe()
	case *Rank:
		m.Kind, head = "rank", rankMeaning(n)
	case *OverAggregate:
		m.Kind, head = "over", overMeaning(n)
	case *Sort:
		m.Kind, head = "sort", sortMeaning(n)
	case *MatchRecognize:
		m.Kind, head = "match", matchMeaning(n)
	case *WatermarkAssigner:
		m.Kind, head = "watermark", n.Describe()
	default:
		return m, false
	}
	var from Node = n
	var pre Node
	switch n := n.(type) {
	case *Aggregate:
		pre = n.Input
	case *OverAggregate:
		pre = n.Input
	case *MatchRecognize:
		pre = n.Input
	}
	if p, ok := pre.(*Project); ok {
		from = p // its expressions are in head: the lineage starts below it
	}
	m.Lines = append([]string{head}, lineage(from)...)
	return m, true
}

// aggregateMeaning is an aggregate's Describe without its output names, its keys and
// arguments written as the expressions its input projection computes, and its calls in
// canonical order (AggStateOrder), so reordered or renamed calls mean the same.
func aggregateMeaning(n *Aggregate) string {
	col := columnSQL(n.Input)
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = col(k)
	}
	calls := aggCallTexts(n, col)
	var sorted []string
	for _, i := range AggStateOrder(n) {
		sorted = append(sorted, calls[i])
	}
	s := fmt.Sprintf("Aggregate(groupBy=[%s], calls=[%s]", strings.Join(keys, ", "), strings.Join(sorted, ", "))
	if n.Window != nil {
		s += fmt.Sprintf(", window=[%s], sliced=[%v], emit=[%+v]", n.Window.Describe(), n.Sliced(), n.Emit)
	}
	return s + ")"
}

// AggStateOrder is the order in which an aggregate keeps its calls' state: sorted by
// what each call computes, so the same calls in another order keep the same state.
func AggStateOrder(n *Aggregate) []int {
	calls := aggCallTexts(n, columnSQL(n.Input))
	order := make([]int, len(calls))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return calls[order[a]] < calls[order[b]] })
	return order
}

func aggCallTexts(n *Aggregate, col func(int) string) []string {
	calls := make([]string, len(n.Aggs))
	for i, a := range n.Aggs {
		calls[i] = fmt.Sprintf("%s %s", a.argText(col), stateTypeText(a.T))
	}
	return calls
}

// columnSQL describes the columns of in: for a projection, the expression that computes
// each, over the projection's input; otherwise the column's name.
func columnSQL(in Node) func(int) string {
	if p, ok := in.(*Project); ok {
		below := p.Input.Schema()
		return func(c int) string { return exprSQL(p.Exprs[c], below) }
	}
	schema := in.Schema()
	return func(c int) string { return schema[c].Name }
}

// rankMeaning is a rank's Describe without its output names.
func rankMeaning(n *Rank) string {
	in := n.Input.Schema()
	var part, order []string
	for _, c := range n.PartitionBy {
		part = append(part, in[c].Name)
	}
	for _, k := range n.OrderBy {
		o := in[k.Col].Name
		if k.Desc {
			o += " DESC"
		}
		order = append(order, o)
	}
	s := fmt.Sprintf("Rank(keep=[%s], rows=[%d, %d], partitionBy=[%s], orderBy=[%s], rowNumber=[%v]", n.Dedup(), n.Start, n.End,
		strings.Join(part, ", "), strings.Join(order, ", "), n.RowNumber)
	if n.Window != nil {
		s += fmt.Sprintf(", window=[%s]", n.Window.Describe())
	}
	return s + ")"
}

// lineage describes the inputs of n, down to their tables, one line per node.
func lineage(n Node) []string {
	var lines []string
	var walk func(n Node, depth int)
	walk = func(n Node, depth int) {
		for _, c := range n.Children() {
			d := c.Describe()
			if s, ok := c.(*Scan); ok {
				d = fmt.Sprintf("%s %s", d, stateSchemaText(s.Table.Schema()))
			}
			lines = append(lines, strings.Repeat("  ", depth)+d)
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return lines
}

// stateTypeText prints t as a state meaning names it: in the form it had before the
// type carried what it now does, where the state it describes is laid out the same, so
// that savepoints taken then still restore. A MULTISET is the MAP of element to count it
// is held as; a TIMESTAMP(p) or TIMESTAMP_LTZ(p), kept to milliseconds for every p,
// prints p as 3.
func stateTypeText(t Type) string { return stateType(t).String() }

func stateType(t Type) Type {
	var out Type
	switch t.Kind {
	case Timestamp, TimestampLTZ:
		out = Type{Kind: t.Kind, Precision: 3}
	case Multiset:
		out = MapType(stateType(t.Elem()), t.Value())
	case Map:
		out = MapType(stateType(t.Elem()), stateType(t.Value()))
	case Array:
		out = ArrayType(stateType(t.Elem()))
	case Row:
		fields := make([]Column, len(t.Fields()))
		for i, f := range t.Fields() {
			fields[i] = Column{Name: f.Name, Type: stateType(f.Type)}
		}
		out = RowType(fields)
	default:
		return t
	}
	out.NotNull = t.NotNull
	return out
}

// stateSchemaText prints s as Schema.String does, each type by stateTypeText.
func stateSchemaText(s Schema) string {
	b := []byte{'('}
	for i, c := range s {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, c.Name...)
		b = append(b, ' ')
		b = append(b, stateTypeText(c.Type)...)
	}
	return string(append(b, ')'))
}
