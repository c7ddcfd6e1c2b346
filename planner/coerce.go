package planner

import (
	"fmt"
	"strconv"
)

// decimalOf returns the DECIMAL type that holds every value of an exact numeric type.
func decimalOf(t Type) Type {
	switch t.Kind {
	case TinyInt:
		return DecimalType(3, 0)
	case SmallInt:
		return DecimalType(5, 0)
	case Int:
		return DecimalType(10, 0)
	case BigInt:
		return DecimalType(19, 0)
	}
	return t
}

// commonType is the type two operands meet at for comparison, CASE, COALESCE and IN.
func commonType(a, b Type) (Type, bool) {
	a, b = a.Nullable(), b.Nullable()
	if a.Kind == String && b.Kind == String {
		return TypeString, true
	}
	if a == b {
		return a, true
	}
	if a.Kind == Null {
		return b, true
	}
	if b.Kind == Null {
		return a, true
	}
	if a.IsNested() || b.IsNested() {
		return nestedCommon(a, b)
	}
	if a.IsNumeric() && b.IsNumeric() {
		switch {
		case a.Kind == Double || b.Kind == Double:
			return TypeDouble, true
		case a.Kind == Float || b.Kind == Float:
			if a.Kind == Decimal || b.Kind == Decimal {
				return TypeDouble, true
			}
			return Type{Kind: Float}, true
		case a.Kind == Decimal || b.Kind == Decimal:
			da, db := decimalOf(a), decimalOf(b)
			s := max(da.Scale, db.Scale)
			p := min(38, max(da.Precision-da.Scale, db.Precision-db.Scale)+s)
			return DecimalType(p, s), true
		case a.Kind == BigInt || b.Kind == BigInt:
			return TypeBigInt, true
		case a.Kind == Int || b.Kind == Int:
			return TypeInt, true
		case a.Kind == SmallInt || b.Kind == SmallInt:
			return Type{Kind: SmallInt}, true
		}
		return Type{Kind: TinyInt}, true
	}
	if a.Kind == Timestamp && b.Kind == Date {
		return Type{Kind: Timestamp, Precision: a.Precision}, true
	}
	if a.Kind == Date && b.Kind == Timestamp {
		return Type{Kind: Timestamp, Precision: b.Precision}, true
	}
	if (a.Kind == Timestamp || a.Kind == TimestampLTZ) && a.Kind == b.Kind {
		return Type{Kind: a.Kind, Precision: max(a.Precision, b.Precision)}, true // the greater precision wins
	}
	if a.Kind == Time && b.Kind == Time {
		return TimeType(max(a.Precision, b.Precision)), true
	}
	if a.Kind == b.Kind { // TIMESTAMP precisions, VARCHAR lengths
		return a, true
	}
	return Type{}, false
}

// widened is the type a value of t is computed as: TINYINT and SMALLINT as INT, FLOAT
// as DOUBLE (exactly), so that kernels know only the wide types and only CAST meets the
// narrow ones. A result that Flink types narrow is cast back (see binary).
func widened(t Type) Type {
	switch t.Kind {
	case TinyInt, SmallInt:
		return Type{Kind: Int, NotNull: t.NotNull}
	case Float:
		return Type{Kind: Double, NotNull: t.NotNull}
	}
	return t
}

// isNarrow reports whether t is TINYINT, SMALLINT or FLOAT.
func isNarrow(t Type) bool { return widened(t).Kind != t.Kind }

// castTo returns e converted to t, or e itself when it already has t's type.
func castTo(e Expr, t Type) Expr {
	et := e.Type()
	if et.Nullable() == t.Nullable() || (et.Kind == String && t.Kind == String) {
		return e
	}
	if l, ok := e.(*Literal); ok {
		if folded, ok := foldCast(l, t.Nullable()); ok {
			return folded
		}
	}
	return &Cast{X: e, T: t.Nullable()}
}

// foldCast converts a numeric literal at plan time, so that kernels compare a column with
// a constant of its own type.
func foldCast(l *Literal, t Type) (*Literal, bool) {
	notNull := t
	notNull.NotNull = l.T.NotNull
	if l.Value == nil {
		return &Literal{T: t}, true
	}
	switch v := l.Value.(type) {
	case int32:
		switch t.Kind {
		case BigInt:
			return &Literal{Value: int64(v), T: notNull}, true
		case Double:
			return &Literal{Value: float64(v), T: notNull}, true
		}
	case int64:
		if t.Kind == Double {
			return &Literal{Value: float64(v), T: notNull}, true
		}
	case string:
		if l.T.Kind == Decimal && t.Kind == Double {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return &Literal{Value: f, T: notNull}, true
			}
		}
	}
	return nil, false
}

// arithmeticType is the result of a + - * / % b, or false when the types don't mix.
func arithmeticType(fn Func, a, b Type) (Type, bool) {
	a, b = a.Nullable(), b.Nullable()
	if !a.IsNumeric() || !b.IsNumeric() {
		return Type{}, false
	}
	if a.Kind == Double || b.Kind == Double {
		return TypeDouble, true
	}
	if a.Kind != Decimal && b.Kind != Decimal {
		if a.Kind == BigInt || b.Kind == BigInt {
			return TypeBigInt, true
		}
		return TypeInt, true
	}
	da, db := decimalOf(a), decimalOf(b)
	p1, s1, p2, s2 := da.Precision, da.Scale, db.Precision, db.Scale
	var p, s int
	switch fn {
	case FnAdd, FnSub:
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
	case FnMul:
		p, s = p1+p2, s1+s2
	case FnDiv:
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	case FnMod:
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	if p > 38 {
		s = max(min(s, 6), s-(p-38))
		p = 38
	}
	return DecimalType(p, s), true
}

func mismatch(op string, a, b Type) string {
	return fmt.Sprintf("cannot apply '%s' to %s and %s", op, a.Nullable(), b.Nullable())
}

// canCast reports whether CAST(from AS to) is allowed.
func canCast(from, to Type) bool {
	if from.IsNested() || to.IsNested() {
		return from.Kind == Null || (from.IsNested() && to.Kind == String) || canCastNested(from, to)
	}
	if from.Kind == Null || from.Kind == to.Kind || from.Kind == String || to.Kind == String {
		return true
	}
	num := func(t Type) bool { return t.IsNumeric() || t.Kind == Boolean }
	if num(from) && num(to) {
		return true
	}
	if from.IsTemporal() && to.IsTemporal() {
		return true
	}
	// TIME meets the timestamps (a TIME is the time of day of 1970-01-01), not DATE.
	ts := func(t Type) bool { return t.Kind == Timestamp || t.Kind == TimestampLTZ }
	return from.Kind == Time && ts(to) || ts(from) && to.Kind == Time
}
