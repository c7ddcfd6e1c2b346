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
}

type aggSpec struct {
	fn       AggFunc
	arg      Expr // nil for COUNT(*)
	distinct bool
	t        Type
	name     string
}

func (a *aggBinding) lookup(e parser.Expr) (Expr, bool, error) {
	sql := e.String()
	for i, g := range a.groupSQL {
		if g == sql {
			return &ColumnRef{Index: i, Name: a.keyName(i), T: a.keys[i].Type()}, true, nil
		}
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
	return &ColumnRef{Index: len(a.keys) + i, Name: a.aggs[i].name, T: a.aggs[i].t}
}

func (a *aggBinding) bindAgg(f *parser.FuncCall) (aggSpec, error) {
	fn := aggFuncs[f.Name]
	spec := aggSpec{fn: fn, distinct: f.Distinct, name: "EXPR$" + itoa(len(a.aggs))}
	if f.Star {
		if fn != AggCount {
			return spec, errorf(f, "%s(*) is not allowed; only COUNT(*)", f.Name)
		}
		spec.t = Type{Kind: BigInt, NotNull: true}
		return spec, nil
	}
	if len(f.Args) != 1 {
		return spec, errorf(f, "%s takes 1 argument, got %d", f.Name, len(f.Args))
	}
	for _, arg := range f.Args {
		if containsAgg(arg) {
			return spec, errorf(arg, "aggregate calls cannot be nested")
		}
	}
	arg, err := a.input.bind(f.Args[0])
	if err != nil {
		return spec, err
	}
	t := arg.Type().Nullable()
	switch fn {
	case AggCount:
		spec.t = Type{Kind: BigInt, NotNull: true}
	case AggSum, AggAvg:
		if t.Kind == Null {
			arg, t = castTo(arg, TypeDouble), TypeDouble
		}
		if !t.IsNumeric() {
			return spec, errorf(f, "%s needs a numeric argument, got %s", fn, t)
		}
		if isNarrow(t) {
			arg, t = castTo(arg, widened(t)), widened(t).Nullable()
		}
		switch {
		case t.Kind == Decimal && fn == AggSum:
			spec.t = DecimalType(38, t.Scale)
		case t.Kind == Decimal:
			spec.t = DecimalType(38, max(6, t.Scale))
		case fn == AggAvg || t.Kind == Double:
			spec.t = TypeDouble
		default:
			spec.t = TypeBigInt
		}
	case AggMin, AggMax:
		if t.Kind == Null {
			return spec, errorf(f, "%s needs a typed argument", fn)
		}
		if t.IsNested() {
			return spec, errorf(f, "%s of %s is not supported", fn, t)
		}
		spec.t = t
	}
	spec.arg = arg
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
	}
}
