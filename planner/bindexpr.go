package planner

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/parser"
)

// scope is the set of columns an expression can name: the input schema, each column
// with the table alias it came from.
type scope struct {
	cols []scopeCol
	// outer counts the first columns that are an enclosing query's (a correlated
	// subquery's scope): a name resolves to them only where no later column has it.
	outer int
}

type scopeCol struct {
	qual string
	name string
	typ  Type
}

func newScope(qual string, s Schema) *scope {
	sc := &scope{}
	for _, c := range s {
		sc.cols = append(sc.cols, scopeCol{qual: qual, name: c.Name, typ: c.Type})
	}
	return sc
}

func (sc *scope) names() []string {
	n := make([]string, len(sc.cols))
	for i, c := range sc.cols {
		n[i] = c.name
	}
	return n
}

// resolve binds a column reference: col, t.col, or either followed by ROW fields
// (t.col.f, col.f.g). A first part that names a table or alias is a qualifier, else a
// column, as in Flink.
func (sc *scope) resolve(id *parser.Ident) (Expr, error) {
	if sc.outer > 0 {
		x, err := (&scope{cols: sc.cols[sc.outer:]}).resolve(id)
		if err == nil {
			return shiftColumns(x, sc.outer), nil
		}
		if o, oerr := (&scope{cols: sc.cols[:sc.outer]}).resolve(id); oerr == nil {
			return o, nil
		}
		return nil, err
	}
	if len(id.Parts) == 1 {
		return sc.column(id, "", id.Parts[0])
	}
	qual := id.Parts[0]
	for _, c := range sc.cols {
		if equalFold(c.qual, qual) {
			ref, err := sc.column(id, qual, id.Parts[1])
			if err != nil {
				return nil, err
			}
			return fieldPath(id, ref, id.Parts[2:])
		}
	}
	if ref, err := sc.column(id, "", qual); err == nil {
		return fieldPath(id, ref, id.Parts[1:])
	}
	if len(id.Parts) > 2 {
		return nil, errorf(id, "unknown table, alias or ROW column `%s`", qual)
	}
	return sc.column(id, qual, id.Parts[1])
}

// column finds the column name, of the table qual when qual is not empty.
func (sc *scope) column(id *parser.Ident, qual, name string) (*ColumnRef, error) {
	found := -1
	for i, c := range sc.cols {
		if !equalFold(c.name, name) || (qual != "" && !equalFold(c.qual, qual)) {
			continue
		}
		if found >= 0 {
			return nil, errorf(id, "column `%s` is ambiguous", name)
		}
		found = i
	}
	if found < 0 {
		if qual != "" {
			known := false
			for _, c := range sc.cols {
				known = known || equalFold(c.qual, qual)
			}
			if !known {
				return nil, errorf(id, "unknown table or alias `%s`", qual)
			}
		}
		return nil, errorf(id, "unknown column `%s`%s", name, suggest(name, sc.names()))
	}
	c := sc.cols[found]
	return &ColumnRef{Index: found, Name: c.name, T: c.typ}, nil
}

// exprBinder resolves and type-checks scalar expressions over a scope. With agg set, it
// binds expressions above a GROUP BY: group expressions and aggregate calls become
// references to the aggregate's output.
type exprBinder struct {
	sc   *scope
	agg  *aggBinding
	over map[*parser.OverExpr]Expr // the ranking function of a select list, as its Rank's row number
	// scalars are the scalar subqueries joined to the input, as the columns of their rows.
	scalars map[*parser.SubqueryExpr]Expr
}

func isAggCall(e parser.Expr) bool {
	f, ok := e.(*parser.FuncCall)
	if !ok {
		return false
	}
	_, ok = aggIndex[f.Name]
	return ok
}

// BindExpr resolves and type-checks a scalar expression over the columns of s (named
// without a table qualifier), as a select item is bound.
func BindExpr(e parser.Expr, s Schema) (Expr, error) {
	b := &exprBinder{sc: newScope("", s)}
	return b.bind(e)
}

