package planner

import (
	"errors"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// Subqueries in expressions, planned as Flink's planner does:
//   - a WHERE conjunct `x [NOT] IN (query)`, `[NOT] EXISTS (query)` is a semi join (IN,
//     EXISTS) or an anti join (NOT IN, NOT EXISTS) of the query's input with the
//     subquery: the left rows pass while they have (semi) or lack (anti) a match. The
//     subquery may be correlated through its WHERE: the conditions that name the outer
//     query's columns become the join's condition, their equalities its keys;
//   - a scalar subquery, `(SELECT MAX(v) FROM t)` in the SELECT list or WHERE, is a LEFT
//     join without keys with the subquery's one row (NULL while it has none; a second row
//     fails the job).
//
// NOT IN follows SQL's NULL rules: the left row is dropped when its value equals one of
// the subquery's, or is NULL while the subquery has rows, or the subquery holds a NULL.
// The anti join's condition is then `x = y IS NOT FALSE`, which has no equal keys when
// either side may be NULL, so it runs in one task, as in Flink.

// hasSubquery reports whether e holds a subquery (not looking into the subqueries).
func hasSubquery(e parser.Expr) bool {
	found := false
	walkExpr(e, func(x parser.Expr) {
		switch x := x.(type) {
		case *parser.ExistsExpr, *parser.SubqueryExpr:
			found = true
		case *parser.InExpr:
			found = found || x.Query != nil
		}
	})
	return found
}

// scalarSubqueries lists the scalar subqueries of e, outermost first.
func scalarSubqueries(e parser.Expr, out []*parser.SubqueryExpr) []*parser.SubqueryExpr {
	walkExpr(e, func(x parser.Expr) {
		if s, ok := x.(*parser.SubqueryExpr); ok {
			out = append(out, s)
		}
	})
	return out
}

// subqueryPredicate is a WHERE conjunct that is a semi or anti join: `x [NOT] IN (q)`
// (x set) or `[NOT] EXISTS (q)`.
type subqueryPredicate struct {
	at    parser.Expr
	x     parser.Expr // nil for EXISTS
	query *parser.Query
	anti  bool
}

// splitSubqueryPredicates takes the conjuncts of where that are subquery predicates out
// of it, returning them and the rest of the condition (nil when nothing is left).
func splitSubqueryPredicates(where parser.Expr) ([]subqueryPredicate, parser.Expr) {
	var preds []subqueryPredicate
	var rest parser.Expr
	for _, c := range astConjuncts(where, nil) {
		if p, ok := asSubqueryPredicate(c); ok {
			preds = append(preds, p)
			continue
		}
		if rest == nil {
			rest = c
		} else {
			rest = &parser.BinaryExpr{Pos: rest.Position(), Op: "AND", Left: rest, Right: c}
		}
	}
	return preds, rest
}

func asSubqueryPredicate(e parser.Expr) (subqueryPredicate, bool) {
	anti := false
	at := e
	if u, ok := e.(*parser.UnaryExpr); ok && u.Op == "NOT" {
		anti, e = true, u.X
	}
	switch x := e.(type) {
	case *parser.ExistsExpr:
		return subqueryPredicate{at: at, query: x.Query, anti: anti}, true
	case *parser.InExpr:
		if x.Query != nil {
			return subqueryPredicate{at: at, x: x.X, query: x.Query, anti: anti != x.Not}, true
		}
	}
	return subqueryPredicate{}, false
}

// simpleBlock reports whether q is a plain SELECT ... FROM ... [WHERE ...]: one whose
// WHERE may name the enclosing query's columns (and hold subqueries of its own, which
// may not).
func simpleBlock(q *parser.Query) bool {
	if len(q.With) > 0 || q.Set != nil || q.Values != nil || q.From == nil || len(q.GroupBy) > 0 ||
		q.Having != nil || q.Distinct || q.OrderBy != nil || q.Limit != nil {
		return false
	}
	for _, it := range q.Items {
		if !it.Star && (containsAgg(it.Expr) || hasOver(it.Expr) || hasSubquery(it.Expr)) {
			return false
		}
	}
	return true
}

func hasOver(e parser.Expr) bool {
	found := false
	walkExpr(e, func(x parser.Expr) {
		_, ok := x.(*parser.OverExpr)
		found = found || ok
	})
	return found
}

// semiJoin plans one subquery predicate over left, whose columns sc names.
func (p *Planner) semiJoin(left Node, sc *scope, pred subqueryPredicate, depth int) (Node, error) {
	nl := len(left.Schema())
	// The outer values an IN compares: (a, b) IN (SELECT c, d ...) compares two.
	var xs []Expr
	if pred.x != nil {
		items := []parser.Expr{pred.x}
		if f, ok := pred.x.(*parser.FuncCall); ok && f.Name == "ROW" {
			items = f.Args
		}
		b := &exprBinder{sc: sc}
		for _, it := range items {
			if hasSubquery(it) {
				return nil, errorf(it, "a subquery cannot be the left operand of IN")
			}
			x, err := b.bind(it)
			if err != nil {
				return nil, err
			}
			xs = append(xs, x)
		}
	}
	var right Node
	var ys []Expr    // the subquery's values an IN compares, over right's columns
	var conds []Expr // the correlation, over left's columns then right's
	var err error
	if simpleBlock(pred.query) {
		right, ys, conds, err = p.correlated(pred, sc, nl, depth)
	} else {
		right, _, err = p.query(pred.query, depth+1)
		err = outerHint(err, sc, "only a subquery without GROUP BY, HAVING, DISTINCT, aggregates, set operations, ORDER BY or LIMIT may name the outer query's columns")
		if err == nil && pred.x != nil {
			ys = columnRefs(right.Schema())
		}
	}
	if err != nil {
		return nil, err
	}
	if pred.x != nil && len(ys) != len(xs) {
		return nil, errorf(pred.at, "IN compares %d value(s) with a subquery of %d column(s)", len(xs), len(ys))
	}
	proj := narrowRight(right, ys, conds, nl)
	// An outer value that is not a column is computed into a column of its own, which
	// the join's output drops again.
	ls := left.Schema()
	lproj := &Project{Input: left, Exprs: columnRefs(ls), Names: schemaNames(ls)}
	for i, x := range xs {
		if _, ok := x.(*ColumnRef); !ok {
			lproj.Exprs = append(lproj.Exprs, x)
			lproj.Names = append(lproj.Names, "$x"+itoa(i))
			xs[i] = &ColumnRef{Index: len(lproj.Exprs) - 1, Name: lproj.Names[len(lproj.Names)-1], T: x.Type()}
		}
	}
	nlx := len(lproj.Exprs)
	if nlx != nl {
		left = lproj
		for i, c := range conds {
			conds[i] = mapColumns(c, func(r *ColumnRef) Expr {
				if r.Index < nl {
					return r
				}
				return &ColumnRef{Index: r.Index - nl + nlx, Name: r.Name, T: r.T}
			})
		}
	}
	b := &exprBinder{}
	var nullable []Expr
	for i, x := range xs {
		y := &ColumnRef{Index: nlx + i, Name: proj.Names[i], T: ys[i].Type()}
		eq, err := b.operator(pred.at, FnEq, x, y)
		if err != nil {
			return nil, errorf(pred.at, "IN compares %s with a subquery column of type %s", x.Type().Nullable(), y.T.Nullable())
		}
		if pred.anti && (!x.Type().NotNull || !y.T.NotNull) {
			nullable = append(nullable, eq)
		} else {
			conds = append(conds, eq)
		}
	}
	if len(nullable) > 0 {
		// NOT IN: a row is out when the comparison is TRUE or UNKNOWN.
		conds = append(conds, &Call{Fn: FnIsNotFalse, Args: []Expr{and(nullable)}, T: Type{Kind: Boolean, NotNull: true}})
	}
	kind := "SEMI"
	if pred.anti {
		kind = "ANTI"
	}
	n := &Join{Left: left, Right: proj, Kind: kind}
	var residual []Expr
	for _, c := range conds {
		if l, r, ok := equiKey(c, nlx); ok {
			n.LeftKeys, n.RightKeys = append(n.LeftKeys, l), append(n.RightKeys, r-nlx)
			continue
		}
		residual = append(residual, c)
	}
	if len(residual) > 0 {
		n.Residual = and(residual)
	}
	// Correlated on the window_start and window_end of the same window on both sides, it
	// is a window semi or anti join, insert-only, whose rows go when the window closes.
	if !left.Updating() && !proj.Updating() {
		windowJoin(n)
	}
	if nlx != nl {
		return &Project{Input: n, Exprs: columnRefs(ls), Names: schemaNames(ls)}, nil
	}
	return n, nil
}

// narrowRight projects a subquery's rows to what a join with it reads: the values ys an
// IN compares (or a scalar subquery's value), then the columns the correlation conds
// name, which it rewrites to read the projection (right columns follow the nl left
// ones). With nothing to read, a constant stands for each row, so that equal rows fold
// into one stored row.
func narrowRight(right Node, ys []Expr, conds []Expr, nl int) *Project {
	rs := right.Schema()
	proj := &Project{Input: right}
	for i, y := range ys {
		proj.Exprs = append(proj.Exprs, y)
		proj.Names = append(proj.Names, "$in"+itoa(i))
	}
	pos := map[int]int{}
	for _, c := range conds {
		walkColumns(c, func(r *ColumnRef) {
			if r.Index >= nl {
				if _, ok := pos[r.Index]; !ok {
					pos[r.Index] = len(proj.Exprs)
					proj.Exprs = append(proj.Exprs, &ColumnRef{Index: r.Index - nl, Name: rs[r.Index-nl].Name, T: r.T})
					proj.Names = append(proj.Names, rs[r.Index-nl].Name)
				}
			}
		})
	}
	if len(proj.Exprs) == 0 {
		proj.Exprs = []Expr{&Literal{Value: true, T: Type{Kind: Boolean, NotNull: true}}}
		proj.Names = []string{"$exists"}
	}
	uniqueProjectNames(proj)
	for i, c := range conds {
		conds[i] = mapColumns(c, func(r *ColumnRef) Expr {
			if r.Index < nl {
				return r
			}
			return &ColumnRef{Index: nl + pos[r.Index], Name: proj.Names[pos[r.Index]], T: r.T}
		})
	}
	return proj
}

// correlated plans a plain SELECT subquery whose WHERE may name the outer query's
// columns (sc, nl of them). It returns the subquery's FROM filtered by the conditions on
// its own columns, the select items an IN compares, and the conditions that name outer
// columns, over the outer columns then the FROM's.
func (p *Planner) correlated(pred subqueryPredicate, sc *scope, nl int, depth int) (Node, []Expr, []Expr, error) {
	q := pred.query
	// Conjuncts naming an outer table by its qualifier stay out of a comma join's ON.
	inner := aliasesOf(q.From, nil)
	outerQuals := map[string]bool{}
	for _, c := range sc.cols {
		if c.qual != "" {
			outerQuals[strings.ToLower(c.qual)] = true
		}
	}
	var local, outer []parser.Expr
	for _, c := range astConjuncts(q.Where, nil) {
		quals, _ := qualifiersOf(c, nil, true)
		named := false
		for _, qual := range quals {
			named = named || (outerQuals[strings.ToLower(qual)] && !containsFold(inner, qual))
		}
		if named {
			if hasSubquery(c) {
				return nil, nil, nil, errorf(c, "a condition of a subquery that names the outer query's columns cannot hold a subquery of its own")
			}
			outer = append(outer, c)
		} else {
			local = append(local, c)
		}
	}
	nq := *q
	nq.Where = andAST(local)
	nq2 := commaJoins(&nq)
	from, rsc, err := p.from(nq2.From, depth+1)
	if err != nil {
		return nil, nil, nil, err
	}
	cs := &scope{cols: append(append([]scopeCol(nil), sc.cols...), rsc.cols...), outer: nl}
	b := &exprBinder{sc: cs}
	// The subquery's own subqueries: scalar ones joined to its FROM first, IN and EXISTS
	// applied to it after its conditions.
	preds, rest := splitSubqueryPredicates(nq2.Where)
	ib := &exprBinder{sc: rsc}
	if from, err = p.scalarJoins(from, ib, scalarSubqueries(rest, nil), depth+1); err != nil {
		return nil, nil, nil, err
	}
	for sub, x := range ib.scalars {
		if b.scalars == nil {
			b.scalars = map[*parser.SubqueryExpr]Expr{}
		}
		b.scalars[sub] = shiftColumns(x, nl)
	}
	var own, conds []Expr
	for _, c := range append(astConjuncts(rest, nil), outer...) {
		x, err := b.bind(c)
		if err != nil {
			return nil, nil, nil, err
		}
		if x, err = b.expect(c, x, TypeBoolean); err != nil {
			return nil, nil, nil, errorf(c, "WHERE needs a BOOLEAN condition, got %s", x.Type().Nullable())
		}
		for _, part := range conjuncts(x) {
			if refsOuter(part, nl) {
				conds = append(conds, part)
			} else {
				own = append(own, shiftColumns(part, -nl))
			}
		}
	}
	if len(own) > 0 {
		from = &Filter{Input: from, Cond: and(own)}
	}
	for _, pr := range preds {
		if from, err = p.semiJoin(from, rsc, pr, depth+1); err != nil {
			return nil, nil, nil, err
		}
	}
	var ys []Expr
	if pred.x != nil {
		items, err := expandStars(q.Items, rsc)
		if err != nil {
			return nil, nil, nil, err
		}
		ib := &exprBinder{sc: rsc}
		for _, it := range items {
			y, err := ib.bind(it.Expr)
			if err != nil {
				if _, e2 := b.bind(it.Expr); e2 == nil {
					return nil, nil, nil, errorf(it.Expr, "the select list of an IN subquery cannot name the outer query's columns")
				}
				return nil, nil, nil, err
			}
			ys = append(ys, y)
		}
	}
	return from, ys, conds, nil
}

// outerHint adds hint to an error about an unknown name that the outer query's scope
// sc knows: the subquery tried to name the outer query where it cannot.
func outerHint(err error, sc *scope, hint string) error {
	var pe *Error
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Msg, "unknown") {
		return err
	}
	_, rest, _ := strings.Cut(pe.Msg, "`")
	name, _, _ := strings.Cut(rest, "`")
	for _, c := range sc.cols {
		if equalFold(c.name, name) || equalFold(c.qual, name) {
			return &Error{Pos: pe.Pos, Msg: pe.Msg + " (" + hint + ")"}
		}
	}
	return err
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if equalFold(x, s) {
			return true
		}
	}
	return false
}

