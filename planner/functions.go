package planner

import "github.com/streamsql/streamsql/parser"

// functionRows is the function table: one row per built-in scalar function or operator,
// grouped as Flink's reference groups them. Examples are the reference's where it gives
// some; a test in exec/expr evaluates every one.
func functionRows() []Function {
	boolean := returns(TypeBoolean)
	isPred := func(fn Func, examples ...Example) Function {
		return Function{Fn: fn, Args: []Arg{ArgAny}, Result: returns(Type{Kind: Boolean, NotNull: true}), Nulls: NullAware, Examples: examples}
	}
	cmp := func(fn Func, examples ...Example) Function {
		return Function{Fn: fn, Args: []Arg{ArgCommon, ArgCommon}, Result: boolean, Examples: examples}
	}
	arith := func(fn Func, examples ...Example) Function {
		return Function{Fn: fn, Args: []Arg{ArgAny, ArgAny}, Result: sameAs(0), Examples: examples}
	}
	return []Function{
		// Comparison.
		cmp(FnEq, Example{"1 = 1", "true"}, Example{"1 = CAST(NULL AS INT)", "null"}, Example{"'a' = 'a'", "true"}),
		cmp(FnNe, Example{"1 <> 2", "true"}, Example{"2.5 <> 2.50", "false"}),
		cmp(FnLt, Example{"1 < 2", "true"}, Example{"DATE '2024-01-02' < DATE '2024-01-01'", "false"}),
		cmp(FnLe, Example{"2 <= 2", "true"}),
		cmp(FnGt, Example{"'b' > 'a'", "true"}),
		cmp(FnGe, Example{"1.5 >= 2", "false"}),
		isPred(FnIsNull, Example{"CAST(NULL AS INT) IS NULL", "true"}, Example{"1 IS NULL", "false"}),
		isPred(FnIsNotNull, Example{"1 IS NOT NULL", "true"}),
		{Fn: FnIn, Args: []Arg{ArgCommon}, Min: 2, Variadic: true, Result: boolean, Nulls: NullAware,
			Examples: []Example{{"4 IN (1, 2, 3)", "false"}, {"1 IN (1, 2, NULL)", "true"}, {"4 IN (1, 2, NULL)", "null"}, {"4 NOT IN (1, 2, 3)", "true"}}},
		{Fn: FnLike, Args: []Arg{ArgString, ArgString, ArgString}, Min: 2, Result: boolean,
			Examples: []Example{{"'abc' LIKE 'a%'", "true"}, {"'abc' LIKE '_b_'", "true"}, {"'a%c' LIKE 'a\\%c' ESCAPE '\\'", "true"}, {"'abc' NOT LIKE 'b%'", "true"}}},

		// Logic, with three-valued semantics.
		{Fn: FnAnd, Args: []Arg{ArgBoolean}, Min: 1, Variadic: true, Result: boolean, Nulls: NullAware,
			Examples: []Example{{"TRUE AND CAST(NULL AS BOOLEAN)", "null"}, {"FALSE AND CAST(NULL AS BOOLEAN)", "false"}}},
		{Fn: FnOr, Args: []Arg{ArgBoolean}, Min: 1, Variadic: true, Result: boolean, Nulls: NullAware,
			Examples: []Example{{"TRUE OR CAST(NULL AS BOOLEAN)", "true"}, {"FALSE OR CAST(NULL AS BOOLEAN)", "null"}}},
		{Fn: FnNot, Args: []Arg{ArgBoolean}, Result: boolean, Examples: []Example{{"NOT TRUE", "false"}, {"NOT CAST(NULL AS BOOLEAN)", "null"}}},
		isPred(FnIsTrue, Example{"CAST(NULL AS BOOLEAN) IS TRUE", "false"}, Example{"TRUE IS TRUE", "true"}),
		isPred(FnIsNotTrue, Example{"CAST(NULL AS BOOLEAN) IS NOT TRUE", "true"}),
		isPred(FnIsFalse, Example{"FALSE IS FALSE", "true"}),
		isPred(FnIsNotFalse, Example{"CAST(NULL AS BOOLEAN) IS NOT FALSE", "true"}),

		// Arithmetic.
		arith(FnAdd, Example{"1 + 2", "3"}, Example{"1.5 + 1", "2.5"}, Example{"TIMESTAMP '2024-01-31 10:00:00' + INTERVAL '1' DAY", "2024-02-01 10:00:00.000"}),
		arith(FnSub, Example{"1 - 2.5", "-1.5"}, Example{"DATE '2024-03-01' - INTERVAL '1' DAY", "2024-02-29"}),
		arith(FnMul, Example{"3 * 4", "12"}, Example{"1.5 * 1.5", "2.25"}),
		arith(FnDiv, Example{"7 / 2", "3"}, Example{"7.0 / 2", "3.500000000000"}, Example{"1e0 / 0", "Infinity"}),
		{Fn: FnMod, Names: []string{"MOD"}, Args: []Arg{ArgNumeric, ArgNumeric}, Result: sameAs(0),
			Bind: func(c *CallSite) (Expr, error) {
				e := c.Call
				return c.b.binary(&parser.BinaryExpr{Pos: e.Pos, Op: "%", Left: e.Args[0], Right: e.Args[1]})
			},
			Examples: []Example{{"MOD(7, 3)", "1"}, {"MOD(-7, 3)", "-1"}, {"7 % -3", "1"}}},
		{Fn: FnNeg, Args: []Arg{ArgAny}, Result: sameAs(0), Examples: []Example{{"-(1 + 2)", "-3"}}},
		{Fn: FnPower, Names: []string{"POWER", "POW"}, Args: []Arg{ArgDouble, ArgDouble}, Result: returns(TypeDouble),
			Examples: []Example{{"POWER(2, 10)", "1024.0"}, {"POWER(4, 0.5)", "2.0"}}},
		{Fn: FnAbs, Names: []string{"ABS"}, Args: []Arg{ArgNumeric}, Result: sameAs(0),
			Examples: []Example{{"ABS(-2)", "2"}, {"ABS(-1.25)", "1.25"}}},
		{Fn: FnSqrt, Names: []string{"SQRT"}, Args: []Arg{ArgDouble}, Result: returns(TypeDouble),
			Examples: []Example{{"SQRT(16)", "4.0"}, {"SQRT(-1)", "NaN"}}},
		{Fn: FnCeil, Names: []string{"CEIL", "CEILING"}, Args: []Arg{ArgNumeric}, Result: integralOf,
			Examples: []Example{{"CEIL(1.2)", "2"}, {"CEILING(-1.5e0)", "-1.0"}, {"CEIL(7)", "7"}}},
		{Fn: FnFloor, Names: []string{"FLOOR"}, Args: []Arg{ArgNumeric}, Result: integralOf,
			Examples: []Example{{"FLOOR(1.8)", "1"}, {"FLOOR(-1.5e0)", "-2.0"}}},
		{Fn: FnRound, Names: []string{"ROUND"}, Args: []Arg{ArgNumeric, ArgInt}, Min: 1, Result: roundType,
			Bind: func(c *CallSite) (Expr, error) {
				if len(c.Args) == 2 && c.Args[0].Type().Kind == Decimal {
					if _, ok := c.constInt(1); !ok {
						return nil, c.Errorf(1, "ROUND of a DECIMAL needs a constant number of digits")
					}
				}
				return c.Default(), nil
			},
			Examples: []Example{{"ROUND(1.2345, 2)", "1.23"}, {"ROUND(2.5)", "3"}, {"ROUND(125, -1)", "130"}, {"ROUND(1.005e0, 2)", "1.01"}}},

		// Strings.
		{Fn: FnConcat, Names: []string{"CONCAT"}, Args: []Arg{ArgAny}, Min: 1, Variadic: true, Result: returns(TypeString),
			Bind:     func(c *CallSite) (Expr, error) { return concat(c.at, c.Args) },
			Examples: []Example{{"CONCAT('AA', 'BB', 'CC')", "AABBCC"}, {"CONCAT('a', CAST(NULL AS STRING))", "null"}, {"'a' || 'b'", "ab"}}},
		{Fn: FnCharLength, Names: []string{"CHAR_LENGTH", "CHARACTER_LENGTH"}, Args: []Arg{ArgString}, Result: returns(TypeInt),
			Examples: []Example{{"CHAR_LENGTH('héllo')", "5"}, {"CHARACTER_LENGTH('')", "0"}}},
		{Fn: FnUpper, Names: []string{"UPPER"}, Args: []Arg{ArgString}, Result: returns(TypeString),
			Examples: []Example{{"UPPER('Hello straße')", "HELLO STRASSE"}}},
		{Fn: FnLower, Names: []string{"LOWER"}, Args: []Arg{ArgString}, Result: returns(TypeString),
			Examples: []Example{{"LOWER('HeLLo')", "hello"}}},
		{Fn: FnPosition, Names: []string{"POSITION", "LOCATE"}, Args: []Arg{ArgString, ArgString}, Result: returns(TypeInt),
			Examples: []Example{{"POSITION('lo' IN 'hello')", "4"}, {"POSITION('x' IN 'hello')", "0"}, {"LOCATE('l', 'hello')", "3"}}},
		{Fn: FnTrim, Names: []string{"TRIM"}, Args: []Arg{ArgString, ArgString}, Min: 1, Result: returns(TypeString),
			Examples: []Example{{"TRIM('  hi  ')", "hi"}, {"TRIM(BOTH 'x' FROM 'xxhixx')", "hi"}}},
		{Fn: FnLTrim, Names: []string{"LTRIM"}, Args: []Arg{ArgString, ArgString}, Min: 1, Result: returns(TypeString),
			Examples: []Example{{"LTRIM(' This is a test String.')", "This is a test String."}, {"TRIM(LEADING 'x' FROM 'xxhixx')", "hixx"}}},
		{Fn: FnRTrim, Names: []string{"RTRIM"}, Args: []Arg{ArgString, ArgString}, Min: 1, Result: returns(TypeString),
			Examples: []Example{{"RTRIM('This is a test String. ')", "This is a test String."}}},
		{Fn: FnSubstring, Names: []string{"SUBSTRING", "SUBSTR"}, Args: []Arg{ArgString, ArgInt, ArgInt}, Min: 2,
			Result: returns(TypeString), Nulls: NullStrictNullable,
			Examples: []Example{{"SUBSTRING('Hello World' FROM 7)", "World"}, {"SUBSTRING('Hello', 2, 3)", "ell"}, {"SUBSTR('Hello', -3)", "llo"}, {"SUBSTRING('Hello', 1, -1)", "null"}}},
		{Fn: FnReplace, Names: []string{"REPLACE"}, Args: []Arg{ArgString, ArgString, ArgString}, Result: returns(TypeString),
			Examples: []Example{{"REPLACE('hello world', 'world', 'flink')", "hello flink"}, {"REPLACE('ababab', 'abab', 'z')", "zab"}}},

		// Temporal.
		{Fn: FnExtract, Args: []Arg{ArgString, ArgTemporal}, Result: returns(TypeBigInt),
			Examples: []Example{{"EXTRACT(DAY FROM DATE '2006-06-05')", "5"}, {"EXTRACT(HOUR FROM TIMESTAMP '2024-05-06 07:08:09')", "7"}}},
		{Fn: FnCurrentTS, Names: []string{"CURRENT_TIMESTAMP", "NOW", "LOCALTIMESTAMP"}, Niladic: true,
			Result: returns(Type{Kind: TimestampLTZ, Precision: 3, NotNull: true}), Nulls: NullAware,
			Bind: func(c *CallSite) (Expr, error) {
				if c.Call != nil && c.Call.Name == "LOCALTIMESTAMP" {
					return castTo(c.Default(), TypeTS), nil
				}
				return c.Default(), nil
			},
			// The test's clock reads 2024-05-06 07:08:09 UTC.
			Examples: []Example{{"CURRENT_TIMESTAMP", "2024-05-06 07:08:09.000"}, {"LOCALTIMESTAMP", "2024-05-06 07:08:09.000"}}},
		{Fn: FnDateFormat, Names: []string{"DATE_FORMAT"}, Args: []Arg{ArgTimestamp, ArgString}, Result: returns(TypeString),
			Examples: []Example{{"DATE_FORMAT(TIMESTAMP '2024-05-06 07:08:09', 'yyyy/MM/dd HH:mm')", "2024/05/06 07:08"}, {"DATE_FORMAT('2024-05-06 07:08:09', 'HH')", "07"}}},
		{Fn: FnToTimestamp, Names: []string{"TO_TIMESTAMP"}, Args: []Arg{ArgString, ArgString}, Min: 1, Result: returns(TypeTS), Nulls: NullStrictNullable,
			Examples: []Example{{"TO_TIMESTAMP('2024-05-06 07:08:09')", "2024-05-06 07:08:09.000"}, {"TO_TIMESTAMP('06/05/2024', 'dd/MM/yyyy')", "2024-05-06 00:00:00.000"}, {"TO_TIMESTAMP('nonsense')", "null"}}},
		{Fn: FnToTimestampLTZ, Names: []string{"TO_TIMESTAMP_LTZ"}, Args: []Arg{ArgBigInt, ArgInt}, Result: returns(TypeTSLTZ),
			Bind: func(c *CallSite) (Expr, error) {
				if p, ok := c.constInt(1); !ok || (p != 0 && p != 3) {
					return nil, c.Errorf(1, "TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 (milliseconds)")
				}
				return c.Default(), nil
			},
			Examples: []Example{{"TO_TIMESTAMP_LTZ(1715000000, 0)", "2024-05-06 12:53:20.000"}, {"TO_TIMESTAMP_LTZ(1715000000123, 3)", "2024-05-06 12:53:20.123"}}},

		// Conditional.
		{Fn: FnCoalesce, Names: []string{"COALESCE"}, Args: []Arg{ArgCommon}, Min: 1, Variadic: true, Nulls: NullAware,
			Result: func(args []Expr) Type {
				t := args[0].Type().Nullable()
				for _, a := range args {
					t.NotNull = t.NotNull || a.Type().NotNull
				}
				return t
			},
			Examples: []Example{{"COALESCE(NULL, 'default')", "default"}, {"COALESCE(CAST(NULL AS INT), 2, 3)", "2"}, {"COALESCE(CAST(NULL AS INT))", "null"}}},
		{Fn: FnNullIf, Names: []string{"NULLIF"}, Args: []Arg{ArgCommon, ArgCommon}, Nulls: NullAware,
			Result:   func(args []Expr) Type { return args[0].Type().Nullable() },
			Examples: []Example{{"NULLIF(5, 5)", "null"}, {"NULLIF(5, 0)", "5"}, {"NULLIF(5, CAST(NULL AS INT))", "5"}}},
	}
}

// integralOf is FLOOR and CEIL's result: the argument's type, a DECIMAL at scale 0.
func integralOf(args []Expr) Type {
	t := args[0].Type().Nullable()
	if t.Kind == Decimal {
		t = DecimalType(min(38, t.Precision-t.Scale+1), 0)
	}
	return t
}

// roundType is ROUND's result: the argument's type; a DECIMAL at the scale of the digits
// kept (a constant), one more integer digit for the carry.
func roundType(args []Expr) Type {
	t := args[0].Type().Nullable()
	if t.Kind != Decimal {
		return t
	}
	s := 0
	if len(args) == 2 {
		if l, ok := args[1].(*Literal); ok && l.Value != nil {
			if v, ok := l.Value.(int32); ok {
				s = min(int(v), t.Scale)
			}
		}
	}
	return DecimalType(min(38, t.Precision-t.Scale+max(s, 0)+1), max(s, 0))
}
