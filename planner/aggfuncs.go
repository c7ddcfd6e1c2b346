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
	NoDistinct   bool // DISTINCT is refused
	// Bind checks (and may cast) the bound arguments and returns the result type; it
	// reports errors at the call.
	Bind func(c *aggSite) (Type, error)
}

// aggSite is an aggregate call being bound: its syntax and its bound arguments.
type aggSite struct {
	call      *parser.FuncCall
	fn        AggFunc
	args      []Expr  // bound; those past the first become the call's More columns
	sep       *string // LISTAGG's separator, once bound
	keepNulls bool
}

// aggRows is the aggregate function table, in the order of Flink's reference.
func aggRows() []AggFunction {
	count := func(*aggSite) (Type, error) { return Type{Kind: BigInt, NotNull: true}, nil }
	variance := func(fn AggFunc, names ...string) AggFunction {
		return AggFunction{Fn: fn, Names: names, Min: 1, Max: 1, Bind: bindVariance}
	}
	firstLast := func(fn AggFunc, name string) AggFunction {
		return AggFunction{Fn: fn, Names: []string{name}, Min: 1, Max: 1, Bind: bindValue}
	}
	return []AggFunction{
		{Fn: AggCount, Names: []string{"COUNT"}, Min: 1, Max: 1, Star: true, ManyDistinct: true, Bind: count},
		{Fn: AggAvg, Names: []string{"AVG"}, Min: 1, Max: 1, Bind: bindSum},
		{Fn: AggSum, Names: []string{"SUM"}, Min: 1, Max: 1, Bind: bindSum},
		{Fn: AggMax, Names: []string{"MAX"}, Min: 1, Max: 1, Bind: bindValue},
		{Fn: AggMin, Names: []string{"MIN"}, Min: 1, Max: 1, Bind: bindValue},
		variance(AggStddevPop, "STDDEV_POP"),
		variance(AggStddevSamp, "STDDEV_SAMP", "STDDEV"),
		variance(AggVarPop, "VAR_POP"),
		variance(AggVarSamp, "VAR_SAMP", "VARIANCE"),
		firstLast(AggFirstValue, "FIRST_VALUE"),
		firstLast(AggLastValue, "LAST_VALUE"),
		{Fn: AggListAgg, Names: []string{"LISTAGG"}, Min: 1, Max: 2, Bind: bindListAgg},
		{Fn: AggCollect, Names: []string{"COLLECT"}, Min: 1, Max: 1, Bind: bindCollect},
		{Fn: AggArrayAgg, Names: []string{"ARRAY_AGG"}, Min: 1, Max: 1, Bind: bindArrayAgg},
		{Fn: AggJSONObject, Names: []string{"JSON_OBJECTAGG"}, Min: 2, Max: 2, NoDistinct: true, Bind: bindJSONObjectAgg},
		{Fn: AggJSONArray, Names: []string{"JSON_ARRAYAGG"}, Min: 1, Max: 1, Bind: bindJSONArrayAgg},
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

// bindValue types MIN, MAX, FIRST_VALUE and LAST_VALUE: the argument's type, nullable.
func bindValue(c *aggSite) (Type, error) {
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

// elementType checks that argument i of a collecting aggregate can be an element: typed
// and not itself structured.
func (c *aggSite) elementType(i int) (Type, error) {
	t := c.args[i].Type().Nullable()
	if t.Kind == Null {
		return Type{}, errorf(c.call, "%s needs a typed argument", c.fn)
	}
	if t.IsNested() {
		return Type{}, errorf(c.call, "%s of %s is not supported", c.fn, t)
	}
	return t, nil
}

// bindCollect types COLLECT: MULTISET<T>, held as a map from each distinct non-NULL value
// to how often it occurs (Flink keeps a multiset so too).
func bindCollect(c *aggSite) (Type, error) {
	t, err := c.elementType(0)
	if err != nil {
		return Type{}, err
	}
	return MultisetType(t), nil
}

// bindArrayAgg types ARRAY_AGG(x [RESPECT NULLS | IGNORE NULLS]): ARRAY<T>, NULL
// values kept unless IGNORE NULLS.
func bindArrayAgg(c *aggSite) (Type, error) {
	t, err := c.elementType(0)
	if err != nil {
		return Type{}, err
	}
	c.keepNulls = c.call.OnNull != "IGNORE NULLS"
	return ArrayType(t), nil
}

// jsonArg makes argument i a value JSON can write as it is: a number, a BOOLEAN or a
// STRING; other types are written as their text, as a JSON string.
func (c *aggSite) jsonArg(i int) error {
	t, err := c.elementType(i)
	if err != nil {
		return err
	}
	if !t.IsNumeric() && t.Kind != Boolean && t.Kind != String {
		c.args[i] = castTo(c.args[i], TypeString)
	}
	return nil
}

// bindJSONArrayAgg types JSON_ARRAYAGG(x [NULL | ABSENT ON NULL]): a JSON array STRING,
// NULL values left out unless NULL ON NULL.
func bindJSONArrayAgg(c *aggSite) (Type, error) {
	if err := c.jsonArg(0); err != nil {
		return Type{}, err
	}
	c.keepNulls = c.call.OnNull == "NULL ON NULL"
	return Type{Kind: String, NotNull: true}, nil
}

// bindJSONObjectAgg types JSON_OBJECTAGG([KEY] k VALUE v [NULL | ABSENT ON NULL]): a
// JSON object STRING; the key a STRING, entries with a NULL value kept as null unless
// ABSENT ON NULL.
func bindJSONObjectAgg(c *aggSite) (Type, error) {
	if t := c.args[0].Type(); t.Kind != String && t.Kind != Null {
		return Type{}, errorf(c.call.Args[0], "the key of %s must be a STRING, got %s", c.fn, t.Nullable())
	}
	c.args[0] = castTo(c.args[0], TypeString)
	if err := c.jsonArg(1); err != nil {
		return Type{}, err
	}
	c.keepNulls = c.call.OnNull != "ABSENT ON NULL"
	return Type{Kind: String, NotNull: true}, nil
}