func andAST(es []parser.Expr) parser.Expr {
	var out parser.Expr
	for _, e := range es {
		if out == nil {
			out = e
		} else {
			out = &parser.BinaryExpr{Pos: out.Position(), Op: "AND", Left: out, Right: e}
		}
	}
	return out
}

// refsInner reports whether e names a column after the first nl.
func refsInner(e Expr, nl int) bool {
	found := false
	walkColumns(e, func(c *ColumnRef) { found = found || c.Index >= nl })
	return found
}

// refsOuter reports whether e names one of the first nl columns.
func refsOuter(e Expr, nl int) bool {
	found := false
	walkColumns(e, func(c *ColumnRef) { found = found || c.Index < nl })
	return found
}

func shiftColumns(e Expr, by int) Expr {
	return mapColumns(e, func(c *ColumnRef) Expr { return &ColumnRef{Index: c.Index + by, Name: c.Name, T: c.T} })
}

// walkColumns calls f on every column reference of e.
func walkColumns(e Expr, f func(*ColumnRef)) {
	mapColumns(e, func(c *ColumnRef) Expr {
		f(c)
		return c
	})
}

// uniqueProjectNames numbers repeated output names of a projection (id, id0).
func uniqueProjectNames(p *Project) {
	seen := map[string]bool{}
	for i, n := range p.Names {
		name := n
		for j := 0; seen[strings.ToLower(name)]; j++ {
			name = n + itoa(j)
		}
		seen[strings.ToLower(name)] = true
		p.Names[i] = name
	}
}

