package planner

import (
	"fmt"
	"strings"
)

// StateMeaning is what the state of a stateful plan node means: its kind, what decides
// its state (keys, aggregate calls, join conditions, window, row range) and the lineage
// of its input (the tables, filters and projections that decide what reaches it). It
// leaves out output names and where the node sits in the plan, so a query edited above
// the node (a filter, a projection, a renamed or reordered column, another sink) keeps
// the node's meaning, and a savepoint of the original restores into it.
type StateMeaning struct {
	Kind  string   // "aggregate", "join", "rank" or "watermark"
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
	case *Rank:
		m.Kind, head = "rank", rankMeaning(n)
	case *WatermarkAssigner:
		m.Kind, head = "watermark", n.Describe()
	default:
		return m, false
	}
	m.Lines = append([]string{head}, lineage(n)...)
	return m, true
}

// aggregateMeaning is an aggregate's Describe without its output names.
func aggregateMeaning(n *Aggregate) string {
	in := n.Input.Schema()
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = in[k].Name
	}
	calls := make([]string, len(n.Aggs))
	for i, a := range n.Aggs {
		arg := "*"
		if a.Arg >= 0 {
			arg = in[a.Arg].Name
		}
		if a.Distinct {
			arg = "DISTINCT " + arg
		}
		calls[i] = fmt.Sprintf("%s(%s) %s", a.Fn, arg, a.T)
	}
	s := fmt.Sprintf("Aggregate(groupBy=[%s], calls=[%s]", strings.Join(keys, ", "), strings.Join(calls, ", "))
	if n.Window != nil {
		s += fmt.Sprintf(", window=[%s], sliced=[%v], emit=[%+v]", n.Window.Describe(), n.Sliced(), n.Emit)
	}
	return s + ")"
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
				d = fmt.Sprintf("%s %s", d, s.Table.Schema())
			}
			lines = append(lines, strings.Repeat("  ", depth)+d)
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return lines
}