func (b *exprBinder) bind(e parser.Expr) (Expr, error) {
	if col, ok := windowColumn(e); ok {
		if b.agg == nil {
			if _, err := b.sc.resolve(col.(*parser.Ident)); err != nil {
				fn, _, _ := strings.Cut(strings.ToUpper(e.(*parser.FuncCall).Name), "_")
				return nil, errorf(e, "%s needs GROUP BY %s(...)", e.(*parser.FuncCall).Name, fn)
			}
		}
		e = col
	}
	if b.agg != nil {
		if ref, ok, err := b.agg.lookup(e); ok || err != nil {
			return ref, err
		}
	} else if isAggCall(e) {
		return nil, errorf(e, "aggregate function %s is not allowed here", e.(*parser.FuncCall).Name)
	} else if isGroupingCall(e) {
		return nil, errorf(e, "%s is allowed only in the SELECT list and HAVING of a query with GROUP BY", e.(*parser.FuncCall).Name)
	}
	switch e := e.(type) {
	case *parser.GroupingSets:
		return nil, errorf(e, "GROUPING SETS, ROLLUP, CUBE and () are allowed only in GROUP BY")
	case *parser.Ident:
		if b.agg != nil {
			return nil, errorf(e, "column `%s` must appear in GROUP BY or be used in an aggregate function", e)
		}
		return b.sc.resolve(e)
	case *parser.NumberLit:
		return numberLiteral(e)
	case *parser.StringLit:
		return &Literal{Value: e.Value, T: Type{Kind: String, NotNull: true}}, nil
	case *parser.BoolLit:
		return &Literal{Value: e.Value, T: Type{Kind: Boolean, NotNull: true}}, nil
	case *parser.NullLit:
		return &Literal{T: TypeNull}, nil
	case *parser.IntervalLit:
		return intervalLiteral(e)
	case *parser.TypedLit:
		return typedLiteral(e)
	case *parser.UnaryExpr:
		return b.unary(e)
	case *parser.BinaryExpr:
		if e.Op == "OVERLAPS" {
			return b.overlaps(e)
		}
		return b.binary(e)
	case *parser.IsExpr:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		if e.From != nil {
			y, err := b.bind(e.From)
			if err != nil {
				return nil, err
			}
			if e.Not {
				return b.operator(e, FnIsNotDistinct, x, y)
			}
			return b.operator(e, FnIsDistinct, x, y)
		}
		if kind, ok := strings.CutPrefix(e.What, "JSON"); ok {
			kind = strings.TrimSpace(kind)
			if kind == "" {
				kind = "VALUE"
			}
			fn := FnIsJSON
			if e.Not {
				fn = FnIsNotJSON
			}
			return b.operator(e, fn, x, &Literal{Value: kind, T: Type{Kind: String, NotNull: true}})
		}
		// IS UNKNOWN is IS NULL of a BOOLEAN.
		fn := map[string][2]Func{"NULL": {FnIsNull, FnIsNotNull}, "UNKNOWN": {FnIsNull, FnIsNotNull},
			"TRUE": {FnIsTrue, FnIsNotTrue}, "FALSE": {FnIsFalse, FnIsNotFalse}}[e.What]
		if e.What != "NULL" {
			if x, err = b.expect(e.X, x, TypeBoolean); err != nil {
				return nil, err
			}
		}
		f := fn[0]
		if e.Not {
			f = fn[1]
		}
		return &Call{Fn: f, Args: []Expr{x}, T: Type{Kind: Boolean, NotNull: true}}, nil
	case *parser.BetweenExpr:
		return b.between(e)
	case *parser.InExpr:
		if e.Query != nil {
			return nil, errorf(e, "IN (subquery) is supported only as a condition of WHERE, alone or ANDed with others (not under OR or NOT of a larger condition, nor in SELECT, ON or HAVING)")
		}
		return b.in(e)
	case *parser.ExistsExpr:
		return nil, errorf(e, "EXISTS (subquery) is supported only as a condition of WHERE, alone or ANDed with others (not under OR or NOT of a larger condition, nor in SELECT, ON or HAVING)")
	case *parser.SubqueryExpr:
		if x, ok := b.scalars[e]; ok {
			return x, nil
		}
		return nil, errorf(e, "a scalar subquery is supported only in the SELECT list and WHERE of a query without GROUP BY, aggregates or OVER")
	case *parser.LikeExpr:
		return b.like(e)
	case *parser.CaseExpr:
		return b.caseExpr(e)
	case *parser.CastExpr:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		t, err := BindType(e.Type)
		if err != nil {
			return nil, err
		}
		if !canCast(x.Type(), t) {
			return nil, errorf(e, "cannot cast %s to %s", x.Type().Nullable(), t)
		}
		if l, ok := x.(*Literal); ok {
			if folded, ok := foldCast(l, t.Nullable()); ok {
				return folded, nil
			}
		}
		if t.Kind == String && t.Length > 0 {
			// CAST to VARCHAR(n) keeps the first n characters, as Flink does; CAST to
			// CHAR(n) also pads with spaces to n.
			s := &Cast{X: x, T: TypeString, Try: e.Try}
			n := &Literal{Value: int32(t.Length), T: Type{Kind: Int, NotNull: true}}
			if t.Fixed {
				space := &Literal{Value: " ", T: Type{Kind: String, NotNull: true}}
				return &Call{Fn: FnRPad, Args: []Expr{s, n, space}, T: t.Nullable()}, nil
			}
			one := &Literal{Value: int32(1), T: Type{Kind: Int, NotNull: true}}
			return &Call{Fn: FnSubstring, Args: []Expr{s, one, n}, T: Type{Kind: String, Length: t.Length}}, nil
		}
		return &Cast{X: x, T: t.Nullable(), Try: e.Try}, nil
	case *parser.ExtractExpr:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		if !x.Type().IsTemporal() && x.Type().Kind != Time {
			return nil, errorf(e, "EXTRACT needs a TIMESTAMP, DATE or TIME, got %s", x.Type().Nullable())
		}
		if x.Type().Kind == Time {
			switch e.Unit {
			case "HOUR", "MINUTE", "SECOND", "MILLISECOND":
			default:
				return nil, errorf(e, "EXTRACT(%s FROM ...) does not apply to a TIME: only HOUR, MINUTE, SECOND and MILLISECOND do", e.Unit)
			}
		}
		switch e.Unit {
		case "YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "DOW", "DOY", "EPOCH":
		default:
			return nil, errorf(e, "unknown EXTRACT unit %s", e.Unit)
		}
		unit := &Literal{Value: e.Unit, T: Type{Kind: String, NotNull: true}}
		return &Call{Fn: FnExtract, Args: []Expr{unit, x}, T: Type{Kind: BigInt, NotNull: x.Type().NotNull}}, nil
	case *parser.FuncCall:
		return b.call(e)
	case *parser.ItemExpr:
		return b.item(e)
	case *parser.FieldExpr:
		return b.fieldOf(e)
	case *parser.CollectionExpr:
		return b.collection(e)
	case *parser.OverExpr:
		if x, ok := b.over[e]; ok {
			return x, nil
		}
		if e.Call != nil {
			return nil, errorf(e, "%s(...) OVER (...) may only be in a select list", e.Fn)
		}
		return nil, errorf(e, "%s() OVER (...) may only be a select item of its own, filtered by an enclosing query: "+
			"SELECT * FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rownum FROM t) WHERE rownum <= N", e.Fn)
	}
	return nil, errorf(e, "unsupported expression %s", e)
}

