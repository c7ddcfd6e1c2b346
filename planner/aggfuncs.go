package planner

import (
	"sort"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// AggFunction is one row of the aggregate function table: the names a call may use, how
// many arguments it takes, and how its arguments are checked and its result typed.
type AggFunction struct {
	Fn    AggFunc
	Names []string
	// Min and Max bound the number of arguments; Star allows fn(*); ManyDistinct allows
	// more than one argument after DISTINCT (COUNT(DISTINCT a, b)), each counted together.
	Min, Max     int
	Star         bool
	ManyDistinct bool
	// Bind checks (and may cast) the bound arguments and returns the result type; it
	// reports errors at the call.
	Bind func(c *aggSite) (Type, error)
}

// aggSite is an aggregate call being bound: its syntax and its bound arguments.
type aggSite struct {
	call *parser.FuncCall
	fn   AggFunc
	args []Expr
	sep  *string // LISTAGG's separator, once bound
}

// aggRows is the aggregate function table, in the order of Flink's reference.
func aggRows() []AggFunction {
	count := func(*aggSite) (Type, error) { return Type{Kind: BigInt, NotNull: true}, nil }
	variance := func(fn AggFunc, names ...string) AggFunction {
		return AggFunction{Fn: fn, Names: names, Min: 1, Max: 1, Bind: bindVariance}
	}
	firstLast := func(fn AggFunc, name string) AggFunction {
		return AggFunction{Fn: fn, Names: []string{name}, Min: 1, Max: 1, Bind: bindOrderedValue}
	}
	return []AggFunction{
		{Fn: AggCount, Names: []string{"COUNT"}, Min: 1, Max: 1, Star: true, ManyDistinct: true, Bind: count},
		{Fn: AggAvg, Names: []string{"AVG"}, Min: 1, Max: 1, Bind: bindSum},
		{Fn: AggSum, Names: []string{"SUM"}, Min: 1, Max: 1, Bind: bindSum},
		{Fn: AggMax, Names: []string{"MAX"}, Min: 1, Max: 1, Bind: bindExtreme},
		{Fn: AggMin, Names: []string{"MIN"}, Min: 1, Max: 1, Bind: bindExtreme},
		variance(AggStddevPop, "STDDEV_POP"),
		variance(AggStddevSamp, "STDDEV_SAMP", "STDDEV"),
		variance(AggVarPop, "VAR_POP"),
		variance(AggVarSamp, "VAR_SAMP", "VARIANCE"),
		firstLast(AggFirstValue, "FIRST_VALUE"),
		firstLast(AggLastValue, "LAST_VALUE"),
		{Fn: AggListAgg, Names: []string{"LISTAGG"}, Min: 1, Max: 2, Bind: bindListAgg},
	}
}

// aggIndex finds an aggregate function's row by a name it is called by.
var aggIndex = func() map[string]*AggFunction {
	rows := aggRows()
	m := map[string]*AggFunction{}
	for i := range rows {
		for _, n := range rows[i].Names {
			m[n] = &rows[i]
		}
	}
	return m
}()

// aggNames lists the aggregate functions' names, sorted.
func aggNames() []string {
	var names []string
	for n := range aggIndex {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func bindSum(c *aggSite) (Type, error) {
	fn, f := c.fn, c.call
	arg := c.args[0]
	t := arg.Type().Nullable()
	if t.Kind == Null {
		arg, t = castTo(arg, TypeDouble), TypeDouble
	}
	if !t.IsNumeric() {
		return Type{}, errorf(f, "%s needs a numeric argument, got %s", fn, t)
	}
	if isNarrow(t) {
		arg, t = castTo(arg, widened(t)), widened(t).Nullable()
	}
	c.args[0] = arg
	switch {
	case t.Kind == Decimal && fn == AggSum:
		return DecimalType(38, t.Scale), nil
	case t.Kind == Decimal:
		return DecimalType(38, max(6, t.Scale)), nil
	case fn == AggAvg || t.Kind == Double:
		return TypeDouble, nil
	}
	return TypeBigInt, nil
}

func bindExtreme(c *aggSite) (Type, error) {
	t := c.args[0].Type().Nullable()
	if t.Kind == Null {
		return Type{}, errorf(c.call, "%s needs a typed argument", c.fn)
	}
	if t.IsNested() {
		return Type{}, errorf(c.call, "%s of %s is not supported", c.fn, t)
	}
	return t, nil
}

// bindVariance types STDDEV_POP, STDDEV_SAMP, VAR_POP and VAR_SAMP: their argument is
// computed with as a DOUBLE, and so is their result (Flink's keeps an integer or DECIMAL
// argument's type; streamsql's AVG of an integer is a DOUBLE too).
func bindVariance(c *aggSite) (Type, error) {
	t := c.args[0].Type().Nullable()
	if t.Kind != Null && !t.IsNumeric() {
		return Type{}, errorf(c.call, "%s needs a numeric argument, got %s", c.fn, t)
	}
	c.args[0] = castTo(c.args[0], TypeDouble)
	return TypeDouble, nil
}

// bindOrderedValue types FIRST_VALUE and LAST_VALUE: the argument's type, nullable.
func bindOrderedValue(c *aggSite) (Type, error) {
	t := c.args[0].Type().Nullable()
	if t.Kind == Null {
		return Type{}, errorf(c.call, "%s needs a typed argument", c.fn)
	}
	if t.IsNested() {
		return Type{}, errorf(c.call, "%s of %s is not supported", c.fn, t)
	}
	return t, nil
}

// bindListAgg types LISTAGG(expr [, separator]): a STRING expression, and a separator
// that is a constant string (',' by default), as Flink requires a literal.
func bindListAgg(c *aggSite) (Type, error) {
	t := c.args[0].Type().Nullable()
	switch {
	case t.Kind == Null:
		c.args[0] = castTo(c.args[0], TypeString)
	case t.Kind != String:
		return Type{}, errorf(c.call, "%s needs a STRING argument, got %s", c.fn, t)
	}
	sep := ","
	if len(c.args) == 2 {
		lit, ok := c.args[1].(*Literal)
		s, isString := "", false
		if ok {
			s, isString = lit.Value.(string)
		}
		if !isString {
			return Type{}, errorf(c.call.Args[1], "the separator of %s must be a string literal", c.fn)
		}
		sep = s
		c.args = c.args[:1]
	}
	c.sep = &sep
	return TypeString, nil
}

// quoteString writes s as an SQL string literal.
func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
