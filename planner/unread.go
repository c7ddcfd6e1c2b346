package planner

import (
	"slices"
	"strings"
)

// Reads is what a plan reads of each column of a node's output: nothing, the whole
// column, or some fields of a ROW column.
type Reads []ColumnReads

// ColumnReads is what a plan reads of one column.
type ColumnReads struct {
	Whole  bool
	Fields map[int]bool // of a ROW column read only in part: the fields read
}

func (c ColumnReads) read() bool { return c.Whole || len(c.Fields) > 0 }

// Add adds what o reads to c.
func (c *ColumnReads) Add(o ColumnReads) {
	if o.Whole {
		c.Whole = true
	}
	for f := range o.Fields {
		if c.Fields == nil {
			c.Fields = map[int]bool{}
		}
		c.Fields[f] = true
	}
}

// ScanReads returns, for each scan of plan root, what the plan reads of its columns,
// so that a source may leave the rest empty (Flink's projection push-down, nested
// fields included). It follows the projections, filters and watermarks above each
// scan, and the window functions and aggregates (which read their keys and
// arguments); past any other operator every column counts as read. Every expression a
// projection computes counts as read, used or not, since computing it may fail.
func ScanReads(root Node) map[*Scan]Reads {
	out := map[*Scan]Reads{}
	var walk func(n Node, reads Reads)
	walk = func(n Node, reads Reads) {
		switch n := n.(type) {
		case *Scan:
			all := out[n]
			if all == nil {
				all = make(Reads, len(n.Schema()))
				out[n] = all
			}
			for i, r := range reads {
				all[i].Add(r)
			}
		case *Project:
			in := make(Reads, len(n.Input.Schema()))
			for i, e := range n.Exprs {
				switch {
				case isColumn(e):
					in[e.(*ColumnRef).Index].Add(reads[i])
				case isFieldOfColumn(e):
					if reads[i].read() {
						readExpr(in, e)
					}
				default:
					readExpr(in, e)
				}
			}
			walk(n.Input, in)
		case *Filter:
			in := reads.clone(len(reads))
			readExpr(in, n.Cond)
			walk(n.Input, in)
		case *WatermarkAssigner:
			in := reads.clone(len(reads))
			in[n.TimeCol].Whole = true
			readExpr(in, n.Expr)
			walk(n.Input, in)
		case *WindowTVF:
			in := reads.clone(len(n.Input.Schema())) // of the columns before the window's
			for _, c := range append([]int{n.TimeCol}, n.PartitionBy...) {
				in[c].Whole = true
			}
			walk(n.Input, in)
		case *Aggregate:
			in := make(Reads, len(n.Input.Schema()))
			cols := slices.Clone(n.Keys)
			for _, call := range n.Aggs {
				cols = append(cols, call.Inputs()...)
			}
			if n.Late != nil {
				cols = append(cols, n.Late.Cols...)
			}
			for _, c := range cols {
				in[c].Whole = true
			}
			walk(n.Input, in)
		default:
			for _, c := range n.Children() {
				walk(c, wholeReads(len(c.Schema())))
			}
		}
	}
	walk(root, wholeReads(len(root.Schema())))
	return out
}

// clone returns a copy of reads' first n columns.
func (reads Reads) clone(n int) Reads {
	out := make(Reads, n)
	for i := range out {
		out[i].Add(reads[i])
	}
	return out
}

func wholeReads(n int) Reads {
	r := make(Reads, n)
	for i := range r {
		r[i].Whole = true
	}
	return r
}

func isColumn(e Expr) bool {
	_, ok := e.(*ColumnRef)
	return ok
}

// isFieldOfColumn reports whether e is a field of a column, x.f.
func isFieldOfColumn(e Expr) bool {
	c, ok := e.(*Call)
	return ok && c.Fn == FnField && isColumn(c.Args[0])
}

// readExpr adds to reads what e reads: the fields it takes of columns, and the
// columns it reads otherwise.
func readExpr(reads Reads, e Expr) {
	switch e := e.(type) {
	case *ColumnRef:
		reads[e.Index].Whole = true
	case *Call:
		if isFieldOfColumn(e) {
			if lit, ok := e.Args[1].(*Literal); ok {
				if k, ok := lit.Value.(int32); ok {
					reads[e.Args[0].(*ColumnRef).Index].Add(ColumnReads{Fields: map[int]bool{int(k): true}})
					return
				}
			}
		}
		for _, a := range e.Args {
			readExpr(reads, a)
		}
	case *Cast:
		readExpr(reads, e.X)
	case *Case:
		for _, w := range e.Whens {
			readExpr(reads, w.Cond)
			readExpr(reads, w.Result)
		}
		readExpr(reads, e.Else)
	}
}

// Unread names what reads leaves unread of schema's columns: a column ("person"), or a
// field of a ROW column ("bid.extra"), in lower case.
func (reads Reads) Unread(schema Schema) []string {
	var out []string
	for i, c := range schema {
		name := strings.ToLower(c.Name)
		r := reads[i]
		switch {
		case r.Whole:
		case !r.read():
			out = append(out, name)
		default:
			for f, fc := range c.Type.Fields() {
				if !r.Fields[f] {
					out = append(out, name+"."+strings.ToLower(fc.Name))
				}
			}
		}
	}
	return out
}