func (b *exprBinder) bindAll(es []parser.Expr) ([]Expr, error) {
	out := make([]Expr, len(es))
	for i, e := range es {
		x, err := b.bind(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// expect checks that x (bound from n) can be used as a t, casting a NULL literal.
func (b *exprBinder) expect(n interface {
	positioned
	String() string
}, x Expr, t Type) (Expr, error) {
	xt := x.Type()
	if xt.Kind == Null {
		return castTo(x, t), nil
	}
	if xt.Kind != t.Kind {
		if t.IsNumeric() && xt.IsNumeric() {
			return castTo(x, t), nil
		}
		return nil, errorf(n, "expected %s, got %s in %s", t, xt.Nullable(), n)
	}
	return x, nil
}

func numberLiteral(e *parser.NumberLit) (Expr, error) {
	text := e.Text
	if !strings.ContainsAny(text, ".eE") {
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			// Too big for BIGINT: a DECIMAL, as Flink types it.
			if len(text) > 38 {
				return nil, errorf(e, "numeric literal %s is out of range", text)
			}
			return &Literal{Value: text, T: Type{Kind: Decimal, Precision: len(text), NotNull: true}}, nil
		}
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return &Literal{Value: int32(v), T: Type{Kind: Int, NotNull: true}}, nil
		}
		return &Literal{Value: v, T: Type{Kind: BigInt, NotNull: true}}, nil
	}
	if strings.ContainsAny(text, "eE") {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, errorf(e, "invalid number %s", text)
		}
		return &Literal{Value: v, T: Type{Kind: Double, NotNull: true}}, nil
	}
	// An exact decimal literal: DECIMAL(p, s) as Flink types 1.5.
	intPart, frac, _ := strings.Cut(text, ".")
	intPart = strings.TrimLeft(intPart, "0")
	p, s := len(intPart)+len(frac), len(frac)
	if p == 0 {
		p = 1
	}
	if p < s {
		p = s
	}
	if p > 38 {
		return nil, errorf(e, "numeric literal %s has more than 38 digits", text)
	}
	if strings.HasPrefix(text, ".") {
		text = "0" + text
	}
	return &Literal{Value: text, T: Type{Kind: Decimal, Precision: p, Scale: s, NotNull: true}}, nil
}

var unitMillis = map[string]int64{"DAY": 86400000, "HOUR": 3600000, "MINUTE": 60000, "SECOND": 1000, "MILLISECOND": 1}

