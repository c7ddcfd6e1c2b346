package planner

import (
	"regexp"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

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
	double1 := func(fn Func, name string, examples ...Example) Function {
		return Function{Fn: fn, Names: []string{name}, Args: []Arg{ArgDouble}, Result: returns(TypeDouble), Examples: examples}
	}
	hash1 := func(fn Func, name string, examples ...Example) Function {
		return Function{Fn: fn, Names: []string{name}, Args: []Arg{ArgString}, Result: returns(TypeString), Examples: examples}
	}
	extract1 := func(fn Func, name string, examples ...Example) Function {
		return Function{Fn: fn, Names: []string{name}, Args: []Arg{ArgTemporal}, Result: returns(TypeBigInt), Examples: examples}
	}
	clock1 := func(fn Func, name string, examples ...Example) Function {
		f := extract1(fn, name, examples...)
		f.Args = []Arg{ArgClock}
		return f
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
		isPred(FnIsNull, Example{"CAST(NULL AS INT) IS NULL", "true"}, Example{"1 IS NULL", "false"},
			Example{"CAST(NULL AS BOOLEAN) IS UNKNOWN", "true"}, Example{"FALSE IS UNKNOWN", "false"}),
		isPred(FnIsNotNull, Example{"1 IS NOT NULL", "true"}, Example{"TRUE IS NOT UNKNOWN", "true"}),
		{Fn: FnIsDistinct, Args: []Arg{ArgCommon, ArgCommon}, Result: returns(Type{Kind: Boolean, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"1 IS DISTINCT FROM NULL", "true"}, {"NULL IS DISTINCT FROM NULL", "false"}, {"1 IS DISTINCT FROM 1", "false"}, {"'a' IS DISTINCT FROM 'b'", "true"}}},
		{Fn: FnIsNotDistinct, Args: []Arg{ArgCommon, ArgCommon}, Result: returns(Type{Kind: Boolean, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"1 IS NOT DISTINCT FROM NULL", "false"}, {"NULL IS NOT DISTINCT FROM NULL", "true"}, {"2.5 IS NOT DISTINCT FROM 2.50", "true"}}},
		{Fn: FnIn, Args: []Arg{ArgCommon}, Min: 2, Variadic: true, Result: boolean, Nulls: NullAware,
			Examples: []Example{{"4 IN (1, 2, 3)", "false"}, {"1 IN (1, 2, NULL)", "true"}, {"4 IN (1, 2, NULL)", "null"}, {"4 NOT IN (1, 2, 3)", "true"}}},
		{Fn: FnSimilar, Args: []Arg{ArgString, ArgString, ArgString}, Min: 2, Result: boolean,
			Bind: func(c *CallSite) (Expr, error) {
				p, ok := c.constString(1)
				esc, ok2 := "", true
				if len(c.Args) == 3 {
					esc, ok2 = c.constString(2)
				}
				if ok && ok2 {
					re, err := SimilarToRegex(p, esc)
					if err == nil {
						_, err = regexp.Compile(re)
					}
					if err != nil {
						return nil, c.Errorf(-1, "SIMILAR TO pattern '%s' is invalid: %v", p, err)
					}
				}
				return c.Default(), nil
			},
			Examples: []Example{{"'abc' SIMILAR TO 'a%'", "true"}, {"'abc' SIMILAR TO '(a|x)b_'", "true"}, {"'abc' SIMILAR TO 'b%'", "false"},
				{"'a.c' SIMILAR TO 'a.c'", "true"}, {"'abc' SIMILAR TO 'a.c'", "false"}, {"'ab' SIMILAR TO '[a-c]+'", "true"},
				{"'a%' SIMILAR TO 'a!%' ESCAPE '!'", "true"}, {"'abc' NOT SIMILAR TO 'a{2}%'", "true"}}},
		{Fn: FnLike, Args: []Arg{ArgString, ArgString, ArgString}, Min: 2, Result: boolean,
			Examples: []Example{{"'abc' LIKE 'a%'", "true"}, {"'abc' LIKE '_b_'", "true"}, {"'a%c' LIKE 'a\\%c' ESCAPE '\\'", "true"}, {"'abc' NOT LIKE 'b%'", "true"}}},

		// Logic, with three-valued semantics.
		{Fn: FnAnd, Args: []Arg{ArgBoolean}, Min: 1, Variadic: true, Result: boolean, Nulls: NullAware,
			// BETWEEN is >= AND <=, so its examples are here.
			Examples: []Example{{"TRUE AND CAST(NULL AS BOOLEAN)", "null"}, {"FALSE AND CAST(NULL AS BOOLEAN)", "false"},
				{"12 BETWEEN 15 AND 12", "false"}, {"12 BETWEEN 10 AND NULL", "null"}, {"12 BETWEEN NULL AND 10", "false"},
				{"12 NOT BETWEEN 15 AND 12", "true"}, {"12 NOT BETWEEN NULL AND 15", "null"}, {"12 NOT BETWEEN 15 AND NULL", "true"},
				// OVERLAPS is an AND of two comparisons of the periods' ends.
				{"(TIME '2:55:00', INTERVAL '1' HOUR) OVERLAPS (TIME '3:30:00', INTERVAL '2' HOUR)", "true"},
				{"(TIME '9:00:00', TIME '10:00:00') OVERLAPS (TIME '10:15:00', INTERVAL '3' HOUR)", "false"},
				{"(DATE '2024-01-10', DATE '2024-01-01') OVERLAPS (DATE '2024-01-05', INTERVAL '1' DAY)", "true"},
				{"(TIMESTAMP '2024-01-01 00:00:00', INTERVAL '1' HOUR) OVERLAPS (TIMESTAMP '2024-01-01 01:00:00', INTERVAL '1' HOUR)", "true"}}},
		{Fn: FnOr, Args: []Arg{ArgBoolean}, Min: 1, Variadic: true, Result: boolean, Nulls: NullAware,
			// BETWEEN SYMMETRIC is the OR of BETWEEN both ways, and a simple CASE's WHEN a, b
			// the OR of equalities.
			Examples: []Example{{"TRUE OR CAST(NULL AS BOOLEAN)", "true"}, {"FALSE OR CAST(NULL AS BOOLEAN)", "null"},
				{"12 BETWEEN SYMMETRIC 15 AND 12", "true"}, {"12 BETWEEN SYMMETRIC NULL AND 12", "null"},
				{"12 NOT BETWEEN SYMMETRIC 15 AND 12", "false"}, {"12 NOT BETWEEN SYMMETRIC 12 AND NULL", "null"},
				{"CASE 2 WHEN 1, 2 THEN 'low' WHEN 3 THEN 'high' END", "low"}, {"CASE 5 WHEN 1, 2 THEN 'low' ELSE 'other' END", "other"}}},
		{Fn: FnNot, Args: []Arg{ArgBoolean}, Result: boolean, Examples: []Example{{"NOT TRUE", "false"}, {"NOT CAST(NULL AS BOOLEAN)", "null"}}},
		isPred(FnIsTrue, Example{"CAST(NULL AS BOOLEAN) IS TRUE", "false"}, Example{"TRUE IS TRUE", "true"}),
		isPred(FnIsNotTrue, Example{"CAST(NULL AS BOOLEAN) IS NOT TRUE", "true"}),
		isPred(FnIsFalse, Example{"FALSE IS FALSE", "true"}),
		isPred(FnIsNotFalse, Example{"CAST(NULL AS BOOLEAN) IS NOT FALSE", "true"}),

		// Arithmetic.
		arith(FnAdd, Example{"1 + 2", "3"}, Example{"1.5 + 1", "2.5"}, Example{"TIMESTAMP '2024-01-31 10:00:00' + INTERVAL '1' DAY", "2024-02-01 10:00:00"}),
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
		{Fn: FnSign, Names: []string{"SIGN"}, Args: []Arg{ArgNumeric}, Result: sameAs(0),
			Examples: []Example{{"SIGN(-5)", "-1"}, {"SIGN(0)", "0"}, {"SIGN(2.50)", "1.00"}, {"SIGN(-0.5e0)", "-1.0"}}},
		{Fn: FnTruncate, Names: []string{"TRUNCATE"}, Args: []Arg{ArgNumeric, ArgInt}, Min: 1, Result: roundType,
			Bind: func(c *CallSite) (Expr, error) {
				if len(c.Args) == 2 && c.Args[0].Type().Kind == Decimal {
					if _, ok := c.constInt(1); !ok {
						return nil, c.Errorf(1, "TRUNCATE of a DECIMAL needs a constant number of digits")
					}
				}
				return c.Default(), nil
			},
			Examples: []Example{{"TRUNCATE(42.324, 2)", "42.32"}, {"TRUNCATE(42.324)", "42"}, {"TRUNCATE(-42.329e0, 2)", "-42.32"}, {"TRUNCATE(0.29e0, 2)", "0.29"}, {"TRUNCATE(1234, -2)", "1200"}}},
		double1(FnLn, "LN", Example{"LN(1)", "0.0"}, Example{"LN(0)", "-Infinity"}, Example{"LN(-1)", "NaN"}),
		{Fn: FnLog, Names: []string{"LOG"}, Args: []Arg{ArgDouble, ArgDouble}, Min: 1, Result: returns(TypeDouble),
			Examples: []Example{{"LOG(1)", "0.0"}, {"LOG(2, 8)", "3.0"}, {"LOG(10, 1000)", "2.9999999999999996"}}},
		double1(FnLog10, "LOG10", Example{"LOG10(1000)", "3.0"}),
		double1(FnLog2, "LOG2", Example{"LOG2(8)", "3.0"}),
		double1(FnExp, "EXP", Example{"EXP(0)", "1.0"}, Example{"EXP(1)", "2.718281828459045"}),
		double1(FnSin, "SIN", Example{"SIN(0)", "0.0"}),
		double1(FnCos, "COS", Example{"COS(0)", "1.0"}),
		double1(FnTan, "TAN", Example{"TAN(0)", "0.0"}),
		// Go's libm may differ from Java's in the last digit (COT(1) is ...308, not ...306).
		double1(FnCot, "COT", Example{"ROUND(COT(1), 12)", "0.642092615934"}),
		double1(FnAsin, "ASIN", Example{"ASIN(1)", "1.5707963267948966"}, Example{"ASIN(2)", "NaN"}),
		double1(FnAcos, "ACOS", Example{"ACOS(1)", "0.0"}),
		double1(FnAtan, "ATAN", Example{"ATAN(1)", "0.7853981633974483"}),
		{Fn: FnAtan2, Names: []string{"ATAN2"}, Args: []Arg{ArgDouble, ArgDouble}, Result: returns(TypeDouble),
			Examples: []Example{{"ATAN2(1, 1)", "0.7853981633974483"}, {"ATAN2(0, -1)", "3.141592653589793"}}},
		double1(FnSinh, "SINH", Example{"SINH(0)", "0.0"}),
		double1(FnCosh, "COSH", Example{"COSH(0)", "1.0"}),
		double1(FnTanh, "TANH", Example{"TANH(0)", "0.0"}),
		double1(FnDegrees, "DEGREES", Example{"DEGREES(PI())", "180.0"}),
		double1(FnRadians, "RADIANS", Example{"RADIANS(180)", "3.141592653589793"}),
		{Fn: FnPi, Names: []string{"PI"}, Niladic: true, Result: returns(Type{Kind: Double, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"PI()", "3.141592653589793"}}},
		{Fn: FnE, Names: []string{"E"}, Niladic: true, Result: returns(Type{Kind: Double, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"E()", "2.718281828459045"}}},
		// RAND and RAND_INTEGER take a constant seed; their sequences are not Java's.
		{Fn: FnRand, Names: []string{"RAND"}, Args: []Arg{ArgInt}, Niladic: true, Result: returns(Type{Kind: Double, NotNull: true}), Nulls: NullAware,
			Bind: func(c *CallSite) (Expr, error) {
				if len(c.Args) == 1 {
					if _, ok := c.constInt(0); !ok {
						return nil, c.Errorf(0, "RAND needs a constant seed")
					}
				}
				return c.Default(), nil
			},
			Examples: []Example{{"RAND() >= 0 AND RAND() < 1", "true"}, {"RAND(42) = RAND(42)", "true"}}},
		{Fn: FnRandInteger, Names: []string{"RAND_INTEGER"}, Args: []Arg{ArgInt, ArgInt}, Min: 1, Nulls: NullAware,
			Result: func(args []Expr) Type { return Type{Kind: Int, NotNull: args[len(args)-1].Type().NotNull} },
			Bind: func(c *CallSite) (Expr, error) {
				if len(c.Args) == 2 {
					if _, ok := c.constInt(0); !ok {
						return nil, c.Errorf(0, "RAND_INTEGER needs a constant seed")
					}
				}
				return c.Default(), nil
			},
			Examples: []Example{{"RAND_INTEGER(10) BETWEEN 0 AND 9", "true"}, {"RAND_INTEGER(7, 1)", "0"}, {"RAND_INTEGER(CAST(NULL AS INT))", "null"}}},
		{Fn: FnUUID, Names: []string{"UUID"}, Niladic: true, Result: returns(Type{Kind: String, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"CHAR_LENGTH(UUID())", "36"}, {"SUBSTRING(UUID(), 15, 1)", "4"}, {"UUID() = UUID()", "false"}}},
		{Fn: FnUnhex, Names: []string{"UNHEX"}, Args: []Arg{ArgString}, Result: returns(Type{Kind: Binary}), Nulls: NullStrictNullable,
			Examples: []Example{{"UNHEX('68656C6C6F')", "x'68656c6c6f'"}, {"CAST(UNHEX('666C696E6B') AS STRING)", "flink"}, {"UNHEX('F')", "x'0f'"}, {"UNHEX('zz')", "null"}}},
		{Fn: FnBin, Names: []string{"BIN"}, Args: []Arg{ArgBigInt}, Result: returns(TypeString),
			Examples: []Example{{"BIN(4)", "100"}, {"BIN(12)", "1100"}, {"BIN(-1)", "1111111111111111111111111111111111111111111111111111111111111111"}}},
		{Fn: FnHex, Names: []string{"HEX"}, Args: []Arg{ArgAny}, Result: returns(TypeString),
			Bind: func(c *CallSite) (Expr, error) {
				switch t := c.Args[0].Type(); {
				case t.IsNumeric():
					c.Args[0] = castTo(c.Args[0], TypeBigInt)
				case t.Kind == Null:
					c.Args[0] = castTo(c.Args[0], TypeString)
				case t.Kind != String:
					return nil, c.Errorf(0, "HEX argument 1 must be a number or a STRING, got %s", t.Nullable())
				}
				return c.Default(), nil
			},
			Examples: []Example{{"HEX(20)", "14"}, {"HEX(100)", "64"}, {"HEX('hello,world')", "68656C6C6F2C776F726C64"}, {"HEX(-1)", "FFFFFFFFFFFFFFFF"}}},
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
		{Fn: FnPosition, Names: []string{"POSITION"}, Args: []Arg{ArgString, ArgString}, Result: returns(TypeInt),
			Examples: []Example{{"POSITION('lo' IN 'hello')", "4"}, {"POSITION('x' IN 'hello')", "0"}}},
		{Fn: FnLocate, Names: []string{"LOCATE"}, Args: []Arg{ArgString, ArgString, ArgInt}, Min: 2, Result: returns(TypeInt),
			Examples: []Example{{"LOCATE('l', 'hello')", "3"}, {"LOCATE('l', 'hello', 4)", "4"}, {"LOCATE('l', 'hello', 5)", "0"}, {"LOCATE('ö', 'öaö', 2)", "3"}, {"LOCATE('a', 'abc', 0)", "0"}}},
		{Fn: FnTrim, Names: []string{"TRIM"}, Args: []Arg{ArgString, ArgString}, Min: 1, Result: returns(TypeString),
			Examples: []Example{{"TRIM('  hi  ')", "hi"}, {"TRIM(BOTH 'x' FROM 'xxhixx')", "hi"}}},
		{Fn: FnLTrim, Names: []string{"LTRIM"}, Args: []Arg{ArgString, ArgString}, Min: 1, Result: returns(TypeString),
			Examples: []Example{{"LTRIM(' This is a test String.')", "This is a test String."}, {"TRIM(LEADING 'x' FROM 'xxhixx')", "hixx"}}},
		{Fn: FnRTrim, Names: []string{"RTRIM"}, Args: []Arg{ArgString, ArgString}, Min: 1, Result: returns(TypeString),
			Examples: []Example{{"RTRIM('This is a test String. ')", "This is a test String."}}},
		{Fn: FnSubstring, Names: []string{"SUBSTRING", "SUBSTR"}, Args: []Arg{ArgString, ArgInt, ArgInt}, Min: 2,
			Result: returns(TypeString), Nulls: NullStrictNullable,
			Examples: []Example{{"SUBSTRING('Hello World' FROM 7)", "World"}, {"SUBSTRING('Hello', 2, 3)", "ell"}, {"SUBSTR('Hello', -3)", "llo"}, {"SUBSTRING('Hello', 1, -1)", "null"}}},
		{Fn: FnOverlay, Names: []string{"OVERLAY"}, Args: []Arg{ArgString, ArgString, ArgInt, ArgInt}, Min: 3, Result: returns(TypeString),
			Examples: []Example{{"OVERLAY('xxxxxtest' PLACING 'xxxx' FROM 6)", "xxxxxxxxx"}, {"OVERLAY('xxxxxtest' PLACING 'xxxx' FROM 6 FOR 2)", "xxxxxxxxxst"},
				{"OVERLAY('abc' PLACING 'Z' FROM 9)", "abcZ"}, {"OVERLAY('héllo' PLACING 'E' FROM 2 FOR 1)", "hEllo"}}},
		{Fn: FnReplace, Names: []string{"REPLACE"}, Args: []Arg{ArgString, ArgString, ArgString}, Result: returns(TypeString),
			Examples: []Example{{"REPLACE('hello world', 'world', 'flink')", "hello flink"}, {"REPLACE('ababab', 'abab', 'z')", "zab"}}},

		{Fn: FnRegexpExtract, Names: []string{"REGEXP_EXTRACT"}, Args: []Arg{ArgString, ArgString, ArgInt}, Min: 2,
			Result: returns(TypeString), Nulls: NullStrictNullable, Bind: checkRegex,
			Examples: []Example{{"REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 2)", "bar"}, {"REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)')", "the"},
				{"REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 0)", "foothebar"}, {"REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 3)", "null"}, {"REGEXP_EXTRACT('abc', 'x(y)')", "null"}}},
		{Fn: FnRegexpReplace, Names: []string{"REGEXP_REPLACE"}, Args: []Arg{ArgString, ArgString, ArgString},
			Result: returns(TypeString), Nulls: NullStrictNullable, Bind: checkRegex,
			Examples: []Example{{"REGEXP_REPLACE('foobar', 'oo|ar', '')", "fb"}, {"REGEXP_REPLACE('2024-05-06', '(\\d+)-(\\d+)-(\\d+)', '$3/$2/$1')", "06/05/2024"},
				{"REGEXP_REPLACE('a1b22', '[0-9]+', '\\$')", "a$b$"}, {"REGEXP_REPLACE('ab', 'a', '$1')", "null"},
				{"REGEXP_REPLACE('abc', '(?<x>b)', '[${x}]')", "a[b]c"}, {"REGEXP_REPLACE('abc', '(b)', '${x}')", "null"}}},
		{Fn: FnRegexp, Names: []string{"REGEXP"}, Args: []Arg{ArgString, ArgString}, Result: returns(TypeBoolean), Bind: checkRegex,
			Examples: []Example{{"REGEXP('flink sql', 's.l')", "true"}, {"REGEXP('flink', '^[a-z]+$')", "true"}, {"REGEXP('flink', 'x')", "false"}, {"REGEXP('flink', '')", "false"}}},
		{Fn: FnRegexpCount, Names: []string{"REGEXP_COUNT"}, Args: []Arg{ArgString, ArgString}, Result: returns(TypeInt), Nulls: NullStrictNullable, Bind: checkRegex,
			Examples: []Example{{"REGEXP_COUNT('ababab', 'ab')", "3"}, {"REGEXP_COUNT('abc', 'x')", "0"}}},
		{Fn: FnRegexpInstr, Names: []string{"REGEXP_INSTR"}, Args: []Arg{ArgString, ArgString}, Result: returns(TypeInt), Nulls: NullStrictNullable, Bind: checkRegex,
			Examples: []Example{{"REGEXP_INSTR('hello world', 'o w')", "5"}, {"REGEXP_INSTR('héllo', 'l+')", "3"}, {"REGEXP_INSTR('abc', 'x')", "0"}}},
		{Fn: FnRegexpSubstr, Names: []string{"REGEXP_SUBSTR"}, Args: []Arg{ArgString, ArgString}, Result: returns(TypeString), Nulls: NullStrictNullable, Bind: checkRegex,
			Examples: []Example{{"REGEXP_SUBSTR('abc123def', '[0-9]+')", "123"}, {"REGEXP_SUBSTR('abc', '[0-9]+')", "null"}}},
		{Fn: FnSplitIndex, Names: []string{"SPLIT_INDEX"}, Args: []Arg{ArgString, ArgString, ArgInt},
			Result: returns(TypeString), Nulls: NullStrictNullable,
			Examples: []Example{{"SPLIT_INDEX('a,b,c', ',', 1)", "b"}, {"SPLIT_INDEX('a::b', '::', 0)", "a"}, {"SPLIT_INDEX('a,b', ',', 2)", "null"}, {"SPLIT_INDEX('a,b', ',', -1)", "null"}, {"SPLIT_INDEX('a,,b', ',', 1)", ""}}},
		{Fn: FnLPad, Names: []string{"LPAD"}, Args: []Arg{ArgString, ArgInt, ArgString}, Result: returns(TypeString), Nulls: NullStrictNullable,
			Examples: []Example{{"LPAD('hi', 4, '??')", "??hi"}, {"LPAD('hi', 1, '??')", "h"}, {"LPAD('hi', 5, 'ab')", "abahi"}, {"LPAD('hi', -1, '?')", "null"}, {"LPAD('hi', 4, '')", "null"}}},
		{Fn: FnRPad, Names: []string{"RPAD"}, Args: []Arg{ArgString, ArgInt, ArgString}, Result: returns(TypeString), Nulls: NullStrictNullable,
			Examples: []Example{{"RPAD('hi', 4, '??')", "hi??"}, {"RPAD('hi', 1, '??')", "h"}, {"RPAD('日本', 3, 'x')", "日本x"}}},
		{Fn: FnRepeat, Names: []string{"REPEAT"}, Args: []Arg{ArgString, ArgInt}, Result: returns(TypeString),
			Examples: []Example{{"REPEAT('This is a test String.', 2)", "This is a test String.This is a test String."}, {"REPEAT('x', 0)", ""}, {"REPEAT('ab', 3)", "ababab"}}},
		{Fn: FnReverse, Names: []string{"REVERSE"}, Args: []Arg{ArgString}, Result: returns(TypeString),
			Examples: []Example{{"REVERSE('flink')", "knilf"}, {"REVERSE('añb')", "bña"}}},
		{Fn: FnInitCap, Names: []string{"INITCAP"}, Args: []Arg{ArgString}, Result: returns(TypeString),
			Examples: []Example{{"INITCAP('hello wORLD-foo bar2baz')", "Hello World-Foo Bar2baz"}}},
		{Fn: FnTranslate, Names: []string{"TRANSLATE"}, Args: []Arg{ArgString, ArgString, ArgString}, Result: returns(TypeString),
			Examples: []Example{{"TRANSLATE('www.apache.org', 'wapcheorg', ' APCHEcom')", "   .APACHE.com"}, {"TRANSLATE('abc', 'ab', 'x')", "xc"}}},
		{Fn: FnConcatWS, Names: []string{"CONCAT_WS"}, Args: []Arg{ArgString}, Min: 1, Variadic: true, Nulls: NullAware,
			Result:   func(args []Expr) Type { return Type{Kind: String, NotNull: args[0].Type().NotNull} },
			Examples: []Example{{"CONCAT_WS('~', 'AA', CAST(NULL AS STRING), 'BB', '', 'CC')", "AA~BB~~CC"}, {"CONCAT_WS(CAST(NULL AS STRING), 'a')", "null"}, {"CONCAT_WS('-')", ""}}},
		{Fn: FnLeft, Names: []string{"LEFT"}, Args: []Arg{ArgString, ArgInt}, Result: returns(TypeString),
			Examples: []Example{{"LEFT('Hello', 2)", "He"}, {"LEFT('Hello', -1)", ""}, {"LEFT('Hé', 9)", "Hé"}}},
		{Fn: FnRight, Names: []string{"RIGHT"}, Args: []Arg{ArgString, ArgInt}, Result: returns(TypeString),
			Examples: []Example{{"RIGHT('Hello', 3)", "llo"}, {"RIGHT('Hello', -1)", ""}}},
		{Fn: FnInstr, Names: []string{"INSTR"}, Args: []Arg{ArgString, ArgString}, Result: returns(TypeInt),
			Examples: []Example{{"INSTR('hello', 'll')", "3"}, {"INSTR('hello', 'x')", "0"}}},
		{Fn: FnASCII, Names: []string{"ASCII"}, Args: []Arg{ArgString}, Result: returns(TypeInt),
			Examples: []Example{{"ASCII('abc')", "97"}, {"ASCII('')", "0"}, {"ASCII(CAST(NULL AS VARCHAR))", "null"}}},
		{Fn: FnChr, Names: []string{"CHR"}, Args: []Arg{ArgBigInt}, Result: returns(TypeString),
			Examples: []Example{{"CHR(97)", "a"}, {"CHR(353)", "a"}, {"CHR(-1)", ""}}},
		{Fn: FnToBase64, Names: []string{"TO_BASE64"}, Args: []Arg{ArgString}, Result: returns(TypeString),
			Examples: []Example{{"TO_BASE64('hello world')", "aGVsbG8gd29ybGQ="}}},
		{Fn: FnFromBase64, Names: []string{"FROM_BASE64"}, Args: []Arg{ArgString}, Result: returns(TypeString), Nulls: NullStrictNullable,
			Examples: []Example{{"FROM_BASE64('aGVsbG8gd29ybGQ=')", "hello world"}, {"FROM_BASE64('not base64!')", "null"}}},
		{Fn: FnIsAlpha, Names: []string{"IS_ALPHA"}, Args: []Arg{ArgString}, Result: returns(Type{Kind: Boolean, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"IS_ALPHA('abcÄ')", "true"}, {"IS_ALPHA('ab1')", "false"}, {"IS_ALPHA('')", "false"}, {"IS_ALPHA(CAST(NULL AS STRING))", "false"}}},
		{Fn: FnIsDigit, Names: []string{"IS_DIGIT"}, Args: []Arg{ArgString}, Result: returns(Type{Kind: Boolean, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"IS_DIGIT('0123')", "true"}, {"IS_DIGIT('1.5')", "false"}, {"IS_DIGIT(CAST(NULL AS STRING))", "false"}}},
		{Fn: FnIsDecimal, Names: []string{"IS_DECIMAL"}, Args: []Arg{ArgString}, Result: returns(Type{Kind: Boolean, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"IS_DECIMAL('-1.5e3')", "true"}, {"IS_DECIMAL('.5')", "true"}, {"IS_DECIMAL('1.')", "true"}, {"IS_DECIMAL('1e')", "false"}, {"IS_DECIMAL('abc')", "false"}, {"IS_DECIMAL(CAST(NULL AS STRING))", "false"}}},
		{Fn: FnElt, Names: []string{"ELT"}, Args: []Arg{ArgInt, ArgString}, Min: 2, Variadic: true, Result: returns(TypeString), Nulls: NullAware,
			Examples: []Example{{"ELT(2, 'scala', 'java')", "java"}, {"ELT(3, 'a', 'b')", "null"}, {"ELT(CAST(NULL AS INT), 'a')", "null"}, {"ELT(1, CAST(NULL AS STRING), 'b')", "null"}}},
		{Fn: FnURLEncode, Names: []string{"URL_ENCODE"}, Args: []Arg{ArgString}, Result: returns(TypeString),
			Examples: []Example{{"URL_ENCODE('http://a.b/c?d=e f&g=ü')", "http%3A%2F%2Fa.b%2Fc%3Fd%3De+f%26g%3D%C3%BC"}}},
		{Fn: FnURLDecode, Names: []string{"URL_DECODE"}, Args: []Arg{ArgString}, Result: returns(TypeString), Nulls: NullStrictNullable,
			Examples: []Example{{"URL_DECODE('a%3Db+c%C3%BC')", "a=b cü"}, {"URL_DECODE('%zz')", "null"}}},
		{Fn: FnParseURL, Names: []string{"PARSE_URL"}, Args: []Arg{ArgString, ArgString, ArgString}, Min: 2, Result: returns(TypeString), Nulls: NullStrictNullable,
			Examples: []Example{{"PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'HOST')", "facebook.com"},
				{"PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY', 'k1')", "v1"},
				{"PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'PATH')", "/path1/p.php"},
				{"PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'REF')", "Ref1"},
				{"PARSE_URL('http://user:pw@facebook.com:8080/p?q=1', 'AUTHORITY')", "user:pw@facebook.com:8080"},
				{"PARSE_URL('http://facebook.com/p?q=1', 'FILE')", "/p?q=1"}, {"PARSE_URL('https://x.org', 'PROTOCOL')", "https"},
				{"PARSE_URL('http://x.org', 'QUERY')", "null"}, {"PARSE_URL('not a url', 'HOST')", "null"}}},
		{Fn: FnJSONValue, Names: []string{"JSON_VALUE"}, Args: []Arg{ArgString, ArgString, ArgString, ArgString, ArgString, ArgString, ArgString}, Min: 2,
			Result: returns(TypeString), Nulls: NullAware, Bind: jsonValueClauses,
			Examples: []Example{{`JSON_VALUE('{"a": true}', '$.a' RETURNING BOOLEAN)`, "true"}, {`JSON_VALUE('{"a": true}', 'lax $.b' DEFAULT FALSE ON EMPTY)`, "false"},
				{`JSON_VALUE('{"a": true}', 'strict $.b' DEFAULT FALSE ON ERROR)`, "false"}, {`JSON_VALUE('{"a.b": [0.998,0.996]}','$.["a.b"][0]' RETURNING DOUBLE)`, "0.998"},
				{`JSON_VALUE('{"contains blank": "right"}', 'strict $.[''contains blank'']' NULL ON EMPTY DEFAULT 'wrong' ON ERROR)`, "right"},
				{`JSON_VALUE('{"n": "x"}', '$.n' RETURNING INT DEFAULT -1 ON ERROR)`, "-1"}, {`JSON_VALUE('{"n": 42}', '$.n' RETURNING BIGINT)`, "42"},
				{`JSON_VALUE('{"n": [1]}', 'strict $.n' DEFAULT 'arr' ON ERROR)`, "arr"}, {`JSON_VALUE('{"n": null}', '$.n' DEFAULT 'none' ON EMPTY)`, "none"},
				{`JSON_VALUE(CAST(NULL AS STRING), '$' DEFAULT 'x' ON EMPTY)`, "null"}, {`JSON_VALUE('{"a": true}', '$.a')`, "true"}, {`JSON_VALUE('{"a": {"b": [10, "x"]}}', 'lax $.a.b[1]')`, "x"},
				{`JSON_VALUE('{"a.b": [0.998, 0.996]}', '$.["a.b"][0]')`, "0.998"}, {`JSON_VALUE('{"a b": "right"}', 'strict $.[''a b'']')`, "right"},
				{`JSON_VALUE('{"a": 1.50, "n": 7}', '$.a')`, "1.5"}, {`JSON_VALUE('{"a": [1]}', '$.a')`, "null"}, {`JSON_VALUE('{"a": 1}', '$.b')`, "null"}, {`JSON_VALUE('not json', '$')`, "null"}}},
		{Fn: FnJSONQuery, Names: []string{"JSON_QUERY"}, Args: []Arg{ArgString, ArgString, ArgString, ArgString, ArgString}, Min: 2, Result: returns(TypeString), Nulls: NullStrictNullable, Bind: jsonQueryClauses,
			Examples: []Example{{`JSON_QUERY('{ "a": { "b": 1 } }', '$.a')`, `{"b":1}`}, {"JSON_QUERY('[1, 2]', '$')", "[1,2]"}, {"JSON_QUERY(CAST(NULL AS STRING), '$')", "null"},
				{`JSON_QUERY('{"a":[{"c":"c1"},{"c":"c2"}]}', 'lax $.a[*].c')`, `["c1","c2"]`}, {"JSON_QUERY('{}', '$' WITH CONDITIONAL ARRAY WRAPPER)", "[{}]"},
				{"JSON_QUERY('[1, 2]', '$' WITH CONDITIONAL ARRAY WRAPPER)", "[1,2]"}, {"JSON_QUERY('[1, 2]', '$' WITH UNCONDITIONAL ARRAY WRAPPER)", "[[1,2]]"},
				{"JSON_QUERY('1', '$')", "null"}, {"JSON_QUERY('1', '$' WITH CONDITIONAL ARRAY WRAPPER)", "[1]"},
				{"JSON_QUERY('{}', 'lax $.invalid' EMPTY OBJECT ON EMPTY)", "{}"}, {"JSON_QUERY('{}', 'strict $.invalid' EMPTY ARRAY ON ERROR)", "[]"},
				{"JSON_QUERY('not json', '$' EMPTY ARRAY ON ERROR)", "[]"}}},
		{Fn: FnJSONString, Names: []string{"JSON_STRING"}, Args: []Arg{ArgAny}, Result: returns(TypeString),
			Examples: []Example{{"JSON_STRING(1)", "1"}, {"JSON_STRING(TRUE)", "true"}, {"JSON_STRING('Hello, World!')", `"Hello, World!"`},
				{"JSON_STRING(ARRAY[1, 2])", "[1,2]"}, {"JSON_STRING(CAST(NULL AS INT))", "null"}}},
		{Fn: FnJSONObject, Names: []string{"JSON_OBJECT"}, Args: []Arg{ArgAny}, Variadic: true, Niladic: true, Nulls: NullAware,
			Result: returns(Type{Kind: String, NotNull: true}), Bind: jsonConstructor,
			Examples: []Example{{"JSON_OBJECT()", "{}"}, {"JSON_OBJECT('K1' VALUE 'V1', 'K2' VALUE 'V2')", `{"K1":"V1","K2":"V2"}`},
				{"JSON_OBJECT(KEY 'K1' VALUE CAST(NULL AS STRING) NULL ON NULL)", `{"K1":null}`}, {"JSON_OBJECT(KEY 'K1' VALUE CAST(NULL AS STRING) ABSENT ON NULL)", "{}"},
				{"JSON_OBJECT(KEY 'K1' VALUE JSON_OBJECT(KEY 'K2' VALUE 'V'))", `{"K1":{"K2":"V"}}`}, {"JSON_OBJECT('n' VALUE 1.5, 'a' VALUE ARRAY[1, 2])", `{"n":1.5,"a":[1,2]}`}}},
		{Fn: FnJSONArray, Names: []string{"JSON_ARRAY"}, Args: []Arg{ArgAny}, Variadic: true, Niladic: true, Nulls: NullAware,
			Result: returns(Type{Kind: String, NotNull: true}), Bind: jsonConstructor,
			Examples: []Example{{"JSON_ARRAY()", "[]"}, {"JSON_ARRAY(1, '2')", `[1,"2"]`}, {"JSON_ARRAY(CAST(NULL AS STRING) NULL ON NULL)", "[null]"},
				{"JSON_ARRAY(CAST(NULL AS STRING) ABSENT ON NULL)", "[]"}, {"JSON_ARRAY(CAST(NULL AS STRING))", "[]"}, {"JSON_ARRAY(JSON_ARRAY(1))", "[[1]]"},
				{"JSON_ARRAY(JSON_OBJECT('a' VALUE TRUE), 'x')", `[{"a":true},"x"]`}}},
		{Fn: FnJSONExists, Names: []string{"JSON_EXISTS"}, Args: []Arg{ArgString, ArgString, ArgString}, Min: 2, Result: returns(TypeBoolean),
			Nulls: NullStrictNullable, Bind: jsonExistsClause,
			Examples: []Example{{`JSON_EXISTS('{"a": true}', '$.a')`, "true"}, {`JSON_EXISTS('{"a": true}', '$.b')`, "false"}, {`JSON_EXISTS('{"a": [{ "b": 1 }]}', '$.a[0].b')`, "true"},
				{`JSON_EXISTS('{"a": null}', '$.a')`, "true"}, {`JSON_EXISTS('{', '$')`, "false"},
				{`JSON_EXISTS('{"a": true}', 'strict $.b' TRUE ON ERROR)`, "true"}, {`JSON_EXISTS('{"a": true}', 'strict $.b' FALSE ON ERROR)`, "false"},
				{`JSON_EXISTS('{"a": true}', 'strict $.b' UNKNOWN ON ERROR)`, "null"}, {`JSON_EXISTS('{"a": true}', 'lax $.b' TRUE ON ERROR)`, "false"},
				{`JSON_EXISTS('not json', '$' TRUE ON ERROR)`, "true"}}},
		{Fn: FnIsJSON, Args: []Arg{ArgString, ArgString}, Result: returns(Type{Kind: Boolean, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"'1' IS JSON", "true"}, {"'[]' IS JSON", "true"}, {"'{}' IS JSON", "true"}, {`'"abc"' IS JSON`, "true"}, {"'abc' IS JSON", "false"},
				{"CAST(NULL AS STRING) IS JSON", "false"}, {"'1' IS JSON SCALAR", "true"}, {"'1' IS JSON ARRAY", "false"}, {"'{}' IS JSON OBJECT", "true"}, {"'{}' IS JSON SCALAR", "false"}}},
		{Fn: FnIsNotJSON, Args: []Arg{ArgString, ArgString}, Result: returns(Type{Kind: Boolean, NotNull: true}), Nulls: NullAware,
			Examples: []Example{{"'abc' IS NOT JSON", "true"}, {"'[1]' IS NOT JSON ARRAY", "false"}, {"CAST(NULL AS STRING) IS NOT JSON", "false"}}},
		hash1(FnMD5, "MD5", Example{"MD5('hello')", "5d41402abc4b2a76b9719d911017c592"}),
		hash1(FnSHA1, "SHA1", Example{"SHA1('hello')", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"}),
		hash1(FnSHA224, "SHA224", Example{"SHA224('hello')", "ea09ae9cc6768c50fcee903ed054556e5bfc8347907f12598aa24193"}),
		hash1(FnSHA256, "SHA256", Example{"SHA256('hello')", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}),
		hash1(FnSHA384, "SHA384", Example{"CHAR_LENGTH(SHA384('hello'))", "96"}),
		hash1(FnSHA512, "SHA512", Example{"CHAR_LENGTH(SHA512('hello'))", "128"}),
		{Fn: FnSHA2, Names: []string{"SHA2"}, Args: []Arg{ArgString, ArgInt}, Result: returns(TypeString), Nulls: NullStrictNullable,
			Bind: func(c *CallSite) (Expr, error) {
				if bits, ok := c.constInt(1); ok && bits != 0 && bits != 224 && bits != 256 && bits != 384 && bits != 512 {
					return nil, c.Errorf(1, "SHA2 hash length must be 224, 256, 384 or 512, got %d", bits)
				}
				return c.Default(), nil
			},
			Examples: []Example{{"SHA2('hello', 256)", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}, {"CHAR_LENGTH(SHA2('hello', 512))", "128"}}},

		// Temporal.
		{Fn: FnExtract, Args: []Arg{ArgString, ArgTemporal}, Result: returns(TypeBigInt),
			Examples: []Example{{"EXTRACT(DAY FROM DATE '2006-06-05')", "5"}, {"EXTRACT(HOUR FROM TIMESTAMP '2024-05-06 07:08:09')", "7"},
				{"EXTRACT(MINUTE FROM TIME '12:34:56')", "34"}, {"EXTRACT(MILLISECOND FROM TIME '12:34:56.789')", "789"}}},
		{Fn: FnProctime, Names: []string{"PROCTIME"}, Niladic: true, Result: returns(Type{Kind: TimestampLTZ, Precision: 3, NotNull: true}), Nulls: NullAware,
			// The test's clock reads 2024-05-06 07:08:09 UTC.
			Examples: []Example{{"PROCTIME()", "2024-05-06 07:08:09.000"}}},
		{Fn: FnCurrentWatermark, Names: []string{"CURRENT_WATERMARK"}, Args: []Arg{ArgAny}, Nulls: NullAware,
			Result: func(args []Expr) Type {
				t := args[0].Type().Nullable()
				t.Precision = 3
				return t
			},
			Bind: func(c *CallSite) (Expr, error) {
				if k := c.Args[0].Type().Kind; k != Timestamp && k != TimestampLTZ {
					return nil, c.Errorf(0, "CURRENT_WATERMARK takes a time attribute, got %s", c.Args[0].Type().Nullable())
				}
				return c.Default(), nil
			},
			// Evaluated outside a job, no watermark has passed.
			Examples: []Example{{"CURRENT_WATERMARK(CAST(NULL AS TIMESTAMP(3)))", "null"}}},
		{Fn: FnCurrentTS, Names: []string{"CURRENT_TIMESTAMP", "NOW", "LOCALTIMESTAMP", "CURRENT_ROW_TIMESTAMP", "CURRENT_TIME", "LOCALTIME"}, Niladic: true,
			Result: returns(Type{Kind: TimestampLTZ, Precision: 3, NotNull: true}), Nulls: NullAware,
			Bind: func(c *CallSite) (Expr, error) {
				if c.Call != nil {
					switch strings.ToUpper(c.Call.Name) {
					case "LOCALTIMESTAMP":
						return castTo(c.Default(), TypeTS), nil
					case "CURRENT_TIME", "LOCALTIME": // the wall clock's time of day, TIME(0) as Flink types it
						return &Cast{X: c.Default(), T: Type{Kind: Time, NotNull: true}}, nil
					}
				}
				return c.Default(), nil
			},
			// The test's clock reads 2024-05-06 07:08:09 UTC.
			Examples: []Example{{"CURRENT_TIMESTAMP", "2024-05-06 07:08:09.000"}, {"LOCALTIMESTAMP", "2024-05-06 07:08:09.000"}, {"CURRENT_ROW_TIMESTAMP()", "2024-05-06 07:08:09.000"},
				{"CURRENT_TIME", "07:08:09"}, {"LOCALTIME", "07:08:09"}, {"TYPEOF(LOCALTIME)", "TIME(0) NOT NULL"}}},
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

		extract1(FnYear, "YEAR", Example{"YEAR(DATE '1994-09-27')", "1994"}),
		extract1(FnQuarter, "QUARTER", Example{"QUARTER(DATE '1994-09-27')", "3"}),
		extract1(FnMonth, "MONTH", Example{"MONTH(DATE '1994-09-27')", "9"}),
		extract1(FnWeek, "WEEK", Example{"WEEK(DATE '1994-09-27')", "39"}),
		extract1(FnDayOfYear, "DAYOFYEAR", Example{"DAYOFYEAR(DATE '1994-09-27')", "270"}),
		extract1(FnDayOfMonth, "DAYOFMONTH", Example{"DAYOFMONTH(DATE '1994-09-27')", "27"}),
		extract1(FnDayOfWeek, "DAYOFWEEK", Example{"DAYOFWEEK(DATE '1994-09-27')", "3"}),
		clock1(FnHour, "HOUR", Example{"HOUR(TIMESTAMP '1994-09-27 13:14:15')", "13"}, Example{"HOUR(TIME '13:14:15')", "13"}),
		clock1(FnMinute, "MINUTE", Example{"MINUTE(TIMESTAMP '1994-09-27 13:14:15')", "14"}, Example{"MINUTE(TIME '13:14:15')", "14"}),
		clock1(FnSecond, "SECOND", Example{"SECOND(TIMESTAMP '1994-09-27 13:14:15')", "15"}, Example{"SECOND(TIME '13:14:15.999')", "15"}),
		{Fn: FnTimestampAdd, Names: []string{"TIMESTAMPADD"}, Unit: true, Units: timeUnits, Args: []Arg{ArgString, ArgBigInt, ArgTemporal},
			Result: func(args []Expr) Type {
				t := args[2].Type()
				if u, ok := args[0].(*Literal); ok && t.Kind == Date && u.Value != "DAY" && u.Value != "WEEK" && u.Value != "MONTH" && u.Value != "QUARTER" && u.Value != "YEAR" {
					return TypeTS // a DATE moved by hours is a TIMESTAMP
				}
				return t
			},
			Examples: []Example{{"TIMESTAMPADD(DAY, 2, TIMESTAMP '2024-02-28 10:00:00')", "2024-03-01 10:00:00"}, {"TIMESTAMPADD(MONTH, 1, DATE '2024-01-31')", "2024-02-29"},
				{"TIMESTAMPADD(HOUR, -3, DATE '2024-01-01')", "2023-12-31 21:00:00.000"}, {"TIMESTAMPADD(YEAR, 1, TIMESTAMP '2024-02-29 00:00:00')", "2025-02-28 00:00:00"}}},
		{Fn: FnTimestampDiff, Names: []string{"TIMESTAMPDIFF"}, Unit: true, Units: timeUnits, Args: []Arg{ArgString, ArgTemporal, ArgTemporal}, Result: returns(TypeInt),
			Examples: []Example{{"TIMESTAMPDIFF(DAY, TIMESTAMP '2024-01-01 12:00:00', TIMESTAMP '2024-01-03 11:00:00')", "1"},
				{"TIMESTAMPDIFF(MONTH, DATE '2024-01-31', DATE '2024-02-29')", "0"}, {"TIMESTAMPDIFF(MONTH, DATE '2024-01-15', DATE '2024-03-15')", "2"},
				{"TIMESTAMPDIFF(YEAR, DATE '2024-06-01', DATE '2020-06-02')", "-3"}, {"TIMESTAMPDIFF(SECOND, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-01 00:01:30')", "90"}}},
		{Fn: FnFromUnixtime, Names: []string{"FROM_UNIXTIME"}, Args: []Arg{ArgBigInt, ArgString}, Min: 1, Result: returns(TypeString),
			Examples: []Example{{"FROM_UNIXTIME(44)", "1970-01-01 00:00:44"}, {"FROM_UNIXTIME(1715000000, 'yyyy/MM/dd')", "2024/05/06"}}},
		{Fn: FnUnixTimestamp, Names: []string{"UNIX_TIMESTAMP"}, Args: []Arg{ArgString, ArgString}, Niladic: true, Result: returns(TypeBigInt),
			// The test's clock reads 2024-05-06 07:08:09 UTC.
			Examples: []Example{{"UNIX_TIMESTAMP()", "1714979289"}, {"UNIX_TIMESTAMP('1970-01-01 08:00:01')", "28801"},
				{"UNIX_TIMESTAMP('1970-01-01 08:00:01.001', 'yyyy-MM-dd HH:mm:ss.SSS')", "28801"}, {"UNIX_TIMESTAMP('garbage')", "-9223372036854775808"}}},
		{Fn: FnToDate, Names: []string{"TO_DATE"}, Args: []Arg{ArgString, ArgString}, Min: 1, Result: returns(TypeDate), Nulls: NullStrictNullable,
			Examples: []Example{{"TO_DATE('2024-05-06')", "2024-05-06"}, {"TO_DATE('06.05.2024', 'dd.MM.yyyy')", "2024-05-06"}, {"TO_DATE('May')", "null"}}},

		// FLOOR(x TO unit) and CEIL(x TO unit) have syntax of their own; the unit comes first.
		{Fn: FnFloorTime, Args: []Arg{ArgString, ArgClock}, Result: sameAs(1), Bind: floorTime,
			Examples: []Example{{"FLOOR(TIME '12:44:31' TO MINUTE)", "12:44:00"}, {"FLOOR(TIMESTAMP '2024-05-06 07:08:09' TO HOUR)", "2024-05-06 07:00:00"}, {"FLOOR(TIMESTAMP '2024-05-06 07:08:09' TO QUARTER)", "2024-04-01 00:00:00"},
				{"FLOOR(DATE '2024-05-06' TO YEAR)", "2024-01-01"}, {"FLOOR(TIMESTAMP '1969-12-31 23:59:59.5' TO SECOND)", "1969-12-31 23:59:59.0"}}},
		{Fn: FnCeilTime, Args: []Arg{ArgString, ArgClock}, Result: sameAs(1), Bind: floorTime,
			Examples: []Example{{"CEIL(TIME '12:44:31' TO MINUTE)", "12:45:00"}, {"CEIL(TIMESTAMP '2024-05-06 07:08:09' TO HOUR)", "2024-05-06 08:00:00"}, {"CEIL(TIMESTAMP '2024-05-06 00:00:00' TO DAY)", "2024-05-06 00:00:00"},
				{"CEIL(DATE '2024-05-06' TO MONTH)", "2024-06-01"}, {"CEILING(TIMESTAMP '2024-12-31 10:00:00' TO YEAR)", "2025-01-01 00:00:00"}}},
		{Fn: FnCurrentDate, Names: []string{"CURRENT_DATE"}, Niladic: true, Result: returns(Type{Kind: Date, NotNull: true}), Nulls: NullAware,
			// The test's clock reads 2024-05-06 07:08:09 UTC.
			Examples: []Example{{"CURRENT_DATE", "2024-05-06"}}},
		{Fn: FnConvertTZ, Names: []string{"CONVERT_TZ"}, Args: []Arg{ArgString, ArgString, ArgString}, Result: returns(TypeString), Nulls: NullStrictNullable,
			Bind: func(c *CallSite) (Expr, error) {
				for i := 1; i <= 2; i++ {
					if z, ok := c.constString(i); ok {
						if _, err := LoadZone(z); err != nil {
							return nil, c.Errorf(i, "CONVERT_TZ: %v", err)
						}
					}
				}
				return c.Default(), nil
			},
			Examples: []Example{{"CONVERT_TZ('1970-01-01 00:00:00', 'UTC', 'America/Los_Angeles')", "1969-12-31 16:00:00"},
				{"CONVERT_TZ('2024-05-06 12:00:00', 'GMT+08:00', 'PST')", "2024-05-05 21:00:00"}, {"CONVERT_TZ('garbage', 'UTC', 'UTC')", "null"}}},

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
		{Fn: FnIf, Names: []string{"IF"}, Args: []Arg{ArgBoolean, ArgCommon, ArgCommon}, Nulls: NullAware,
			Result: func(args []Expr) Type {
				t := args[1].Type()
				t.NotNull = args[1].Type().NotNull && args[2].Type().NotNull
				return t
			},
			Examples: []Example{{"IF(5 > 3, 5, 3)", "5"}, {"IF(CAST(NULL AS BOOLEAN), 'y', 'n')", "n"}, {"IF(FALSE, 1 / 0, 2)", "2"}}},
		{Fn: FnIfNull, Names: []string{"IFNULL"}, Args: []Arg{ArgCommon, ArgCommon}, Nulls: NullAware,
			Result: func(args []Expr) Type {
				t := args[0].Type()
				t.NotNull = args[0].Type().NotNull || args[1].Type().NotNull
				return t
			},
			Examples: []Example{{"IFNULL(CAST(NULL AS INT), 5)", "5"}, {"IFNULL(1, 5)", "1"}, {"IFNULL(NULL, 'x')", "x"}}},
		{Fn: FnGreatest, Names: []string{"GREATEST"}, Args: []Arg{ArgCommon}, Min: 1, Variadic: true, Result: sameAs(0),
			Examples: []Example{{"GREATEST(1, 3, 2)", "3"}, {"GREATEST('b', 'abc')", "b"}, {"GREATEST(1, 2.5)", "2.5"}, {"GREATEST(1, CAST(NULL AS INT))", "null"},
				{"GREATEST(DATE '2024-01-01', DATE '2023-12-31')", "2024-01-01"}, {"GREATEST(FALSE, TRUE)", "true"}}},
		{Fn: FnLeast, Names: []string{"LEAST"}, Args: []Arg{ArgCommon}, Min: 1, Variadic: true, Result: sameAs(0),
			Examples: []Example{{"LEAST(1, 3, 2)", "1"}, {"LEAST('b', 'abc')", "abc"}, {"LEAST(1.5e0, -2)", "-2.0"}, {"LEAST(CAST(NULL AS STRING), 'a')", "null"}}},
		{Fn: FnTypeOf, Names: []string{"TYPEOF"}, Args: []Arg{ArgAny, ArgBoolean}, Min: 1, Result: returns(Type{Kind: String, NotNull: true}), Nulls: NullAware,
			// TYPEOF(x, force_serializable): a constant, TRUE for the serializable string.
			Bind: func(c *CallSite) (Expr, error) {
				if len(c.Args) == 2 {
					if l, ok := c.Args[1].(*Literal); !ok || (l.Value != nil && l.T.Kind != Boolean) {
						return nil, c.Errorf(1, "TYPEOF's second argument (force_serializable) must be TRUE or FALSE")
					}
				}
				return c.Default(), nil
			},
			Examples: []Example{{"TYPEOF(1)", "INT NOT NULL"}, {"TYPEOF(CAST(NULL AS BIGINT))", "BIGINT"}, {"TYPEOF(1.50)", "DECIMAL(3, 2) NOT NULL"}, {"TYPEOF('abc')", "STRING NOT NULL"},
				{"TYPEOF('abc', TRUE)", "VARCHAR(2147483647) NOT NULL"}, {"TYPEOF('abc', FALSE)", "STRING NOT NULL"},
				{"TYPEOF(CAST(NULL AS TIMESTAMP_LTZ(3)), TRUE)", "TIMESTAMP(3) WITH LOCAL TIME ZONE"},
				{"TYPEOF(TIMESTAMP '2024-01-01 00:00:01.25')", "TIMESTAMP(2) NOT NULL"}, {"TYPEOF(CAST(NULL AS TIMESTAMP))", "TIMESTAMP(6)"},
				{"TYPEOF(CAST(NULL AS MULTISET<INT>))", "MULTISET<INT>"},
				{"TYPEOF(MAP['a', CAST(NULL AS BYTES)], TRUE)", "MAP<VARCHAR(2147483647) NOT NULL, VARBINARY(2147483647)> NOT NULL"}}},
		{Fn: FnNullIf, Names: []string{"NULLIF"}, Args: []Arg{ArgCommon, ArgCommon}, Nulls: NullAware,
			Result:   func(args []Expr) Type { return args[0].Type().Nullable() },
			Examples: []Example{{"NULLIF(5, 5)", "null"}, {"NULLIF(5, 0)", "5"}, {"NULLIF(5, CAST(NULL AS INT))", "5"}}},

		// Value construction and access (bindnested.go binds the operators).
		{Fn: FnRow, Names: []string{"ROW"}, Args: []Arg{ArgAny}, Min: 1, Variadic: true, Nulls: NullAware, Result: rowOf, Bind: typedArgs,
			Examples: []Example{{"ROW(1, 'a')", "(1, a)"}, {"(1, 'a', CAST(NULL AS DOUBLE))", "(1, a, NULL)"}, {"ROW(ROW(1), ARRAY[2])", "((1), [2])"}}},
		{Fn: FnArray, Args: []Arg{ArgCommon}, Min: 1, Variadic: true, Nulls: NullAware, Result: arrayOf, Bind: typedArgs,
			Examples: []Example{{"ARRAY[1, 2, 3]", "[1, 2, 3]"}, {"ARRAY['a', NULL]", "[a, NULL]"}, {"ARRAY[1, 2.5]", "[1.0, 2.5]"}, {"ARRAY[ARRAY[1], ARRAY[2, 3]]", "[[1], [2, 3]]"}}},
		{Fn: FnMap, Args: []Arg{ArgAny}, Min: 2, Variadic: true, Nulls: NullAware, Result: func(args []Expr) Type { return TypeNull },
			Examples: []Example{{"MAP['a', 1, 'b', 2]", "{a=1, b=2}"}, {"MAP[1, 'x', 1, 'y']", "{1=y}"}, {"MAP['k', ARRAY[CAST(NULL AS INT)]]", "{k=[NULL]}"}}},
		{Fn: FnItem, Args: []Arg{ArgAny, ArgAny}, Nulls: NullAware, Result: func(args []Expr) Type { return TypeNull },
			Examples: []Example{{"ARRAY[10, 20][2]", "20"}, {"ARRAY[10, 20][3]", "null"}, {"ARRAY[10, 20][0]", "null"}, {"ARRAY[10, 20][CAST(NULL AS INT)]", "null"},
				{"MAP['a', 1, 'b', 2]['b']", "2"}, {"MAP['a', 1]['c']", "null"}, {"ARRAY[ROW(1, 'x')][1].EXPR$1", "x"}}},
		{Fn: FnField, Args: []Arg{ArgAny, ArgInt}, Nulls: NullAware, Result: func(args []Expr) Type { return TypeNull },
			Examples: []Example{{"ROW(1, 'a').EXPR$1", "a"}, {"ROW(ROW(2, 3)).EXPR$0.EXPR$1", "3"}, {"CAST(NULL AS ROW<a INT>).a", "null"}}},
		{Fn: FnCardinality, Names: []string{"CARDINALITY"}, Args: []Arg{ArgAny}, Result: returns(TypeInt),
			Bind: func(c *CallSite) (Expr, error) {
				if k := c.Args[0].Type().Kind; k != Array && k != Map && k != Multiset && k != Null {
					return nil, c.Errorf(0, "CARDINALITY needs an ARRAY, a MAP or a MULTISET, got %s", c.Args[0].Type().Nullable())
				}
				return c.Default(), nil
			},
			Examples: []Example{{"CARDINALITY(ARRAY[1, 2, 3])", "3"}, {"CARDINALITY(MAP['a', 1])", "1"}, {"CARDINALITY(CAST(NULL AS ARRAY<INT>))", "null"},
				{"CARDINALITY(CAST(NULL AS MULTISET<STRING>))", "null"}}},
		{Fn: FnElement, Names: []string{"ELEMENT"}, Args: []Arg{ArgAny}, Nulls: NullStrictNullable,
			Result: func(args []Expr) Type { return args[0].Type().Elem().Nullable() },
			Bind: func(c *CallSite) (Expr, error) {
				if k := c.Args[0].Type().Kind; k != Array && k != Multiset {
					return nil, c.Errorf(0, "ELEMENT needs an ARRAY or a MULTISET, got %s", c.Args[0].Type().Nullable())
				}
				return c.Default(), nil
			},
			Examples: []Example{{"ELEMENT(ARRAY['x'])", "x"}, {"ELEMENT(ARRAY[CAST(NULL AS INT)])", "null"}, {"ELEMENT(CAST(NULL AS MULTISET<INT>))", "null"}}},
		{Fn: FnArrayContains, Names: []string{"ARRAY_CONTAINS"}, Args: []Arg{ArgAny, ArgAny}, Result: returns(TypeBoolean), Nulls: NullAware, Bind: needleOfElemType,
			Examples: []Example{{"ARRAY_CONTAINS(ARRAY[1, 2, 3], 2)", "true"}, {"ARRAY_CONTAINS(ARRAY[1, 2], 3)", "false"}, {"ARRAY_CONTAINS(ARRAY[1, NULL], CAST(NULL AS INT))", "true"},
				{"ARRAY_CONTAINS(ARRAY[1, 2], CAST(NULL AS INT))", "false"}, {"ARRAY_CONTAINS(ARRAY[1.5, 2.0], 2)", "true"}, {"ARRAY_CONTAINS(CAST(NULL AS ARRAY<INT>), 1)", "null"}}},
		{Fn: FnArrayPosition, Names: []string{"ARRAY_POSITION"}, Args: []Arg{ArgAny, ArgAny}, Result: returns(TypeInt), Bind: needleOfElemType,
			Examples: []Example{{"ARRAY_POSITION(ARRAY['a', 'b', 'a'], 'a')", "1"}, {"ARRAY_POSITION(ARRAY['a', 'b'], 'b')", "2"}, {"ARRAY_POSITION(ARRAY['a'], 'z')", "0"},
				{"ARRAY_POSITION(ARRAY['a'], CAST(NULL AS STRING))", "null"}}},
		{Fn: FnArrayRemove, Names: []string{"ARRAY_REMOVE"}, Args: []Arg{ArgAny, ArgAny}, Result: sameAs(0), Nulls: NullStrictNullable, Bind: needleOfElemType,
			Examples: []Example{{"ARRAY_REMOVE(ARRAY[1, 2, 1, 3], 1)", "[2, 3]"}, {"ARRAY_REMOVE(ARRAY[1, NULL, 2], 5)", "[1, NULL, 2]"}, {"ARRAY_REMOVE(ARRAY[1], CAST(NULL AS INT))", "null"}}},
		{Fn: FnArrayDistinct, Names: []string{"ARRAY_DISTINCT"}, Args: []Arg{ArgAny}, Result: sameAs(0), Bind: collectionArg(Array),
			Examples: []Example{{"ARRAY_DISTINCT(ARRAY[3, 1, 3, NULL, 1, NULL])", "[3, 1, NULL]"}, {"ARRAY_DISTINCT(ARRAY[ARRAY[1], ARRAY[1], ARRAY[2]])", "[[1], [2]]"}}},
		{Fn: FnArrayReverse, Names: []string{"ARRAY_REVERSE"}, Args: []Arg{ArgAny}, Result: sameAs(0), Bind: collectionArg(Array),
			Examples: []Example{{"ARRAY_REVERSE(ARRAY['a', 'b', NULL])", "[NULL, b, a]"}, {"ARRAY_REVERSE(CAST(NULL AS ARRAY<INT>))", "null"}}},
		{Fn: FnMapKeys, Names: []string{"MAP_KEYS"}, Args: []Arg{ArgAny}, Bind: collectionArg(Map),
			Result:   func(args []Expr) Type { return ArrayType(args[0].Type().Elem()) },
			Examples: []Example{{"MAP_KEYS(MAP['a', 1, 'b', 2])", "[a, b]"}}},
		{Fn: FnMapValues, Names: []string{"MAP_VALUES"}, Args: []Arg{ArgAny}, Bind: collectionArg(Map),
			Result:   func(args []Expr) Type { return ArrayType(args[0].Type().Value()) },
			Examples: []Example{{"MAP_VALUES(MAP['a', 1, 'b', CAST(NULL AS INT)])", "[1, NULL]"}}},
		{Fn: FnMapFromArrays, Names: []string{"MAP_FROM_ARRAYS"}, Args: []Arg{ArgAny, ArgAny},
			Result: func(args []Expr) Type {
				key := args[0].Type().Elem()
				key.NotNull = true // a MAP key is never NULL
				return MapType(key, args[1].Type().Elem())
			},
			Bind: func(c *CallSite) (Expr, error) {
				for i := range c.Args {
					if c.Args[i].Type().Kind != Array {
						return nil, c.Errorf(i, "MAP_FROM_ARRAYS needs two ARRAYs, got %s", c.Args[i].Type().Nullable())
					}
				}
				return c.Default(), nil
			},
			Examples: []Example{{"MAP_FROM_ARRAYS(ARRAY['a', 'b'], ARRAY[1, 2])", "{a=1, b=2}"}, {"MAP_FROM_ARRAYS(ARRAY[1, 1], ARRAY['x', 'y'])", "{1=y}"}}},
		{Fn: FnEncode, Names: []string{"ENCODE"}, Args: []Arg{ArgString, ArgString}, Result: returns(Type{Kind: Binary}),
			Examples: []Example{{"ENCODE('héllo', 'UTF-8')", "x'68c3a96c6c6f'"}, {"ENCODE('hé', 'ISO-8859-1')", "x'68e9'"}, {"ENCODE('hé', 'US-ASCII')", "x'683f'"},
				{"ENCODE('a', 'UTF-16')", "x'feff0061'"}, {"ENCODE('a', 'UTF-16LE')", "x'6100'"}}},
		{Fn: FnDecode, Names: []string{"DECODE"}, Args: []Arg{ArgAny, ArgString}, Result: returns(TypeString),
			Bind: func(c *CallSite) (Expr, error) {
				if k := c.Args[0].Type().Kind; k != Binary && k != Null {
					return nil, c.Errorf(0, "DECODE takes BYTES first, got %s", c.Args[0].Type().Nullable())
				}
				return c.Default(), nil
			},
			Examples: []Example{{"DECODE(ENCODE('héllo', 'UTF-16'), 'UTF-16')", "héllo"}, {"DECODE(UNHEX('68E9'), 'ISO-8859-1')", "hé"}, {"DECODE(UNHEX('6100'), 'utf-16le')", "a"}, {"DECODE(UNHEX('FFFE6100'), 'UTF-16')", "a"}}},
		{Fn: FnPrintf, Names: []string{"PRINTF"}, Args: []Arg{ArgString, ArgAny}, Min: 1, Variadic: true, Nulls: NullStrictNullable,
			Result: returns(TypeString),
			Examples: []Example{{"PRINTF('%d %s', 3, 'apples')", "3 apples"}, {"PRINTF('%5.2f|%-4s|%04d', 3.14159, 'ab', 42)", " 3.14|ab  |0042"},
				{"PRINTF('%x %X %o %%', 255, 255, 8)", "ff FF 10 %"}, {"PRINTF('%s', CAST(NULL AS INT))", "null"}, {"PRINTF('%b %S', TRUE, 'up')", "true UP"},
				{"PRINTF('%f', 1.5)", "1.500000"}}},
		{Fn: FnStrToMap, Names: []string{"STR_TO_MAP"}, Args: []Arg{ArgString, ArgString, ArgString}, Min: 1,
			Result: returns(MapType(Type{Kind: String, NotNull: true}, TypeString)),
			Examples: []Example{{"STR_TO_MAP('a=1,b=2')", "{a=1, b=2}"}, {"STR_TO_MAP('a:1;b;a:3', ';', ':')", "{a=3, b=NULL}"}, {"STR_TO_MAP('k1=v1|k2=v2', '\\|')", "{k1=v1, k2=v2}"},
				{"CARDINALITY(STR_TO_MAP(''))", "0"}, {"STR_TO_MAP(CAST(NULL AS STRING))", "null"}}},
	}
}

// jsonValueClauses checks JSON_VALUE's path and, when it has a RETURNING type or ON
// EMPTY / ON ERROR clauses, adds them as arguments: the type's name, and per clause its
// kind and its DEFAULT as a STRING (both "NULL" and "" without one). The call's STRING
// result is then cast to the RETURNING type (the kernel checks that it converts).
func jsonValueClauses(c *CallSite) (Expr, error) {
	if len(c.Args) != 2 {
		return nil, c.Errorf(-1, "JSON_VALUE takes 2 arguments, a JSON text and a path, then its clauses")
	}
	if _, err := checkJSONPath(c); err != nil {
		return nil, err
	}
	call := c.Call
	if call == nil || call.Returning == nil && call.OnEmpty == nil && call.OnError == nil {
		return c.Default(), nil
	}
	ret := TypeString
	if call.Returning != nil {
		t, err := BindType(call.Returning)
		if err != nil {
			return nil, err
		}
		switch t.Kind {
		case String, Boolean, Int, BigInt, Double:
		default:
			return nil, c.Errorf(-1, "JSON_VALUE RETURNING takes STRING, BOOLEAN, INT, BIGINT or DOUBLE, not %s", t)
		}
		ret = t.Nullable()
	}
	str := func(s string) Expr { return &Literal{Value: s, T: Type{Kind: String, NotNull: true}} }
	args := append(c.Args, str(map[Kind]string{String: "STRING", Boolean: "BOOLEAN", Int: "INT", BigInt: "BIGINT", Double: "DOUBLE"}[ret.Kind]))
	for _, b := range []*parser.JSONBehavior{call.OnEmpty, call.OnError} {
		switch {
		case b == nil:
			args = append(args, str("NULL"), str(""))
		case b.Default != nil:
			d, err := c.b.bind(b.Default)
			if err != nil {
				return nil, err
			}
			def := castTo(d, TypeString)
			if d.Type().Kind == Boolean { // Flink's default reads true or false, as JSON does
				def = &Call{Fn: FnLower, Args: []Expr{def}, T: def.Type()}
			}
			args = append(args, str("DEFAULT"), def)
		default:
			args = append(args, str(b.Kind), str(""))
		}
	}
	var out Expr = &Call{Fn: FnJSONValue, Args: args, T: TypeString}
	if ret.Kind != String {
		out = &Cast{X: out, T: ret}
	}
	return out, nil
}

// jsonExistsClause checks JSON_EXISTS's path and adds its ON ERROR behaviour as a STRING
// literal: TRUE, FALSE (the default), UNKNOWN or ERROR. An error is text that is not
// JSON, or a strict path that leads nowhere; a lax path that leads nowhere is FALSE.
func jsonExistsClause(c *CallSite) (Expr, error) {
	if len(c.Args) != 2 {
		return nil, c.Errorf(-1, "JSON_EXISTS takes 2 arguments, a JSON text and a path, then its ON ERROR clause")
	}
	if _, err := checkJSONPath(c); err != nil {
		return nil, err
	}
	onError := "FALSE"
	if c.Call != nil && c.Call.Clauses != "" {
		onError = strings.TrimSuffix(c.Call.Clauses, " ON ERROR")
	}
	return &Call{Fn: FnJSONExists, Args: append(c.Args, &Literal{Value: onError, T: Type{Kind: String, NotNull: true}}), T: c.T}, nil
}

// jsonQueryClauses checks JSON_QUERY's path and adds its clauses as three STRING
// literals: the wrapper, and what to do ON EMPTY and ON ERROR (NULL by default).
func jsonQueryClauses(c *CallSite) (Expr, error) {
	if len(c.Args) != 2 {
		return nil, c.Errorf(-1, "JSON_QUERY takes 2 arguments, a JSON text and a path, then its clauses")
	}
	if _, err := checkJSONPath(c); err != nil {
		return nil, err
	}
	wrapper, onEmpty, onError := "WITHOUT", "NULL", "NULL"
	if c.Call != nil {
		for _, cl := range splitClauses(c.Call.Clauses) {
			switch {
			case strings.HasSuffix(cl, "WRAPPER"):
				wrapper = "WITHOUT"
				if strings.HasPrefix(cl, "WITH ") {
					wrapper = "UNCONDITIONAL"
				}
				if strings.Contains(cl, "CONDITIONAL") && !strings.Contains(cl, "UNCONDITIONAL") {
					wrapper = "CONDITIONAL"
				}
			case strings.HasSuffix(cl, " ON EMPTY"):
				onEmpty = strings.TrimSuffix(cl, " ON EMPTY")
			case strings.HasSuffix(cl, " ON ERROR"):
				onError = strings.TrimSuffix(cl, " ON ERROR")
			}
		}
	}
	str := func(s string) Expr { return &Literal{Value: s, T: Type{Kind: String, NotNull: true}} }
	return &Call{Fn: FnJSONQuery, Args: append(c.Args, str(wrapper), str(onEmpty), str(onError)), T: c.T}, nil
}

// splitClauses splits JSON_QUERY's clauses after each WRAPPER, EMPTY or ERROR that ends
// one (the EMPTY of EMPTY ARRAY begins one).
func splitClauses(s string) []string {
	var out []string
	words := strings.Fields(s)
	start := 0
	for i, w := range words {
		if w == "WRAPPER" || (w == "EMPTY" || w == "ERROR") && i > 0 && words[i-1] == "ON" {
			out = append(out, strings.Join(words[start:i+1], " "))
			start = i + 1
		}
	}
	return out
}

// jsonConstructor checks JSON_OBJECT's keys (STRING literals, not NULL) and puts the
// NULL treatment first among the arguments: JSON_OBJECT keeps NULL values by default,
// JSON_ARRAY drops them.
func jsonConstructor(c *CallSite) (Expr, error) {
	keep := c.Fn.Fn == FnJSONObject
	if c.Call != nil && c.Call.OnNull != "" {
		keep = c.Call.OnNull == "NULL ON NULL"
	}
	if c.Fn.Fn == FnJSONObject {
		for i := 0; i < len(c.Args); i += 2 {
			if l, ok := c.Args[i].(*Literal); !ok || l.T.Kind != String || l.Value == nil {
				return nil, c.Errorf(i, "a key of JSON_OBJECT must be a STRING literal, not NULL")
			}
		}
	}
	args := append([]Expr{&Literal{Value: keep, T: Type{Kind: Boolean, NotNull: true}}}, c.Args...)
	return &Call{Fn: c.Fn.Fn, Args: args, T: c.T}, nil
}

// collectionArg checks that a function's argument is an ARRAY, or a MAP.
func collectionArg(kind Kind) func(c *CallSite) (Expr, error) {
	return func(c *CallSite) (Expr, error) {
		if k := c.Args[0].Type().Kind; k != kind {
			return nil, c.Errorf(0, "%s needs %s, got %s", c.Fn.name(), map[Kind]string{Array: "an ARRAY", Map: "a MAP"}[kind], c.Args[0].Type().Nullable())
		}
		return c.Default(), nil
	}
}

// needleOfElemType checks that the first argument is an ARRAY and casts the second to
// its element type, as Flink does implicitly.
func needleOfElemType(c *CallSite) (Expr, error) {
	if _, err := collectionArg(Array)(c); err != nil {
		return nil, err
	}
	elem := c.Args[0].Type().Elem()
	if x := c.Args[1].Type(); x.Kind != Null && !canCast(x, elem) {
		return nil, c.Errorf(1, "%s of an ARRAY<%s> cannot look for %s", c.Fn.name(), elem, x.Nullable())
	}
	c.Args[1] = castTo(c.Args[1], elem)
	call := c.Default().(*Call)
	call.Args = c.Args
	return call, nil
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

// checkRegex refuses a constant pattern Go's RE2 cannot run: Flink's patterns are Java's,
// and RE2 has no backreferences, lookaround, possessive quantifiers or atomic groups. A
// pattern read from a column that does not compile gives NULL on its row, as an invalid
// one does in Flink.
func checkRegex(c *CallSite) (Expr, error) {
	p, ok := c.constString(1)
	if !ok {
		return c.Default(), nil
	}
	if _, err := regexp.Compile(p); err != nil {
		msg := err.Error()
		if strings.Contains(msg, "Perl syntax") || strings.Contains(msg, "invalid escape sequence") ||
			strings.Contains(msg, "invalid nested repetition") {
			return nil, c.Errorf(1, "%s pattern '%s' needs a Java regex feature Go's RE2 engine lacks "+
				"(backreferences, lookaround, possessive quantifiers, atomic groups): %s", c.Fn.name(), p, strings.TrimPrefix(msg, "error parsing regexp: "))
		}
		return nil, c.Errorf(1, "%s pattern '%s' is not a valid regular expression: %s", c.Fn.name(), p, strings.TrimPrefix(msg, "error parsing regexp: "))
	}
	return c.Default(), nil
}

// timeUnits are the units TIMESTAMPADD and TIMESTAMPDIFF take.
var timeUnits = []string{"MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}

// SimilarToRegex translates a SQL SIMILAR TO pattern into an anchored Go regular
// expression, as Calcite does: % and _ are any string and any character, | * + ? {m,n} ( )
// and [...] are regular-expression syntax, the escape character quotes the character after
// it, and every other character matches itself.
func SimilarToRegex(p, escape string) (string, error) {
	var esc rune = -1
	if escape != "" {
		esc = []rune(escape)[0]
	}
	var b strings.Builder
	b.WriteString("^(?s:")
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc:
			i++
			if i >= len(rs) {
				return "", &Error{Msg: "the pattern ends with its escape character"}
			}
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		case r == '[':
			j := i + 1
			if j < len(rs) && rs[j] == '^' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				return "", &Error{Msg: "missing ]"}
			}
			b.WriteString(string(rs[i : j+1]))
			i = j
		case strings.ContainsRune("|*+?{}()", r):
			b.WriteRune(r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(")$")
	return b.String(), nil
}

// checkJSONPath refuses a constant JSON path the evaluator cannot follow.
func checkJSONPath(c *CallSite) (Expr, error) {
	if p, ok := c.constString(1); ok {
		if _, err := ParseJSONPath(p); err != nil {
			return nil, c.Errorf(1, "%s: %v", c.Fn.name(), err)
		}
	}
	return c.Default(), nil
}

// floorTime binds FLOOR and CEIL (x TO unit) of a TIME: computed on 1970-01-01 as a
// TIMESTAMP whose time of day is kept, for the units within a day.
func floorTime(c *CallSite) (Expr, error) {
	x := c.Args[1]
	if x.Type().Kind != Time {
		return c.Default(), nil
	}
	if u, ok := c.constString(0); ok && u != "HOUR" && u != "MINUTE" && u != "SECOND" && u != "MILLISECOND" {
		return nil, c.Errorf(-1, "%s of a TIME takes HOUR, MINUTE, SECOND or MILLISECOND, got %s", c.Fn.Fn, u)
	}
	ts := &Call{Fn: c.Fn.Fn, Args: []Expr{c.Args[0], &Cast{X: x, T: TypeTS}}, T: Type{Kind: Timestamp, Precision: 3, NotNull: c.T.NotNull}}
	t := x.Type()
	t.NotNull = c.T.NotNull
	return &Cast{X: ts, T: t}, nil
}
