package planner

import "slices"

// pushIntoJoins moves the conditions that read one side of a join only below the join,
// onto that side, as Flink's planner does: the conjuncts of a filter over a join
// (WHERE) and of its residual ON condition. The join then stores, and pairs, only the
// rows that may pass (q20 keeps the auctions of one category, not all of them, and no
// longer builds a joined row of every bid to drop four in five).
//
// A condition moves only where the result stays the same: onto a side whose rows it
// decides alone. A WHERE condition moves onto an inner join's sides, an outer join's
// preserved side, or a semi or anti join's left side; an ON condition onto an inner
// join's sides or an outer join's padded side (a preserved row that fails it is still
// emitted, padded). A condition that is not deterministic, or reads the watermark or
// the clock, stays where it is written, as does a scalar subquery's join.
func pushIntoJoins(n Node) Node {
	switch x := n.(type) {
	case *Filter:
		j, ok := x.Input.(*Join)
		if !ok {
			return n
		}
		left, right := j.Kind == "INNER" || j.Kind == "LEFT" || j.Semi(), j.Kind == "INNER" || j.Kind == "RIGHT"
		pushed, stay := pushOnto(j, conjuncts(x.Cond), left, right)
		pushed, stay = timeInto(pushed, stay)
		if pushed == j {
			return n
		}
		if len(stay) == 0 {
			return pushed
		}
		return &Filter{Input: pushed, Cond: and(stay)}
	case *Join:
		if x.Residual == nil || x.Scalar != "" || x.Semi() {
			return n
		}
		left, right := x.Kind == "INNER" || x.Kind == "RIGHT", x.Kind == "INNER" || x.Kind == "LEFT"
		pushed, stay := pushOnto(x, conjuncts(x.Residual), left, right)
		if pushed == x {
			return n
		}
		pushed.Residual = nil
		if len(stay) > 0 {
			pushed.Residual = and(stay)
		}
		return pushed
	}
	return n
}

// pushOnto returns j with the conditions of conds (over j's schema) that read only its
// left side (if left) or only its right side (if right) filtering that side, and the
// conditions that stay. It returns j itself when none moves.
func pushOnto(j *Join, conds []Expr, left, right bool) (*Join, []Expr) {
	nl := len(j.Left.Schema())
	var toLeft, toRight, stay []Expr
	for _, c := range conds {
		lo, hi := columnSpan(c)
		switch {
		case lo < 0 || !movable(c):
			stay = append(stay, c) // a constant condition, or one that must stay
		case left && hi < nl:
			toLeft = append(toLeft, c)
		case right && lo >= nl:
			toRight = append(toRight, shiftColumns(c, -nl))
		default:
			stay = append(stay, c)
		}
	}
	if len(toLeft) == 0 && len(toRight) == 0 {
		return j, conds
	}
	c := *j
	if len(toLeft) > 0 {
		c.Left = pushIntoJoins(&Filter{Input: j.Left, Cond: and(toLeft)})
	}
	if len(toRight) > 0 {
		c.Right = pushIntoJoins(&Filter{Input: j.Right, Cond: and(toRight)})
	}
	return &c, stay
}

// timeInto moves the bounds on a left and a right time among conds, the conditions of
// a WHERE over j, into j's condition when they make it an interval join (see timeJoin),
// as Flink's planner moves a WHERE into an inner join's condition. It returns j itself
// when none moves.
func timeInto(j *Join, conds []Expr) (*Join, []Expr) {
	if j.Kind != "INNER" || j.Interval != nil || j.Window != nil || j.Scalar != "" || j.Left.Updating() || j.Right.Updating() {
		return j, conds
	}
	var own []Expr
	if j.Residual != nil {
		own = conjuncts(j.Residual)
	}
	c := *j
	rest := timeJoin(&c, append(slices.Clip(own), conds...))
	if c.Interval == nil {
		return j, conds
	}
	var residual, stay []Expr
	for _, e := range rest {
		if slices.Contains(own, e) {
			residual = append(residual, e)
		} else {
			stay = append(stay, e)
		}
	}
	c.Residual = nil
	if len(residual) > 0 {
		c.Residual = and(residual)
	}
	return &c, stay
}

// columnSpan returns the least and greatest column e reads; -1, -1 if it reads none.
func columnSpan(e Expr) (lo, hi int) {
	lo, hi = -1, -1
	walkColumns(e, func(c *ColumnRef) {
		if lo < 0 || c.Index < lo {
			lo = c.Index
		}
		hi = max(hi, c.Index)
	})
	return lo, hi
}

