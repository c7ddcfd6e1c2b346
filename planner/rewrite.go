package planner

import "slices"

// rewrites are applied bottom-up, in order, to every node of a plan.
var rewrites = []func(Node) Node{
	pushIntoJoins,
	pruneRowNumber,
	pruneRankColumns,
	pruneJoinColumns,
	mergeProjects,
	pruneRowNumber,   // again: a merged projection may no longer read the row number,
	pruneRankColumns, // nor every column of a Rank
	removeIdentityProject,
	routeLateRows,
}

func rewrite(n Node) Node {
	switch x := n.(type) {
	case *Filter:
		n = &Filter{Input: rewrite(x.Input), Cond: x.Cond}
	case *Project:
		n = &Project{Input: rewrite(x.Input), Exprs: x.Exprs, Names: x.Names}
	case *Aggregate:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *Sink:
		n = &Sink{Input: rewrite(x.Input), Table: x.Table}
	case *WatermarkAssigner:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *WindowTVF:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *Join:
		c := *x
		c.Left, c.Right = rewrite(x.Left), rewrite(x.Right)
		n = &c
	case *Rank:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *TemporalJoin:
		c := *x
		c.Left, c.Right = rewrite(x.Left), rewrite(x.Right)
		n = &c
	case *Expand:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *OverAggregate:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *Sort:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *LookupJoin:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *MatchRecognize:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *Unnest:
		c := *x
		c.Input = rewrite(x.Input)
		n = &c
	case *Replicate:
		n = &Replicate{Input: rewrite(x.Input), Count: x.Count}
	case *Union:
		c := &Union{}
		for _, in := range x.Inputs {
			c.Inputs = append(c.Inputs, rewrite(in))
		}
		n = c
	}
	for _, r := range rewrites {
		n = r(n)
	}
	return n
}

// mergeProjects folds a projection into the one below it when the lower one only picks
// columns or constants, so no computation is duplicated.
func mergeProjects(n Node) Node {
	outer, ok := n.(*Project)
	if !ok {
		return n
	}
	inner, ok := outer.Input.(*Project)
	if !ok {
		return n
	}
	for _, e := range inner.Exprs {
		switch e.(type) {
		case *ColumnRef, *Literal:
		default:
			return n
		}
	}
	exprs := make([]Expr, len(outer.Exprs))
	for i, e := range outer.Exprs {
		exprs[i] = substitute(e, inner.Exprs)
	}
	return &Project{Input: inner.Input, Exprs: exprs, Names: outer.Names}
}

func substitute(e Expr, with []Expr) Expr {
	return mapColumns(e, func(c *ColumnRef) Expr { return with[c.Index] })
}

// ReadsWatermark reports whether e calls CURRENT_WATERMARK.
func ReadsWatermark(e Expr) bool {
	switch e := e.(type) {
	case *Call:
		if e.Fn == FnCurrentWatermark {
			return true
		}
		for _, a := range e.Args {
			if ReadsWatermark(a) {
				return true
			}
		}
	case *Cast:
		return ReadsWatermark(e.X)
	case *Case:
		if ReadsWatermark(e.Else) {
			return true
		}
		for _, w := range e.Whens {
			if ReadsWatermark(w.Cond) || ReadsWatermark(w.Result) {
				return true
			}
		}
	}
	return false
}

// mapColumns rebuilds e with every column reference replaced by what f returns for it.
func mapColumns(e Expr, f func(*ColumnRef) Expr) Expr {
	return mapExpr(e, func(x Expr) (Expr, bool) {
		if c, ok := x.(*ColumnRef); ok {
			return f(c), true
		}
		return nil, false
	})
}

// mapExpr rebuilds e with each largest subexpression that f replaces (returning true)
// replaced by what f returns.
func mapExpr(e Expr, f func(Expr) (Expr, bool)) Expr {
	if r, ok := f(e); ok {
		return r
	}
	switch e := e.(type) {
	case *Call:
		args := make([]Expr, len(e.Args))
		for i, a := range e.Args {
			args[i] = mapExpr(a, f)
		}
		return &Call{Fn: e.Fn, Args: args, T: e.T}
	case *Cast:
		return &Cast{X: mapExpr(e.X, f), T: e.T, Try: e.Try}
	case *Case:
		c := &Case{Else: mapExpr(e.Else, f), T: e.T}
		for _, w := range e.Whens {
			c.Whens = append(c.Whens, When{Cond: mapExpr(w.Cond, f), Result: mapExpr(w.Result, f)})
		}
		return c
	}
	return e
}

// removeIdentityProject drops a projection that passes its input through unchanged.
func removeIdentityProject(n Node) Node {
	p, ok := n.(*Project)
	if !ok {
		return n
	}
	in := p.Input.Schema()
	if len(p.Exprs) != len(in) {
		return n
	}
	for i, e := range p.Exprs {
		c, ok := e.(*ColumnRef)
		if !ok || c.Index != i || p.Names[i] != in[i].Name || c.T != in[i].Type {
			return n
		}
	}
	return p.Input
}

// Narrowed returns e over the columns it reads alone, renumbered in order, and those
// columns: an operator that builds rows only to evaluate e (a join's residual over its
// pairs) builds just these.
func Narrowed(e Expr) (Expr, []int) {
	var cols []int
	walkColumns(e, func(c *ColumnRef) {
		if !slices.Contains(cols, c.Index) {
			cols = append(cols, c.Index)
		}
	})
	slices.Sort(cols)
	return mapColumns(e, func(c *ColumnRef) Expr {
		i, _ := slices.BinarySearch(cols, c.Index)
		return &ColumnRef{Index: i, Name: c.Name, T: c.T}
	}), cols
}