// scalarJoins plans the scalar subqueries of a SELECT block's WHERE and select list: each
// is a LEFT join of the input with the subquery's row, whose column the binder then
// reads for the subquery. An uncorrelated subquery joins without keys; a correlated one
// by its equalities with the outer query's columns, as Flink decorrelates them: a plain
// SELECT joins its rows (at most one per outer row), an aggregate without GROUP BY is
// grouped by its correlation's columns.
func (p *Planner) scalarJoins(input Node, b *exprBinder, subs []*parser.SubqueryExpr, depth int) (Node, error) {
	for _, s := range subs {
		if _, done := b.scalars[s]; done {
			continue
		}
		var n *Join
		var value Expr
		right, _, err := p.query(s.Query, depth+1)
		switch {
		case err == nil:
			rs := right.Schema()
			if len(rs) != 1 {
				return nil, errorf(s, "a scalar subquery must produce one column, this one produces %d", len(rs))
			}
			n = &Join{Left: input, Right: right, Kind: "LEFT", Scalar: s.String()}
			value = &ColumnRef{Index: len(input.Schema()), T: rs[0].Type}
		case simpleBlock(s.Query):
			if n, value, err = p.correlatedScalar(input, b.sc, s, depth); err != nil {
				return nil, err
			}
		case aggregateBlock(s.Query):
			if n, value, err = p.correlatedAggregate(input, b.sc, s, depth); err != nil {
				return nil, err
			}
		default:
			return nil, outerHint(err, b.sc, "only a plain SELECT, or one aggregate without GROUP BY, may name the outer query's columns")
		}
		if b.scalars == nil {
			b.scalars = map[*parser.SubqueryExpr]Expr{}
		}
		schema := n.Schema()
		value = mapColumns(value, func(c *ColumnRef) Expr {
			t := c.T
			if c.Index >= len(n.Left.Schema()) {
				t.NotNull = false
			}
			return &ColumnRef{Index: c.Index, Name: schema[c.Index].Name, T: t}
		})
		b.scalars[s] = value
		input = n
	}
	return input, nil
}

