package planner

import (
	"github.com/streamsql/streamsql/parser"
)

// call binds a scalar function call.
func (b *exprBinder) call(e *parser.FuncCall) (Expr, error) {
	if e.Distinct || e.Star {
		return nil, errorf(e, "%s is not an aggregate function", e.Name)
	}
	args, err := b.bindAll(e.Args)
	if err != nil {
		return nil, err
	}
	arity := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			want := "1 argument"
			switch {
			case lo == hi && lo != 1:
				want = itoa(lo) + " arguments"
			case lo != hi:
				want = itoa(lo) + " to " + itoa(hi) + " arguments"
			}
			if lo == 0 && hi == 0 {
				want = "no arguments"
			}
			return errorf(e, "%s takes %s, got %d", e.Name, want, len(args))
		}
		return nil
	}
	// arg checks argument i against a kind and casts numerics to it.
	arg := func(i int, t Type) error {
		x, err := b.expect(e.Args[i], args[i], t)
		if err != nil {
			return errorf(e.Args[i], "%s argument %d must be %s, got %s", e.Name, i+1, kindName(t), args[i].Type().Nullable())
		}
		args[i] = x
		return nil
	}
	notNull := func() bool {
		for _, a := range args {
			if !a.Type().NotNull {
				return false
			}
		}
		return true
	}
	str := Type{Kind: String}
	num := func(i int) error {
		if !args[i].Type().IsNumeric() {
			if args[i].Type().Kind == Null {
				args[i] = castTo(args[i], TypeDouble)
				return nil
			}
			return errorf(e.Args[i], "%s needs a numeric argument, got %s", e.Name, args[i].Type().Nullable())
		}
		return nil
	}
	call := func(fn Func, t Type) (Expr, error) {
		t.NotNull = t.NotNull || (notNull() && t.Kind != Null)
		return &Call{Fn: fn, Args: args, T: t}, nil
	}
	switch e.Name {
	case "UPPER", "LOWER", "CHAR_LENGTH", "CHARACTER_LENGTH":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		if err := arg(0, str); err != nil {
			return nil, err
		}
		switch e.Name {
		case "UPPER":
			return call(FnUpper, str)
		case "LOWER":
			return call(FnLower, str)
		}
		return call(FnCharLength, TypeInt)
	case "CONCAT":
		if len(args) == 0 {
			return nil, errorf(e, "CONCAT takes at least one argument")
		}
		return concat(e, args)
	case "SUBSTRING", "SUBSTR":
		if err := arity(2, 3); err != nil {
			return nil, err
		}
		if err := arg(0, str); err != nil {
			return nil, err
		}
		for i := 1; i < len(args); i++ {
			if err := arg(i, TypeInt); err != nil {
				return nil, err
			}
		}
		return call(FnSubstring, str)
	case "TRIM", "LTRIM", "RTRIM":
		if err := arity(1, 2); err != nil {
			return nil, err
		}
		for i := range args {
			if err := arg(i, str); err != nil {
				return nil, err
			}
		}
		return call(map[string]Func{"TRIM": FnTrim, "LTRIM": FnLTrim, "RTRIM": FnRTrim}[e.Name], str)
	case "REPLACE":
		if err := arity(3, 3); err != nil {
			return nil, err
		}
		for i := range args {
			if err := arg(i, str); err != nil {
				return nil, err
			}
		}
		return call(FnReplace, str)
	case "POSITION", "LOCATE":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		for i := range args {
			if err := arg(i, str); err != nil {
				return nil, err
			}
		}
		return call(FnPosition, TypeInt)
	case "ABS", "FLOOR", "CEIL", "CEILING":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		if err := num(0); err != nil {
			return nil, err
		}
		t := args[0].Type().Nullable()
		fn := map[string]Func{"ABS": FnAbs, "FLOOR": FnFloor, "CEIL": FnCeil, "CEILING": FnCeil}[e.Name]
		if fn != FnAbs && t.Kind == Decimal {
			t = DecimalType(min(38, t.Precision-t.Scale+1), 0)
		}
		return call(fn, t)
	case "ROUND":
		if err := arity(1, 2); err != nil {
			return nil, err
		}
		if err := num(0); err != nil {
			return nil, err
		}
		t := args[0].Type().Nullable()
		if len(args) == 2 {
			if err := arg(1, TypeInt); err != nil {
				return nil, err
			}
			if t.Kind == Decimal {
				d, ok := args[1].(*Literal)
				if !ok || d.Value == nil {
					return nil, errorf(e.Args[1], "ROUND of a DECIMAL needs a constant number of digits")
				}
				s := min(int(d.Value.(int32)), t.Scale)
				t = DecimalType(min(38, t.Precision-t.Scale+max(s, 0)+1), max(s, 0))
			}
		} else if t.Kind == Decimal {
			t = DecimalType(min(38, t.Precision-t.Scale+1), 0)
		}
		return call(FnRound, t)
	case "MOD":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		return b.binary(&parser.BinaryExpr{Pos: e.Pos, Op: "%", Left: e.Args[0], Right: e.Args[1]})
	case "POWER", "POW", "SQRT":
		want := 2
		if e.Name == "SQRT" {
			want = 1
		}
		if err := arity(want, want); err != nil {
			return nil, err
		}
		for i := range args {
			if err := num(i); err != nil {
				return nil, err
			}
			args[i] = castTo(args[i], TypeDouble)
		}
		if e.Name == "SQRT" {
			return call(FnSqrt, TypeDouble)
		}
		return call(FnPower, TypeDouble)
	case "COALESCE":
		if len(args) == 0 {
			return nil, errorf(e, "COALESCE takes at least one argument")
		}
		t := TypeNull
		notNull := false
		for i, a := range args {
			common, ok := commonType(t, a.Type())
			if !ok {
				return nil, errorf(e.Args[i], "COALESCE arguments have types %s and %s", t, a.Type().Nullable())
			}
			t = common
			notNull = notNull || a.Type().NotNull
		}
		for i := range args {
			args[i] = castTo(args[i], t)
		}
		t.NotNull = notNull
		return &Call{Fn: FnCoalesce, Args: args, T: t}, nil
	case "NULLIF":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		t, ok := commonType(args[0].Type(), args[1].Type())
		if !ok {
			return nil, errorf(e, "NULLIF arguments have types %s and %s", args[0].Type().Nullable(), args[1].Type().Nullable())
		}
		args[0], args[1] = castTo(args[0], t), castTo(args[1], t)
		return &Call{Fn: FnNullIf, Args: args, T: t.Nullable()}, nil
	case "TO_TIMESTAMP":
		if err := arity(1, 2); err != nil {
			return nil, err
		}
		for i := range args {
			if err := arg(i, str); err != nil {
				return nil, err
			}
		}
		return &Call{Fn: FnToTimestamp, Args: args, T: TypeTS}, nil
	case "TO_TIMESTAMP_LTZ":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		if err := num(0); err != nil {
			return nil, err
		}
		args[0] = castTo(args[0], TypeBigInt)
		p, ok := args[1].(*Literal)
		if !ok || (p.Value != int32(0) && p.Value != int32(3)) {
			return nil, errorf(e.Args[1], "TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 (milliseconds)")
		}
		return call(FnToTimestampLTZ, TypeTSLTZ)
	case "DATE_FORMAT":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		if k := args[0].Type().Kind; k == String {
			args[0] = castTo(args[0], TypeTS)
		} else if k != Timestamp && k != TimestampLTZ && k != Date {
			return nil, errorf(e.Args[0], "DATE_FORMAT needs a TIMESTAMP, got %s", args[0].Type().Nullable())
		}
		if args[0].Type().Kind == Date {
			args[0] = castTo(args[0], TypeTS)
		}
		if err := arg(1, str); err != nil {
			return nil, err
		}
		return call(FnDateFormat, str)
	case "CURRENT_TIMESTAMP", "NOW", "LOCALTIMESTAMP":
		if err := arity(0, 0); err != nil {
			return nil, err
		}
		t := TypeTSLTZ
		t.NotNull = true
		if e.Name == "LOCALTIMESTAMP" {
			return castTo(&Call{Fn: FnCurrentTS, T: t}, TypeTS), nil
		}
		return &Call{Fn: FnCurrentTS, T: t}, nil
	}
	return nil, errorf(e, "unknown function %s%s", e.Name, suggest(e.Name, knownFunctions))
}

var knownFunctions = []string{"UPPER", "LOWER", "CHAR_LENGTH", "CONCAT", "SUBSTRING", "TRIM", "LTRIM", "RTRIM",
	"REPLACE", "POSITION", "ABS", "ROUND", "FLOOR", "CEIL", "MOD", "POWER", "SQRT", "COALESCE", "NULLIF",
	"TO_TIMESTAMP", "TO_TIMESTAMP_LTZ", "DATE_FORMAT", "CURRENT_TIMESTAMP", "COUNT", "SUM", "AVG", "MIN", "MAX"}

func kindName(t Type) string {
	switch t.Kind {
	case String:
		return "a STRING"
	case Int, BigInt, Double, Decimal:
		return "a number"
	}
	return t.String()
}

func itoa(i int) string {
	return string(rune('0' + i))
}
