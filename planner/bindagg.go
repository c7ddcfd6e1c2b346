package planner

import "github.com/streamsql/streamsql/parser"

// aggBinding binds the expressions above a GROUP BY: a group expression becomes a
// reference to its key column, an aggregate call a reference to its aggregate column,
// collected as it is met.
type aggBinding struct {
	input    *exprBinder // binds group expressions and aggregate arguments
	groupSQL []string
	keys     []Expr
	aggSQL   []string
	aggs     []aggSpec
	// sets are the grouping sets of GROUPING SETS, ROLLUP or CUBE (by set, by key:
	// whether it keeps the key), nil for a plain GROUP BY. With sets, the aggregate's
	// output has the set column of Expand after the keys.
	sets [][]bool
}

type aggSpec struct {
	fn        AggFunc
	arg       Expr   // nil for COUNT(*)
	more      []Expr // COUNT(DISTINCT a, b, ...)'s further arguments
	filter    Expr   // FILTER (WHERE ...)'s condition; nil without
	sep       string // LISTAGG's separator
	keepNulls bool
	distinct  bool
	t         Type
	name      string
}

func (a *aggBinding) lookup(e parser.Expr) (Expr, bool, error) {
	sql := e.String()
	for i, g := range a.groupSQL {
		if g == sql {
			return &ColumnRef{Index: i, Name: a.keyName(i), T: a.keyType(i)}, true, nil
		}
	}
	if isGroupingCall(e) {
		g, err := a.grouping(e.(*parser.FuncCall))
		return g, true, err
	}
	if !isAggCall(e) {
		return nil, false, nil
	}
	for i, s := range a.aggSQL {
		if s == sql {
			return a.ref(i), true, nil
		}
	}
	spec, err := a.bindAgg(e.(*parser.FuncCall))
	if err != nil {
		return nil, true, err
	}
	a.aggSQL = append(a.aggSQL, sql)
	a.aggs = append(a.aggs, spec)
	return a.ref(len(a.aggs) - 1), true, nil
}

func (a *aggBinding) keyName(i int) string {
	if c, ok := a.keys[i].(*ColumnRef); ok {
		return c.Name
	}
	return "$key" + itoa(i)
}

func (a *aggBinding) ref(i int) *ColumnRef {
	return &ColumnRef{Index: a.firstAgg() + i, Name: a.aggs[i].name, T: a.aggs[i].t}
}

// firstAgg is the aggregate output's first aggregate column: after the keys and, with
// grouping sets, the set column.
func (a *aggBinding) firstAgg() int {
	if a.sets != nil {
		return len(a.keys) + 1
	}
	return len(a.keys)
}

func (a *aggBinding) bindAgg(f *parser.FuncCall) (aggSpec, error) {
	row := aggIndex[f.Name]
	spec := aggSpec{fn: row.Fn, distinct: f.Distinct, name: "EXPR$" + itoa(len(a.aggs))}
	if f.Filter != nil {
		if containsAgg(f.Filter) {
			return spec, errorf(f.Filter, "aggregate calls cannot be nested")
		}
		cond, err := a.input.bind(f.Filter)
		if err != nil {
			return spec, err
		}
		if t := cond.Type(); t.Kind != Boolean && t.Kind != Null {
			return spec, errorf(f.Filter, "FILTER needs a BOOLEAN condition, got %s", t.Nullable())
		}
		spec.filter = castTo(cond, TypeBoolean)
	}
	if f.Distinct && row.NoDistinct {
		return spec, errorf(f, "%s does not take DISTINCT", f.Name)
	}
	if f.Star {
		if !row.Star {
			return spec, errorf(f, "%s(*) is not allowed; only COUNT(*)", f.Name)
		}
		spec.t = Type{Kind: BigInt, NotNull: true}
		return spec, nil
	}
	switch n := len(f.Args); {
	case n > 1 && row.ManyDistinct && f.Distinct:
	case n > 1 && row.ManyDistinct:
		return spec, errorf(f, "%s takes 1 argument, got %d (several only after DISTINCT)", f.Name, n)
	case n < row.Min || n > row.Max:
		if row.Min == row.Max {
			return spec, errorf(f, "%s takes %s, got %d", f.Name, plural(row.Min), n)
		}
		return spec, errorf(f, "%s takes %d to %d arguments, got %d", f.Name, row.Min, row.Max, n)
	}
	for _, arg := range f.Args {
		if containsAgg(arg) {
			return spec, errorf(arg, "aggregate calls cannot be nested")
		}
	}
	site := &aggSite{call: f, fn: row.Fn}
	for _, x := range f.Args {
		arg, err := a.input.bind(x)
		if err != nil {
			return spec, err
		}
		site.args = append(site.args, arg)
	}
	if len(site.args) > 1 && row.ManyDistinct {
		for i, arg := range site.args {
			if t := arg.Type(); t.IsNested() {
				return spec, errorf(f.Args[i], "%s(DISTINCT ...) of %s is not supported", f.Name, t.Nullable())
			}
		}
		spec.arg, spec.more = site.args[0], site.args[1:]
		spec.t = Type{Kind: BigInt, NotNull: true}
		return spec, nil
	}
	t, err := row.Bind(site)
	if err != nil {
		return spec, err
	}
	spec.t = t
	spec.arg, spec.more, spec.keepNulls = site.args[0], site.args[1:], site.keepNulls
	if site.sep != nil {
		spec.sep = *site.sep
	}
	return spec, nil
}

func containsAgg(e parser.Expr) bool {
	if isAggCall(e) {
		return true
	}
	found := false
	walkExpr(e, func(x parser.Expr) {
		found = found || isAggCall(x)
	})
	return found
}

// walkExpr calls fn on every sub-expression of e, e included.
func walkExpr(e parser.Expr, fn func(parser.Expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch e := e.(type) {
	case *parser.BinaryExpr:
		walkExpr(e.Left, fn)
		walkExpr(e.Right, fn)
	case *parser.UnaryExpr:
		walkExpr(e.X, fn)
	case *parser.IsExpr:
		walkExpr(e.X, fn)
		walkExpr(e.From, fn)
	case *parser.BetweenExpr:
		walkExpr(e.X, fn)
		walkExpr(e.Low, fn)
		walkExpr(e.High, fn)
	case *parser.InExpr:
		walkExpr(e.X, fn)
		for _, x := range e.List {
			walkExpr(x, fn)
		}
	case *parser.LikeExpr:
		walkExpr(e.X, fn)
		walkExpr(e.Pattern, fn)
	case *parser.CaseExpr:
		walkExpr(e.Operand, fn)
		for _, w := range e.Whens {
			walkExpr(w.Cond, fn)
			for _, v := range w.Also {
				walkExpr(v, fn)
			}
			walkExpr(w.Result, fn)
		}
		walkExpr(e.Else, fn)
	case *parser.CastExpr:
		walkExpr(e.X, fn)
	case *parser.ExtractExpr:
		walkExpr(e.X, fn)
	case *parser.FuncCall:
		for _, x := range e.Args {
			walkExpr(x, fn)
		}
		walkExpr(e.Filter, fn)
	}
}
