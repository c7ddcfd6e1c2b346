package planner

import "github.com/streamsql/streamsql/parser"

// commaJoins turns FROM a, b WHERE cond into FROM a JOIN b ON cond, so that a comma join
// is planned as the equivalent regular, interval or window join. Below the top of FROM,
// a comma join takes the WHERE conjuncts that name, by qualifier, only its own tables and
// one of its right side's; the comma join at the top takes all that are left (an inner
// join's ON and WHERE filter alike). A comma join given none is a cross join: ON TRUE.
// The query is copied, never changed: views share their AST.
func commaJoins(q *parser.Query) *parser.Query {
	if !hasComma(q.From) {
		return q
	}
	conj := astConjuncts(q.Where, nil)
	used := make([]bool, len(conj))
	from := placeConds(q.From, conj, used, true)
	var rest parser.Expr
	for i, c := range conj {
		if used[i] {
			continue
		}
		if rest == nil {
			rest = c
		} else {
			rest = &parser.BinaryExpr{Pos: rest.Position(), Op: "AND", Left: rest, Right: c}
		}
	}
	nq := *q
	nq.From, nq.Where = from, rest
	return &nq
}

func hasComma(t parser.TableExpr) bool {
	j, ok := t.(*parser.JoinTable)
	return ok && (j.Comma || hasComma(j.Left) || hasComma(j.Right))
}

func astConjuncts(e parser.Expr, out []parser.Expr) []parser.Expr {
	if b, ok := e.(*parser.BinaryExpr); ok && b.Op == "AND" {
		return astConjuncts(b.Right, astConjuncts(b.Left, out))
	}
	if e != nil {
		out = append(out, e)
	}
	return out
}

func placeConds(t parser.TableExpr, conj []parser.Expr, used []bool, top bool) parser.TableExpr {
	j, ok := t.(*parser.JoinTable)
	if !ok {
		return t
	}
	nj := *j
	nj.Left = placeConds(j.Left, conj, used, false)
	nj.Right = placeConds(j.Right, conj, used, false)
	if !j.Comma {
		return &nj
	}
	mine, right := aliasesOf(&nj, nil), aliasesOf(nj.Right, nil)
	var on parser.Expr
	for i, c := range conj {
		if used[i] {
			continue
		}
		if hasSubquery(c) {
			continue // planned as a semi or anti join, or a join with the subquery's row
		}
		quals, all := qualifiersOf(c, nil, true)
		if !top && (!all || !within(quals, mine) || !touches(quals, right)) {
			continue
		}
		used[i] = true
		if on == nil {
			on = c
		} else {
			on = &parser.BinaryExpr{Pos: on.Position(), Op: "AND", Left: on, Right: c}
		}
	}
	if on == nil {
		on = &parser.BoolLit{Pos: j.Pos, Value: true}
	}
	nj.Comma, nj.On = false, on
	return &nj
}

// aliasesOf lists the names the tables of t are read by.
func aliasesOf(t parser.TableExpr, out []string) []string {
	switch t := t.(type) {
	case *parser.TableName:
		return append(out, orName(t.Alias, t.Name))
	case *parser.SubqueryTable:
		return append(out, t.Alias)
	case *parser.UnnestTable:
		return append(out, t.Alias)
	case *parser.WindowTable:
		return append(out, orName(t.Alias, t.Table))
	case *parser.JoinTable:
		return aliasesOf(t.Right, aliasesOf(t.Left, out))
	}
	return out
}

func orName(alias, name string) string {
	if alias != "" {
		return alias
	}
	return name
}

// qualifiersOf lists the qualifiers of e's column references; all is false when one is
// unqualified or e holds a node it does not look into.
func qualifiersOf(e parser.Expr, out []string, all bool) ([]string, bool) {
	walk := func(es ...parser.Expr) {
		for _, x := range es {
			if x != nil {
				out, all = qualifiersOf(x, out, all)
			}
		}
	}
	switch e := e.(type) {
	case *parser.Ident:
		if len(e.Parts) < 2 {
			return out, false
		}
		return append(out, e.Parts[0]), all
	case *parser.NumberLit, *parser.StringLit, *parser.BoolLit, *parser.NullLit, *parser.IntervalLit, *parser.TypedLit:
	case *parser.BinaryExpr:
		walk(e.Left, e.Right)
	case *parser.UnaryExpr:
		walk(e.X)
	case *parser.IsExpr:
		walk(e.X, e.From)
	case *parser.BetweenExpr:
		walk(e.X, e.Low, e.High)
	case *parser.InExpr:
		walk(append([]parser.Expr{e.X}, e.List...)...)
	case *parser.LikeExpr:
		walk(e.X, e.Pattern)
	case *parser.CastExpr:
		walk(e.X)
	case *parser.FuncCall:
		walk(e.Args...)
	case *parser.ItemExpr:
		walk(e.X, e.Index)
	case *parser.FieldExpr:
		walk(e.X)
	default:
		return out, false
	}
	return out, all
}

func within(quals, names []string) bool {
	for _, q := range quals {
		if !touches([]string{q}, names) {
			return false
		}
	}
	return true
}

func touches(quals, names []string) bool {
	for _, q := range quals {
		for _, n := range names {
			if equalFold(q, n) {
				return true
			}
		}
	}
	return false
}
