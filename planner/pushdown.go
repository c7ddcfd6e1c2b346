package planner

import "strconv"

// PicksBeforeFilter returns a plan equal to p = Project(Filter(x, cond)) that picks the
// columns and ROW fields p reads before filtering: Project(Filter(Project(x, picks +
// the columns cond reads), cond), p's expressions over the picks). A filter copies
// whole rows of what it keeps, so this has it copy the picked columns only (a view
// over Nexmark's events table filters rows of three ROW columns and keeps some of one's
// fields). Picks cannot fail, so computing them for rows the filter drops changes
// nothing; every other expression (one that may fail, or costs) stays after the filter.
// ok is false when p is not of that shape, or the picks are x's columns as they are.
//
// It is a physical choice, made when a job is built: the logical plan, which EXPLAIN
// prints and from which stateful operators take their identity, keeps the user's order.
func PicksBeforeFilter(p *Project) (*Project, bool) {
	f, ok := p.Input.(*Filter)
	if !ok {
		return nil, false
	}
	picks := &Project{Input: f.Input}
	at := map[string]int{} // a pick, by pickKey, -> its column among the picks
	add := func(e Expr, name string) *ColumnRef {
		k := pickKey(e)
		i, ok := at[k]
		if !ok {
			i = len(picks.Exprs)
			at[k] = i
			picks.Exprs = append(picks.Exprs, e)
			picks.Names = append(picks.Names, name)
		}
		return &ColumnRef{Index: i, Name: picks.Names[i], T: e.Type()}
	}
	exprs := make([]Expr, len(p.Exprs))
	for i, e := range p.Exprs {
		if isPick(e) { // the whole expression: the pick takes its name
			exprs[i] = add(e, p.Names[i])
			continue
		}
		exprs[i] = mapPicks(e, func(pick Expr) Expr {
			name := pick.String()
			if c, ok := pick.(*ColumnRef); ok {
				name = c.Name
			}
			return add(pick, name)
		})
	}
	// The condition reads whole columns of x, under their names (so that it reads,
	// and fails, as written).
	cond := mapColumns(f.Cond, func(c *ColumnRef) Expr {
		r := add(c, c.Name)
		r.Name = c.Name
		return r
	})
	if len(picks.Exprs) >= len(f.Input.Schema()) && onlyColumns(picks.Exprs) {
		return nil, false // nothing to leave behind
	}
	filter := &Filter{Input: picks, Cond: cond}
	return &Project{Input: filter, Exprs: exprs, Names: p.Names}, true
}

// MergePicks returns p = Project(Project(x, picks)) as one projection over x, when each
// of the inner projection's expressions is a pick (so that p's expressions may read
// them twice at no cost); ok is false otherwise. A job builder merges them so that a
// filter below sees every pick the two make (PicksBeforeFilter): a query that keeps
// some fields of a view that keeps a ROW's fields.
func MergePicks(p *Project) (*Project, bool) {
	inner, ok := p.Input.(*Project)
	if !ok {
		return nil, false
	}
	for _, e := range inner.Exprs {
		if !isPick(e) {
			return nil, false
		}
	}
	exprs := make([]Expr, len(p.Exprs))
	for i, e := range p.Exprs {
		exprs[i] = substitute(e, inner.Exprs)
	}
	return &Project{Input: inner.Input, Exprs: exprs, Names: p.Names}, true
}

// isPick says whether e is a column, or a field of a ROW that is a pick.
func isPick(e Expr) bool {
	switch e := e.(type) {
	case *ColumnRef:
		return true
	case *Call:
		return e.Fn == FnField && len(e.Args) == 2 && isPick(e.Args[0])
	}
	return false
}

// pickKey names a pick: its column and the fields it follows.
func pickKey(e Expr) string {
	if c, ok := e.(*Call); ok {
		return pickKey(c.Args[0]) + "." + c.Args[1].String()
	}
	return "$" + strconv.Itoa(e.(*ColumnRef).Index)
}

// mapPicks replaces each largest pick in e by f of it.
func mapPicks(e Expr, f func(Expr) Expr) Expr {
	return mapExpr(e, func(x Expr) (Expr, bool) {
		if isPick(x) {
			return f(x), true
		}
		return nil, false
	})
}

func onlyColumns(exprs []Expr) bool {
	for _, e := range exprs {
		if _, ok := e.(*ColumnRef); !ok {
			return false
		}
	}
	return true
}