func intervalLiteral(e *parser.IntervalLit) (Expr, error) {
	v := strings.TrimSpace(e.Value)
	neg := strings.HasPrefix(v, "-")
	v = strings.TrimPrefix(strings.TrimPrefix(v, "-"), "+")
	bad := func() (Expr, error) {
		return nil, errorf(e, "invalid interval literal '%s' %s", e.Value, e.Unit)
	}
	sign := int64(1)
	if neg {
		sign = -1
	}
	if e.Unit == "YEAR" || e.Unit == "MONTH" {
		var months int64
		switch {
		case e.Unit == "YEAR" && e.ToUnit == "MONTH":
			y, m, ok := strings.Cut(v, "-")
			yi, err1 := strconv.ParseInt(y, 10, 32)
			mi, err2 := strconv.ParseInt(m, 10, 32)
			if !ok || err1 != nil || err2 != nil {
				return bad()
			}
			months = yi*12 + mi
		case e.ToUnit == "":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return bad()
			}
			months = n
			if e.Unit == "YEAR" {
				months *= 12
			}
		default:
			return bad()
		}
		if months > math.MaxInt32 {
			return outOfRange(e)
		}
		return &Literal{Value: int32(sign * months), T: Type{Kind: IntervalYearMonth, NotNull: true}}, nil
	}
	unit, ok := unitMillis[e.Unit]
	if !ok {
		return bad()
	}
	var total float64 // milliseconds, summed as floats so that overflow shows
	if e.ToUnit == "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad()
		}
		total = math.Round(f * float64(unit))
	} else {
		// 'D HH:MM:SS.fff' style: split on space and colon from the leading unit down.
		units := []string{"DAY", "HOUR", "MINUTE", "SECOND"}
		start := -1
		for i, u := range units {
			if u == e.Unit {
				start = i
			}
		}
		parts := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ':' })
		if start < 0 || len(parts) == 0 || start+len(parts) > len(units) || units[start+len(parts)-1] != e.ToUnit {
			return bad()
		}
		for i, part := range parts {
			f, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return bad()
			}
			total += math.Round(f * float64(unitMillis[units[start+i]]))
		}
	}
	if math.IsNaN(total) || math.Abs(total) > maxIntervalMillis {
		return outOfRange(e)
	}
	return &Literal{Value: sign * int64(total), T: Type{Kind: IntervalDayTime, NotNull: true}}, nil
}

// maxIntervalMillis bounds a day-time interval: 10^9 days, far past any timestamp's
// range and safely inside int64 milliseconds.
const maxIntervalMillis = 1e9 * 86400000

func outOfRange(e *parser.IntervalLit) (Expr, error) {
	return nil, errorf(e, "interval literal '%s' %s is out of range", e.Value, e.Unit)
}

func typedLiteral(e *parser.TypedLit) (Expr, error) {
	switch e.Type {
	case "DATE":
		t, err := time.Parse("2006-01-02", strings.TrimSpace(e.Value))
		if err != nil {
			return nil, errorf(e, "invalid DATE literal '%s', expected yyyy-MM-dd", e.Value)
		}
		return &Literal{Value: int32(t.Unix() / 86400), T: Type{Kind: Date, NotNull: true}}, nil
	case "TIMESTAMP":
		ms, ok := ParseTimestamp(e.Value)
		if !ok {
			return nil, errorf(e, "invalid TIMESTAMP literal '%s', expected yyyy-MM-dd HH:mm:ss[.SSS]", e.Value)
		}
		// The literal's precision is its number of fraction digits, as Flink types it.
		return &Literal{Value: ms, T: Type{Kind: Timestamp, Precision: fractionDigits(e.Value), NotNull: true}}, nil
	case "TIME":
		ms, digits, ok := ParseTimeOfDay(e.Value)
		if !ok {
			return nil, errorf(e, "invalid TIME literal '%s', expected HH:mm:ss[.SSS]", e.Value)
		}
		// The literal's precision is its number of fraction digits, as Flink types it.
		t := Type{Kind: Time, Precision: digits, NotNull: true}
		return &Literal{Value: int32(ms / TimeUnitMillis(t)), T: t}, nil
	}
	return nil, errorf(e, "unsupported literal type %s", e.Type)
}

// ParseTimeOfDay parses H:m[:s[.fraction]] (hours 0 to 23, surrounding spaces allowed)
// into milliseconds of the day, truncating the fraction to milliseconds; digits is the
// number of fraction digits written (at most 9).
func ParseTimeOfDay(s string) (ms int64, digits int, ok bool) {
	s = strings.TrimSpace(s)
	i := 0
	num := func(maxLen int) (int64, bool) {
		start, v := i, int64(0)
		for i < len(s) && i-start < maxLen && '0' <= s[i] && s[i] <= '9' {
			v = v*10 + int64(s[i]-'0')
			i++
		}
		return v, i > start
	}
	lit := func(c byte) bool {
		if i < len(s) && s[i] == c {
			i++
			return true
		}
		return false
	}
	h, ok1 := num(2)
	ok2 := lit(':')
	m, ok3 := num(2)
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 {
		return 0, 0, false
	}
	var sec, frac int64
	if lit(':') {
		var ok bool
		if sec, ok = num(2); !ok || sec > 59 {
			return 0, 0, false
		}
		if lit('.') {
			start := i
			f, ok := num(9)
			if !ok {
				return 0, 0, false
			}
			digits = i - start
			for k := digits; k < 3; k++ {
				f *= 10
			}
			for k := digits; k > 3; k-- {
				f /= 10
			}
			frac = f
		}
	}
	if i != len(s) {
		return 0, 0, false
	}
	return ((h*60+m)*60+sec)*1000 + frac, digits, true
}

