package planner

// PicksBeforeFilter returns a plan equal to p = Project(Filter(x, cond)) that picks p's
// columns before filtering, when each of p's expressions only picks a column or a ROW's
// field: Project(Filter(Project(x, picks + the columns cond reads), cond)), the top
// projection keeping the picks (a zero-copy pass of columns). A filter copies whole rows of what it keeps, so this
// has it copy the picked columns only (a view over Nexmark's events table filters rows
// of three ROW columns and keeps one's fields). Picks cannot fail, so computing them for
// rows the filter drops changes nothing. ok is false when p is not of that shape.
//
// It is a physical choice, made when a job is built: the logical plan, which EXPLAIN
// prints and from which stateful operators take their identity, keeps the user's order.
func PicksBeforeFilter(p *Project) (*Project, bool) {
	f, ok := p.Input.(*Filter)
	if !ok {
		return nil, false
	}
	for _, e := range p.Exprs {
		if !isPick(e) {
			return nil, false
		}
	}
	picks := &Project{Input: f.Input, Exprs: append([]Expr(nil), p.Exprs...), Names: append([]string(nil), p.Names...)}
	// A column of x -> its position among the picks, where it keeps its name (so that
	// the condition reads, and fails, as written).
	at := map[int]int{}
	for i, e := range p.Exprs {
		if c, ok := e.(*ColumnRef); ok && p.Names[i] == c.Name {
			if _, seen := at[c.Index]; !seen {
				at[c.Index] = i
			}
		}
	}
	cond := mapColumns(f.Cond, func(c *ColumnRef) Expr {
		i, ok := at[c.Index]
		if !ok {
			i = len(picks.Exprs)
			at[c.Index] = i
			picks.Exprs = append(picks.Exprs, c)
			picks.Names = append(picks.Names, c.Name)
		}
		return &ColumnRef{Index: i, Name: picks.Names[i], T: c.T}
	})
	filter := &Filter{Input: picks, Cond: cond}
	return &Project{Input: filter, Exprs: columnRefs(p.Schema()), Names: p.Names}, true
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