// aggregateBlock reports whether q is SELECT agg(...) FROM ... [WHERE ...]: one value
// over all its rows.
func aggregateBlock(q *parser.Query) bool {
	if len(q.With) > 0 || q.Set != nil || q.Values != nil || q.From == nil || len(q.GroupBy) > 0 ||
		q.Having != nil || q.Distinct || q.OrderBy != nil || q.Limit != nil || len(q.Items) != 1 || q.Items[0].Star {
		return false
	}
	return containsAgg(q.Items[0].Expr) && !hasOver(q.Items[0].Expr) && !hasSubquery(q.Where)
}

// correlatedScalar plans a plain SELECT scalar subquery whose WHERE compares its columns
// with the outer query's by equality: a LEFT join by those keys with its rows, of which
// each outer row may match one.
func (p *Planner) correlatedScalar(input Node, sc *scope, s *parser.SubqueryExpr, depth int) (*Join, Expr, error) {
	nl := len(input.Schema())
	right, ys, conds, err := p.correlated(subqueryPredicate{at: s, x: s, query: s.Query}, sc, nl, depth)
	if err != nil {
		return nil, nil, err
	}
	if len(ys) != 1 {
		return nil, nil, errorf(s, "a scalar subquery must produce one column, this one produces %d", len(ys))
	}
	// An outer side of an equality that is not a column (r.id = l.id + 7) is computed
	// into a column of its own: placeholders -1, -2, ... first, then numbered after the
	// outer columns, the subquery's columns moving up past them.
	var extra []Expr
	for _, c := range conds {
		call, ok := c.(*Call)
		if !ok || call.Fn != FnEq {
			continue
		}
		for side := range 2 {
			a, o := call.Args[side], call.Args[1-side]
			if _, col := a.(*ColumnRef); !col && !refsInner(a, nl) && refsOuter(a, nl) && !refsOuter(o, nl) {
				extra = append(extra, a)
				call.Args[side] = &ColumnRef{Index: -len(extra), Name: "$outer" + itoa(len(extra)-1), T: a.Type()}
			}
		}
	}
	left := input
	if len(extra) > 0 {
		ls := input.Schema()
		lproj := &Project{Input: input, Exprs: columnRefs(ls), Names: schemaNames(ls)}
		for i, x := range extra {
			lproj.Exprs = append(lproj.Exprs, x)
			lproj.Names = append(lproj.Names, "$outer"+itoa(i))
		}
		for i, c := range conds {
			conds[i] = mapColumns(c, func(r *ColumnRef) Expr {
				switch {
				case r.Index < 0:
					return &ColumnRef{Index: nl - 1 - r.Index, Name: r.Name, T: r.T}
				case r.Index >= nl:
					return &ColumnRef{Index: r.Index + len(extra), Name: r.Name, T: r.T}
				}
				return r
			})
		}
		left, nl = lproj, nl+len(extra)
	}
	proj := narrowRight(right, ys, conds, nl)
	n := &Join{Left: left, Right: proj, Kind: "LEFT", Scalar: s.String()}
	for _, c := range conds {
		l, r, ok := equiKey(c, nl)
		if !ok {
			pairs := *n
			pairs.Kind = "INNER"
			return nil, nil, errorf(s, "a correlated scalar subquery may compare its columns with the outer query's by equality only, not by %s", exprSQL(c, pairs.Schema()))
		}
		n.LeftKeys, n.RightKeys = append(n.LeftKeys, l), append(n.RightKeys, r-nl)
	}
	return n, &ColumnRef{Index: nl, T: ys[0].Type()}, nil
}