// fractionDigits is how many digits follow the seconds' '.' in a timestamp's text, at
// most 9.
func fractionDigits(s string) int {
	s = strings.TrimSpace(s)
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 || strings.LastIndexByte(s, ':') > dot {
		return 0
	}
	n := 0
	for _, c := range s[dot+1:] {
		if c < '0' || c > '9' {
			break
		}
		n++
	}
	return min(n, 9)
}

// ParseTimestamp parses yyyy-MM-dd[ HH:mm[:ss[.fff]]] (or with a 'T') into epoch
// milliseconds of the wall clock read as UTC.
func ParseTimestamp(s string) (int64, bool) {
	s = strings.Replace(strings.TrimSpace(s), "T", " ", 1)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), true
		}
	}
	return 0, false
}

func (b *exprBinder) unary(e *parser.UnaryExpr) (Expr, error) {
	x, err := b.bind(e.X)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case "NOT":
		if x, err = b.expect(e.X, x, TypeBoolean); err != nil {
			return nil, err
		}
		return &Call{Fn: FnNot, Args: []Expr{x}, T: x.Type()}, nil
	case "+":
		return x, nil
	}
	t := x.Type()
	if !t.IsNumeric() && t.Kind != IntervalDayTime && t.Kind != IntervalYearMonth {
		return nil, errorf(e, "cannot negate %s", t.Nullable())
	}
	if l, ok := x.(*Literal); ok {
		if neg, ok := negateLiteral(l); ok {
			return neg, nil
		}
	}
	if isNarrow(t) {
		var neg Expr = &Call{Fn: FnNeg, Args: []Expr{castTo(x, widened(t))}, T: widened(t)}
		if t.Kind == Float {
			neg = &Cast{X: neg, T: t.Nullable()}
		}
		return neg, nil
	}
	return &Call{Fn: FnNeg, Args: []Expr{x}, T: t}, nil
}

func negateLiteral(l *Literal) (*Literal, bool) {
	switch v := l.Value.(type) {
	case int32:
		if v != math.MinInt32 {
			return &Literal{Value: -v, T: l.T}, true
		}
	case int64:
		if v != math.MinInt64 {
			return &Literal{Value: -v, T: l.T}, true
		}
	case float64:
		return &Literal{Value: -v, T: l.T}, true
	case string:
		if l.T.Kind == Decimal {
			if strings.HasPrefix(v, "-") {
				return &Literal{Value: v[1:], T: l.T}, true
			}
			return &Literal{Value: "-" + v, T: l.T}, true
		}
	}
	return nil, false
}

var comparisonFuncs = map[string]Func{"=": FnEq, "<>": FnNe, "<": FnLt, "<=": FnLe, ">": FnGt, ">=": FnGe}
var arithmeticFuncs = map[string]Func{"+": FnAdd, "-": FnSub, "*": FnMul, "/": FnDiv, "%": FnMod}

