package planner

import "fmt"

// LateDataSink is the table option that routes a table's late rows, those that reach a
// window aggregate after their window fired, into another table instead of only
// counting them.
const LateDataSink = "late-data.sink"

// LateRows says where a window aggregate sends its late rows: into Table, as the rows
// of the table its window function reads, which its input carries as columns Cols.
type LateRows struct {
	Table string
	Cols  []int
	From  string // the table whose rows they are
}

// routeLateRows makes a window aggregate over a table with a 'late-data.sink' carry the
// table's columns through the projections between its window function and itself.
func routeLateRows(n Node) Node {
	agg, ok := n.(*Aggregate)
	if !ok || agg.Window == nil || agg.Late != nil {
		return n
	}
	input, cols, late := carryTableColumns(agg.Input)
	if late == nil {
		return n
	}
	c := *agg
	late.Cols = cols
	c.Input, c.Late = input, late
	return &c
}

// carryTableColumns rebuilds n, a chain of projections and filters over a window
// function, so that its output also has the columns of the table the window function
// reads, and returns their indexes and where the table's late rows go (nil when it
// has no late-data sink, and n is returned as it is).
func carryTableColumns(n Node) (Node, []int, *LateRows) {
	switch x := n.(type) {
	case *WindowTVF:
		var table *Table
		Walk(x.Input, func(n Node) {
			if s, ok := n.(*Scan); ok {
				table = s.Table
			}
		})
		sink, ok := table.Option(LateDataSink)
		if !ok {
			return n, nil, nil
		}
		cols := make([]int, len(x.Input.Schema()))
		for i := range cols {
			cols[i] = i
		}
		return x, cols, &LateRows{Table: sink, From: table.Name}
	case *Filter:
		in, cols, sink := carryTableColumns(x.Input)
		return &Filter{Input: in, Cond: x.Cond}, cols, sink
	case *Project:
		in, cols, sink := carryTableColumns(x.Input)
		if sink == nil {
			return n, nil, nil
		}
		p := &Project{Input: in, Exprs: append([]Expr(nil), x.Exprs...), Names: append([]string(nil), x.Names...)}
		schema := in.Schema()
		for i, c := range cols {
			cols[i] = len(p.Exprs)
			p.Exprs = append(p.Exprs, &ColumnRef{Index: c, Name: schema[c].Name, T: schema[c].Type})
			p.Names = append(p.Names, fmt.Sprintf("$late:%s", schema[c].Name))
		}
		return p, cols, sink
	}
	return n, nil, nil
}
