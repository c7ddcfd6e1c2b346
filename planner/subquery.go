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
// WHERE may name the enclosing query's columns.
func simpleBlock(q *parser.Query) bool {
	if len(q.With) > 0 || q.Set != nil || q.Values != nil || q.From == nil || len(q.GroupBy) > 0 ||
		q.Having != nil || q.Distinct || q.OrderBy != nil || q.Limit != nil {
		return false
	}
	for _, it := range q.Items {
		if !it.Star && (containsAgg(it.Expr) || hasOver(it.Expr)) {
			return false
		}
	}
	return !hasSubquery(q.Where)
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
	// The right side keeps only what the condition reads: the compared values, then the
	// columns the correlation names. An EXISTS without correlation keeps a constant, so
	// that all its rows fold into one stored row.
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
	if nlx != nl {
		return &Project{Input: n, Exprs: columnRefs(ls), Names: schemaNames(ls)}, nil
	}
	return n, nil
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
	var own, conds []Expr
	for _, c := range append(astConjuncts(nq2.Where, nil), outer...) {
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
// is a LEFT join of the input with the subquery's single row, whose column the binder
// then reads for the subquery.
func (p *Planner) scalarJoins(input Node, b *exprBinder, subs []*parser.SubqueryExpr, depth int) (Node, error) {
	outer := b.sc
	for _, s := range subs {
		if _, done := b.scalars[s]; done {
			continue
		}
		right, _, err := p.query(s.Query, depth+1)
		if err != nil {
			return nil, outerHint(err, outer, "a scalar subquery cannot name the outer query's columns yet")
		}
		rs := right.Schema()
		if len(rs) != 1 {
			return nil, errorf(s, "a scalar subquery must produce one column, this one produces %d", len(rs))
		}
		n := &Join{Left: input, Right: right, Kind: "LEFT", Scalar: s.String()}
		col := len(input.Schema())
		if b.scalars == nil {
			b.scalars = map[*parser.SubqueryExpr]Expr{}
		}
		t := rs[0].Type
		t.NotNull = false
		b.scalars[s] = &ColumnRef{Index: col, Name: n.Schema()[col].Name, T: t}
		input = n
	}
	return input, nil
}