// binary binds a chain of binary operators down its left side in a loop, not by
// recursion: a flat chain of 100,000 terms (1 + 1 + ...) is that deep on its left, and
// a recursion as deep would spend most of its time growing the stack.
func (b *exprBinder) binary(e *parser.BinaryExpr) (Expr, error) {
	spine := []*parser.BinaryExpr{e}
	var l Expr
	for l == nil {
		below := spine[len(spine)-1].Left
		left, ok := below.(*parser.BinaryExpr)
		if !ok || left.Op == "OVERLAPS" {
			bound, err := b.bind(below)
			if err != nil {
				return nil, err
			}
			l = bound
			break
		}
		if b.agg != nil { // as bind does first: a GROUP BY expression may be the left side
			if ref, ok, err := b.agg.lookup(left); err != nil {
				return nil, err
			} else if ok {
				l = ref
				break
			}
		}
		spine = append(spine, left)
	}
	for i := len(spine) - 1; i >= 0; i-- {
		r, err := b.bind(spine[i].Right)
		if err != nil {
			return nil, err
		}
		if l, err = b.binaryOp(spine[i], l, r); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// binaryOp binds the binary operator of e over its bound operands.
func (b *exprBinder) binaryOp(e *parser.BinaryExpr, l, r Expr) (out Expr, err error) {
	notNull := l.Type().NotNull && r.Type().NotNull
	switch e.Op {
	case "AND", "OR":
		if l, err = b.expect(e.Left, l, TypeBoolean); err != nil {
			return nil, err
		}
		if r, err = b.expect(e.Right, r, TypeBoolean); err != nil {
			return nil, err
		}
		fn := FnAnd
		if e.Op == "OR" {
			fn = FnOr
		}
		return &Call{Fn: fn, Args: []Expr{l, r}, T: Type{Kind: Boolean, NotNull: notNull}}, nil
	case "||":
		return concat(e, []Expr{l, r})
	}
	if fn, ok := comparisonFuncs[e.Op]; ok {
		return compare(e, fn, l, r)
	}
	fn := arithmeticFuncs[e.Op]
	lt, rt := l.Type(), r.Type()
	// DATE ± interval is a DATE, computed on its midnight.
	if lt.Kind == Date && (rt.Kind == IntervalDayTime || rt.Kind == IntervalYearMonth) && (fn == FnAdd || fn == FnSub) {
		ts := &Call{Fn: fn, Args: []Expr{&Cast{X: l, T: TypeTS}, r}, T: Type{Kind: Timestamp, Precision: 3, NotNull: notNull}}
		return &Cast{X: ts, T: TypeDate}, nil
	}
	// TIME ± a day-time interval is a TIME, wrapping around midnight: computed on
	// 1970-01-01 as a TIMESTAMP whose time of day is kept.
	if lt.Kind == Time && rt.Kind == IntervalDayTime && (fn == FnAdd || fn == FnSub) ||
		rt.Kind == Time && lt.Kind == IntervalDayTime && fn == FnAdd {
		tm, iv := l, r
		if rt.Kind == Time {
			tm, iv = r, l
		}
		ts := &Call{Fn: fn, Args: []Expr{&Cast{X: tm, T: TypeTS}, iv}, T: Type{Kind: Timestamp, Precision: 3, NotNull: notNull}}
		t := tm.Type()
		t.NotNull = notNull
		return &Cast{X: ts, T: t}, nil
	}
	// Timestamp arithmetic with intervals.
	if (lt.Kind == Timestamp || lt.Kind == TimestampLTZ) && (rt.Kind == IntervalDayTime || rt.Kind == IntervalYearMonth) && (fn == FnAdd || fn == FnSub) {
		return timestampArith(fn, l, r, notNull), nil
	}
	if (rt.Kind == Timestamp || rt.Kind == TimestampLTZ) && (lt.Kind == IntervalDayTime || lt.Kind == IntervalYearMonth) && fn == FnAdd {
		return timestampArith(fn, r, l, notNull), nil
	}
	if fn == FnMul {
		if folded, ok := scaleInterval(l, r); ok {
			return folded, nil
		}
		if folded, ok := scaleInterval(r, l); ok {
			return folded, nil
		}
	}
	if lt.Kind == Null {
		lt = rt
	}
	if rt.Kind == Null {
		rt = lt
	}
	// TINYINT, SMALLINT and FLOAT compute as INT and DOUBLE. FLOAT's result is cast back
	// to FLOAT, as Flink types it (exact: the double of two floats' + - * / rounds to the
	// float result); TINYINT's and SMALLINT's stays INT, where Flink's would wrap around.
	narrow, _ := commonType(lt, rt)
	if narrow.Kind != Float {
		narrow = TypeNull
	}
	lt, rt = widened(lt), widened(rt)
	t, ok := arithmeticType(fn, lt, rt)
	if !ok {
		return nil, errorf(e, "%s", mismatch(e.Op, l.Type(), r.Type()))
	}
	if isNarrow(narrow) {
		defer func() {
			if out != nil {
				out = &Cast{X: out, T: narrow.Nullable()}
			}
		}()
	}
	if t.Kind != Decimal {
		l, r = castTo(l, t), castTo(r, t)
	} else {
		l, r = castTo(l, decimalOf(lt)), castTo(r, decimalOf(rt))
		if lt.Kind == Null {
			l = castTo(l, decimalOf(rt))
		}
	}
	t.NotNull = notNull && fn != FnDiv && fn != FnMod
	return &Call{Fn: fn, Args: []Expr{l, r}, T: t}, nil
}

func compare(n positioned, fn Func, l, r Expr) (Expr, error) {
	t, ok := commonType(l.Type(), r.Type())
	if !ok {
		return nil, errorf(n, "cannot compare %s and %s", l.Type().Nullable(), r.Type().Nullable())
	}
	if t.IsNested() || t.Kind == Binary {
		return nil, errorf(n, "comparing %s values is not supported", t.Nullable())
	}
	t = widened(t)
	if t.Kind == Null {
		t = TypeBoolean
	}
	notNull := l.Type().NotNull && r.Type().NotNull
	return &Call{Fn: fn, Args: []Expr{castTo(l, t), castTo(r, t)}, T: Type{Kind: Boolean, NotNull: notNull}}, nil
}

func concat(n positioned, args []Expr) (Expr, error) {
	notNull := true
	for i, a := range args {
		switch a.Type().Kind {
		case String:
		case Null:
			args[i] = castTo(a, TypeString)
		default:
			return nil, errorf(n, "cannot concatenate %s: CONCAT and || take STRING arguments; use CAST(x AS STRING)", a.Type().Nullable())
		}
		notNull = notNull && a.Type().NotNull
	}
	return &Call{Fn: FnConcat, Args: args, T: Type{Kind: String, NotNull: notNull}}, nil
}

func (b *exprBinder) between(e *parser.BetweenExpr) (Expr, error) {
	x, err := b.bind(e.X)
	if err != nil {
		return nil, err
	}
	lo, err := b.bind(e.Low)
	if err != nil {
		return nil, err
	}
	hi, err := b.bind(e.High)
	if err != nil {
		return nil, err
	}
	within := func(lo, hi Expr) (Expr, error) {
		ge, err := compare(e, FnGe, x, lo)
		if err != nil {
			return nil, err
		}
		le, err := compare(e, FnLe, x, hi)
		if err != nil {
			return nil, err
		}
		return &Call{Fn: FnAnd, Args: []Expr{ge, le}, T: Type{Kind: Boolean, NotNull: ge.Type().NotNull && le.Type().NotNull}}, nil
	}
	out, err := within(lo, hi)
	if err != nil {
		return nil, err
	}
	if e.Symmetric {
		// SYMMETRIC: between the two bounds in either order, with AND/OR's NULL semantics
		// (12 BETWEEN SYMMETRIC NULL AND 12 is UNKNOWN), as Flink.
		rev, err := within(hi, lo)
		if err != nil {
			return nil, err
		}
		out = &Call{Fn: FnOr, Args: []Expr{out, rev}, T: Type{Kind: Boolean, NotNull: out.Type().NotNull && rev.Type().NotNull}}
	}
	if e.Not {
		out = &Call{Fn: FnNot, Args: []Expr{out}, T: out.Type()}
	}
	return out, nil
}

func (b *exprBinder) in(e *parser.InExpr) (Expr, error) {
	x, err := b.bind(e.X)
	if err != nil {
		return nil, err
	}
	list, err := b.bindAll(e.List)
	if err != nil {
		return nil, err
	}
	t := x.Type()
	for i, item := range list {
		common, ok := commonType(t, item.Type())
		t = common
		if !ok {
			return nil, errorf(e.List[i], "IN list item of type %s does not match %s", item.Type().Nullable(), x.Type().Nullable())
		}
	}
	t = widened(t)
	args := []Expr{castTo(x, t)}
	for _, item := range list {
		args = append(args, castTo(item, t))
	}
	var out Expr = &Call{Fn: FnIn, Args: args, T: TypeBoolean}
	if e.Not {
		out = &Call{Fn: FnNot, Args: []Expr{out}, T: TypeBoolean}
	}
	return out, nil
}

func (b *exprBinder) like(e *parser.LikeExpr) (Expr, error) {
	x, err := b.bind(e.X)
	if err != nil {
		return nil, err
	}
	p, err := b.bind(e.Pattern)
	if err != nil {
		return nil, err
	}
	if x, err = b.expect(e.X, x, TypeString); err != nil {
		return nil, err
	}
	if p, err = b.expect(e.Pattern, p, TypeString); err != nil {
		return nil, err
	}
	args := []Expr{x, p}
	if e.Escape != "" {
		if len([]rune(e.Escape)) != 1 {
			return nil, errorf(e, "LIKE escape must be a single character, got '%s'", e.Escape)
		}
		args = append(args, &Literal{Value: e.Escape, T: TypeString})
	}
	var out Expr = &Call{Fn: FnLike, Args: args, T: Type{Kind: Boolean, NotNull: x.Type().NotNull && p.Type().NotNull}}
	if e.Similar {
		if out, err = b.operator(e, FnSimilar, args...); err != nil {
			return nil, err
		}
	}
	if e.Not {
		out = &Call{Fn: FnNot, Args: []Expr{out}, T: out.Type()}
	}
	return out, nil
}

func (b *exprBinder) caseExpr(e *parser.CaseExpr) (Expr, error) {
	var operand Expr
	if e.Operand != nil {
		var err error
		if operand, err = b.bind(e.Operand); err != nil {
			return nil, err
		}
	}
	c := &Case{}
	t := TypeNull
	for _, w := range e.Whens {
		cond, err := b.bind(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			// CASE x WHEN a, b THEN: x = a OR x = b.
			if cond, err = compare(w, FnEq, operand, cond); err != nil {
				return nil, err
			}
			for _, v := range w.Also {
				y, err := b.bind(v)
				if err != nil {
					return nil, err
				}
				eq, err := compare(v, FnEq, operand, y)
				if err != nil {
					return nil, err
				}
				cond = &Call{Fn: FnOr, Args: []Expr{cond, eq}, T: Type{Kind: Boolean, NotNull: cond.Type().NotNull && eq.Type().NotNull}}
			}
		} else if cond, err = b.expect(w.Cond, cond, TypeBoolean); err != nil {
			return nil, err
		}
		res, err := b.bind(w.Result)
		if err != nil {
			return nil, err
		}
		common, ok := commonType(t, res.Type())
		if !ok {
			return nil, errorf(w.Result, "CASE branches have types %s and %s", t, res.Type().Nullable())
		}
		t = common
		c.Whens = append(c.Whens, When{Cond: cond, Result: res})
	}
	c.Else = &Literal{T: TypeNull}
	if e.Else != nil {
		els, err := b.bind(e.Else)
		if err != nil {
			return nil, err
		}
		common, ok := commonType(t, els.Type())
		if !ok {
			return nil, errorf(e.Else, "CASE branches have types %s and %s", t, els.Type().Nullable())
		}
		t = common
		c.Else = els
	}
	if t.Kind == Null {
		t = TypeString
	}
	c.T = t
	for i := range c.Whens {
		c.Whens[i].Result = castTo(c.Whens[i].Result, t)
	}
	c.Else = castTo(c.Else, t)
	return c, nil
}

// scaleInterval folds a constant interval times a constant integer into an interval.
func scaleInterval(iv, n Expr) (Expr, bool) {
	il, ok1 := iv.(*Literal)
	nl, ok2 := n.(*Literal)
	if !ok1 || !ok2 || il.Value == nil || nl.Value == nil || (il.T.Kind != IntervalDayTime && il.T.Kind != IntervalYearMonth) {
		return nil, false
	}
	var k int64
	switch v := nl.Value.(type) {
	case int32:
		k = int64(v)
	case int64:
		k = v
	default:
		return nil, false
	}
	switch v := il.Value.(type) {
	case int64: // day-time, milliseconds
		return &Literal{Value: v * k, T: il.T}, true
	case int32: // year-month, months
		return &Literal{Value: int32(int64(v) * k), T: il.T}, true
	}
	return nil, false
}

// overlaps binds (s1, x1) OVERLAPS (s2, x2), where each x is the period's other end or
// its length (an interval): with each period's ends in order, the periods overlap when
// each starts at or before the other ends (as Calcite, and so Flink, computes it).
func (b *exprBinder) overlaps(e *parser.BinaryExpr) (Expr, error) {
	var ends [2][2]parser.Expr
	for k, side := range []parser.Expr{e.Left, e.Right} {
		row, ok := side.(*parser.FuncCall)
		if !ok || !strings.EqualFold(row.Name, "ROW") || len(row.Args) != 2 {
			return nil, errorf(side, "OVERLAPS takes a period on each side: (start, end) or (start, interval)")
		}
		ends[k] = [2]parser.Expr{row.Args[0], row.Args[1]}
		x, err := b.bind(row.Args[1])
		if err != nil {
			return nil, err
		}
		if t := x.Type().Kind; t == IntervalDayTime || t == IntervalYearMonth {
			ends[k][1] = &parser.BinaryExpr{Pos: row.Args[1].Position(), Op: "+", Left: row.Args[0], Right: row.Args[1]}
		}
	}
	for k := range ends {
		s, err := b.bind(ends[k][0])
		if err != nil {
			return nil, err
		}
		if t := s.Type(); !t.IsTemporal() && t.Kind != Time && t.Kind != Null {
			return nil, errorf(ends[k][0], "OVERLAPS periods start at a TIMESTAMP, DATE or TIME, got %s", t.Nullable())
		}
	}
	call := func(name string, args ...parser.Expr) parser.Expr {
		return &parser.FuncCall{Pos: e.Pos, Name: name, Args: args}
	}
	lo := func(k int) parser.Expr { return call("LEAST", ends[k][0], ends[k][1]) }
	hi := func(k int) parser.Expr { return call("GREATEST", ends[k][0], ends[k][1]) }
	return b.bind(&parser.BinaryExpr{Pos: e.Pos, Op: "AND",
		Left:  &parser.BinaryExpr{Pos: e.Pos, Op: "<=", Left: lo(0), Right: hi(1)},
		Right: &parser.BinaryExpr{Pos: e.Pos, Op: "<=", Left: lo(1), Right: hi(0)}})
}

// timestampArith is ts ± interval. The result keeps the timestamp's type, as in Flink; a
// precision below milliseconds is computed to the millisecond and then cut to its digits
// (TIMESTAMP(0) + INTERVAL '1.5' SECOND keeps whole seconds).
func timestampArith(fn Func, ts, iv Expr, notNull bool) Expr {
	t := ts.Type()
	t.NotNull = notNull
	if t.Precision >= 3 {
		return &Call{Fn: fn, Args: []Expr{ts, iv}, T: t}
	}
	wide := t
	wide.Precision = 3
	return &Cast{X: &Call{Fn: fn, Args: []Expr{ts, iv}, T: wide}, T: t}
}
