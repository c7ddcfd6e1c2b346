package planner

import (
	"fmt"
	"strings"
)

// Sort orders all of its input by Keys, as ORDER BY without LIMIT does. Its output is
// insert-only, in order, from one task. Two forms, as Flink plans them:
//   - ByTime: the first key is an event-time attribute, ascending, of an insert-only
//     input. Rows wait until the watermark passes their time, then the rows it passed
//     are emitted sorted by all the keys (later keys order rows of one time). A row at
//     or before the watermark when it arrives is late: dropped and counted.
//   - otherwise the input is bounded (every source ends): the rows are kept (an
//     updating input's changes applied) and emitted sorted when the input ends.
//
// NULL orders before any value ascending, after every value descending; rows with equal
// keys keep their order of arrival.
type Sort struct {
	Input  Node
	Keys   []SortKey
	ByTime bool
}

func (n *Sort) Schema() Schema   { return n.Input.Schema() }
func (n *Sort) Children() []Node { return []Node{n.Input} }
func (n *Sort) Updating() bool   { return false }

func (n *Sort) Describe() string {
	in := n.Input.Schema()
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = in[k.Col].Name + " ASC"
		if k.Desc {
			keys[i] = in[k.Col].Name + " DESC"
		}
	}
	name := "Sort"
	if n.ByTime {
		name = "TemporalSort"
	}
	return fmt.Sprintf("%s(orderBy=[%s])", name, strings.Join(keys, ", "))
}

// sortMeaning is what decides a Sort's state: its keys as the expressions its input
// computes, and its form.
func sortMeaning(n *Sort) string {
	col := columnSQL(n.Input)
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = col(k.Col)
		if k.Desc {
			keys[i] += " DESC"
		}
	}
	return fmt.Sprintf("Sort(orderBy=[%s], byTime=[%v])", strings.Join(keys, ", "), n.ByTime)
}

// bounded reports whether every source under n ends: VALUES, and tables whose connector
// says so (Planner.Bounded).
func (p *Planner) bounded(n Node) bool {
	switch n := n.(type) {
	case *Scan:
		return p.Bounded != nil && p.Bounded(n.Table)
	case *Values:
		return true
	}
	children := n.Children()
	for _, c := range children {
		if !p.bounded(c) {
			return false
		}
	}
	return len(children) > 0
}