// movable says whether e gives the same answer for a row wherever it is evaluated: it
// calls no function that is random, or reads the clock or the watermark.
func movable(e Expr) bool {
	ok := true
	mapExpr(e, func(x Expr) (Expr, bool) {
		if c, is := x.(*Call); is {
			switch c.Fn {
			case FnRand, FnRandInteger, FnUUID, FnCurrentTS, FnCurrentDate, FnUnixTimestamp, FnProctime, FnCurrentWatermark:
				ok = false
			}
		}
		return nil, false
	})
	return ok
}

// pruneJoinColumns narrows the inputs of a join under a projection (through the
// filters between them) to the columns that the projection, the filters and the join
// itself read, as Flink's planner does: a join stores its inputs' rows, so a column it
// stores for nothing costs memory and time for every row (q4 reads four of the
// auction's ten columns and three of the bid's seven).
func pruneJoinColumns(n Node) Node {
	p, ok := n.(*Project)
	if !ok {
		return n
	}
	var filters []*Filter // from the top
	below := p.Input
	for f, ok := below.(*Filter); ok; f, ok = below.(*Filter) {
		filters = append(filters, f)
		below = f.Input
	}
	j, ok := below.(*Join)
	if !ok {
		return n
	}
	nl, nr := len(j.Left.Schema()), len(j.Right.Schema())
	used := make([]bool, nl+nr)
	mark := func(e Expr) { walkColumns(e, func(c *ColumnRef) { used[c.Index] = true }) }
	for _, e := range p.Exprs {
		mark(e)
	}
	for _, f := range filters {
		mark(f.Cond)
	}
	for i := range j.LeftKeys {
		used[j.LeftKeys[i]], used[nl+j.RightKeys[i]] = true, true
	}
	if j.Residual != nil {
		mark(j.Residual)
	}
	if j.Interval != nil || j.Window != nil {
		used[j.LeftTime], used[nl+j.RightTime] = true, true
	}
	left, leftAt := keptColumns(j.Left, used[:nl])
	right, rightAt := keptColumns(j.Right, used[nl:])
	if left == j.Left && right == j.Right {
		return n
	}
	c := *j
	c.Left, c.Right = left, right
	c.LeftKeys, c.RightKeys = remap(j.LeftKeys, leftAt), remap(j.RightKeys, rightAt)
	if j.Interval != nil || j.Window != nil {
		c.LeftTime, c.RightTime = leftAt[j.LeftTime], rightAt[j.RightTime]
	}
	// The residual reads both sides, also of a semi join, whose rows are its left's.
	schema := append(left.Schema(), right.Schema()...)
	if !c.Semi() {
		schema = c.Schema()
	}
	moved := func(e Expr) Expr {
		return mapColumns(e, func(r *ColumnRef) Expr {
			i := 0
			if r.Index < nl {
				i = leftAt[r.Index]
			} else {
				i = len(left.Schema()) + rightAt[r.Index-nl]
			}
			return &ColumnRef{Index: i, Name: schema[i].Name, T: r.T}
		})
	}
	if j.Residual != nil {
		c.Residual = moved(j.Residual)
	}
	return reproject(&c, filters, p, moved)
}

// reproject puts the filters (from the top) and the projection p back above n, which
// narrowed their input, with moved mapping their column references onto n's.
func reproject(n Node, filters []*Filter, p *Project, moved func(Expr) Expr) *Project {
	for i := len(filters) - 1; i >= 0; i-- {
		n = &Filter{Input: n, Cond: moved(filters[i].Cond)}
	}
	exprs := make([]Expr, len(p.Exprs))
	for i, e := range p.Exprs {
		exprs[i] = moved(e)
	}
	return &Project{Input: n, Exprs: exprs, Names: p.Names}
}

// keptColumns returns n narrowed to its used columns, and where each kept column of n
// is then; n itself when it keeps them all. It keeps one column at least, so that a
// join that reads none of a side still sees its rows. A projection below takes the
// narrowing into its own expressions.
func keptColumns(n Node, used []bool) (Node, []int) {
	at := make([]int, len(used))
	var keep []int
	for i, u := range used {
		if u || (i == len(used)-1 && len(keep) == 0) {
			at[i] = len(keep)
			keep = append(keep, i)
		}
	}
	if len(keep) == len(used) {
		return n, at
	}
	schema := n.Schema()
	p := &Project{Input: n}
	inner, merge := n.(*Project)
	if merge {
		p.Input = inner.Input
	}
	for _, i := range keep {
		var e Expr = &ColumnRef{Index: i, Name: schema[i].Name, T: schema[i].Type}
		if merge {
			e = inner.Exprs[i]
		}
		p.Exprs, p.Names = append(p.Exprs, e), append(p.Names, schema[i].Name)
	}
	return p, at
}

func remap(cols, at []int) []int {
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = at[c]
	}
	return out
}