// correlatedAggregate plans SELECT agg(...) FROM ... WHERE ... whose WHERE compares its
// columns with the outer query's by equality: the aggregate grouped by its side of the
// equalities, LEFT joined by them. A COUNT over no rows is 0, not NULL.
func (p *Planner) correlatedAggregate(input Node, sc *scope, s *parser.SubqueryExpr, depth int) (*Join, Expr, error) {
	q := s.Query
	item := q.Items[0].Expr
	if f, ok := item.(*parser.FuncCall); !ok || f.Name != "COUNT" {
		bad := ""
		walkExpr(item, func(x parser.Expr) {
			if f, ok := x.(*parser.FuncCall); ok && isAggCall(f) && (f.Name == "COUNT" || strings.HasPrefix(f.Name, "JSON_")) {
				bad = f.Name
			}
		})
		if bad != "" {
			return nil, nil, errorf(s, "a correlated scalar subquery may use %s only as its whole value (it is not NULL over no rows)", bad)
		}
	}
	_, rsc, err := p.from(commaJoins(&parser.Query{Items: q.Items, From: q.From}).From, depth+1)
	if err != nil {
		return nil, nil, err
	}
	inner := &exprBinder{sc: rsc}
	outer := &exprBinder{sc: sc}
	var local []parser.Expr
	var keys []parser.Expr // the subquery's side of each correlation equality
	var outerKeys []Expr
	for _, c := range astConjuncts(q.Where, nil) {
		if _, err := inner.bind(c); err == nil {
			local = append(local, c)
			continue
		}
		eq, ok := c.(*parser.BinaryExpr)
		if !ok || eq.Op != "=" {
			if _, err := (&exprBinder{sc: &scope{cols: append(append([]scopeCol(nil), sc.cols...), rsc.cols...), outer: len(sc.cols)}}).bind(c); err != nil {
				return nil, nil, err
			}
			return nil, nil, errorf(c, "a correlated scalar subquery may compare its columns with the outer query's by equality only")
		}
		in, out := eq.Left, eq.Right
		if _, err := inner.bind(in); err != nil {
			in, out = out, in
		}
		if _, err := inner.bind(in); err != nil {
			return nil, nil, err
		}
		ox, err := outer.bind(out)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, in)
		outerKeys = append(outerKeys, ox)
	}
	// SELECT keys..., agg FROM ... WHERE local GROUP BY keys.
	grouped := &parser.Query{Pos: q.Pos, From: q.From, Where: andAST(local), GroupBy: keys}
	for i, k := range keys {
		grouped.Items = append(grouped.Items, &parser.SelectItem{Pos: k.Position(), Expr: k, Alias: "$k" + itoa(i)})
	}
	grouped.Items = append(grouped.Items, &parser.SelectItem{Pos: item.Position(), Expr: item, Alias: "$value"})
	right, _, err := p.query(grouped, depth+1)
	if err != nil {
		return nil, nil, err
	}
	// Outer keys that are not columns are computed into columns of their own.
	ls := input.Schema()
	left := Node(input)
	lproj := &Project{Input: input, Exprs: columnRefs(ls), Names: schemaNames(ls)}
	cols := make([]Expr, len(outerKeys))
	for i, ox := range outerKeys {
		cols[i] = ox
		if _, ok := ox.(*ColumnRef); !ok {
			lproj.Exprs = append(lproj.Exprs, ox)
			lproj.Names = append(lproj.Names, "$outer"+itoa(i))
			cols[i] = &ColumnRef{Index: len(lproj.Exprs) - 1, Name: "$outer" + itoa(i), T: ox.Type()}
		}
	}
	if len(lproj.Exprs) != len(ls) {
		left = lproj
	}
	nl := len(left.Schema())
	rs := right.Schema()
	n := &Join{Left: left, Right: right, Kind: "LEFT"}
	for i := range keys {
		eq, err := (&exprBinder{}).operator(keys[i], FnEq, cols[i], &ColumnRef{Index: nl + i, Name: rs[i].Name, T: rs[i].Type})
		l, r, ok := 0, 0, false
		if err == nil {
			l, r, ok = equiKey(eq, nl)
		}
		if !ok {
			return nil, nil, errorf(keys[i], "a correlated scalar subquery's equality of %s and %s cannot be a join key (give both sides one type)", rs[i].Type.Nullable(), cols[i].Type().Nullable())
		}
		n.LeftKeys, n.RightKeys = append(n.LeftKeys, l), append(n.RightKeys, r-nl)
	}
	var value Expr = &ColumnRef{Index: nl + len(keys), T: rs[len(keys)].Type}
	if f, ok := item.(*parser.FuncCall); ok && f.Name == "COUNT" {
		t := rs[len(keys)].Type
		t.NotNull = false
		ref := &ColumnRef{Index: nl + len(keys), T: t}
		zero := &Literal{Value: int64(0), T: Type{Kind: t.Kind, NotNull: true}}
		t.NotNull = true
		value = &Case{Whens: []When{{Cond: &Call{Fn: FnIsNull, Args: []Expr{ref}, T: Type{Kind: Boolean, NotNull: true}}, Result: zero}}, Else: ref, T: t}
	}
	return n, value, nil
}
