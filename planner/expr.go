package planner

import (
	"fmt"
	"strings"
)

// Expr is a resolved, typed scalar expression over the columns of one input schema.
// The planner inserts every implicit cast, so kernels see operands of agreeing types
// (see the rules on each Func).
type Expr interface {
	Type() Type
	String() string
}

// ColumnRef reads column Index of the input.
type ColumnRef struct {
	Index int
	Name  string
	T     Type
}

// Literal is a constant. Value by T.Kind:
//
//	nil                     NULL of type T (any kind)
//	bool                    Boolean
//	int32                   Int; Date (days since 1970-01-01); IntervalYearMonth (months)
//	int64                   BigInt; Timestamp and TimestampLTZ (milliseconds since the epoch,
//	                        the wall clock read as UTC for Timestamp); IntervalDayTime (milliseconds)
//	float64                 Double
//	string                  String; Decimal (its canonical text, e.g. "12.50", with T's scale)
type Literal struct {
	Value any
	T     Type
}

// Call applies a built-in function to arguments.
type Call struct {
	Fn   Func
	Args []Expr
	T    Type
}

// Cast converts X to T. A value that does not convert fails the job, unless Try is set
// (TRY_CAST), in which case it becomes NULL.
type Cast struct {
	X   Expr
	T   Type
	Try bool
}

// Case is a searched CASE: the Result of the first When whose Cond is TRUE, else Else
// (a NULL literal when the query had no ELSE). Results and Else all have type T.
type Case struct {
	Whens []When
	Else  Expr
	T     Type
}

// When is one WHEN Cond THEN Result branch.
type When struct {
	Cond   Expr
	Result Expr
}

// Func names a built-in scalar function. The planner guarantees the argument types noted.
type Func string

const (
	// Arithmetic. Args: two of the same Kind among INT, BIGINT, DOUBLE; or two DECIMALs (any
	// precision and scale; T holds the result's); or TIMESTAMP/TIMESTAMP_LTZ with an
	// interval (FnAdd, FnSub), the timestamp first. Integer division truncates; division or
	// MOD by zero fails the job for exact types and yields Inf/NaN for DOUBLE.
	FnAdd Func = "+"
	FnSub Func = "-"
	FnMul Func = "*"
	FnDiv Func = "/"
	FnMod Func = "MOD"
	FnNeg Func = "NEG" // one numeric or interval argument

	// Comparison: two arguments of identical type (DECIMALs with the same scale). BOOLEAN result.
	FnEq Func = "="
	FnNe Func = "<>"
	FnLt Func = "<"
	FnLe Func = "<="
	FnGt Func = ">"
	FnGe Func = ">="

	// Logic over BOOLEAN with SQL three-valued semantics.
	FnAnd Func = "AND" // two or more arguments
	FnOr  Func = "OR"  // two or more arguments
	FnNot Func = "NOT"

	// Predicates on one argument of any type; never NULL.
	FnIsNull        Func = "IS NULL"
	FnIsNotNull     Func = "IS NOT NULL"
	FnIsTrue        Func = "IS TRUE"
	FnIsNotTrue     Func = "IS NOT TRUE"
	FnIsFalse       Func = "IS FALSE"
	FnIsNotFalse    Func = "IS NOT FALSE"
	FnIsDistinct    Func = "IS DISTINCT FROM"     // two args of identical type; NULL equals NULL
	FnIsNotDistinct Func = "IS NOT DISTINCT FROM" // two args of identical type; NULL equals NULL
	FnIn            Func = "IN"                   // Args[0] IN (Args[1:]...), all of identical type; SQL NULL semantics
	FnLike          Func = "LIKE"                 // (STRING value, STRING pattern[, STRING escape literal])
	FnCoalesce      Func = "COALESCE"
	FnNullIf        Func = "NULLIF" // two args of identical type
	FnConcat        Func = "CONCAT" // STRING args (|| and CONCAT); NULL if any is NULL
	FnUpper         Func = "UPPER"
	FnLower         Func = "LOWER"
	FnSubstring     Func = "SUBSTRING"   // (STRING, INT start 1-based[, INT length])
	FnCharLength    Func = "CHAR_LENGTH" // (STRING) INT, in characters
	FnTrim          Func = "TRIM"        // (STRING[, STRING chars]); default chars: space
	FnLTrim         Func = "LTRIM"
	FnRTrim         Func = "RTRIM"
	FnReplace       Func = "REPLACE"  // (STRING, STRING search, STRING replacement)
	FnPosition      Func = "POSITION" // (STRING needle, STRING haystack) INT, 1-based, 0 if absent
	FnAbs           Func = "ABS"      // numeric, same type
	FnRound         Func = "ROUND"    // (numeric[, INT digits]) same type (DECIMAL: T's scale)
	FnFloor         Func = "FLOOR"    // numeric, same type (DECIMAL: scale 0)
	FnCeil          Func = "CEIL"
	FnPower         Func = "POWER" // (DOUBLE, DOUBLE) DOUBLE
	FnSqrt          Func = "SQRT"  // (DOUBLE) DOUBLE
	FnToTimestamp   Func = "TO_TIMESTAMP"
	// TO_TIMESTAMP(STRING[, STRING format]) TIMESTAMP(3); format in Java SimpleDateFormat
	// letters, default 'yyyy-MM-dd HH:mm:ss'; unparsable text gives NULL, as in Flink.
	FnToTimestampLTZ Func = "TO_TIMESTAMP_LTZ"  // (BIGINT epoch, INT literal precision 0 or 3) TIMESTAMP_LTZ(3)
	FnDateFormat     Func = "DATE_FORMAT"       // (TIMESTAMP|TIMESTAMP_LTZ, STRING format) STRING
	FnExtract        Func = "EXTRACT"           // (STRING literal unit, TIMESTAMP|TIMESTAMP_LTZ|DATE) BIGINT
	FnCurrentTS      Func = "CURRENT_TIMESTAMP" // () TIMESTAMP_LTZ(3), the same instant for a whole batch

	// Functions whose signatures are only in the function table (functions.go).
	FnIf            Func = "IF"
	FnIfNull        Func = "IFNULL"
	FnGreatest      Func = "GREATEST"
	FnLeast         Func = "LEAST"
	FnTypeOf        Func = "TYPEOF"
	FnLn            Func = "LN"
	FnLog           Func = "LOG"
	FnLog10         Func = "LOG10"
	FnLog2          Func = "LOG2"
	FnExp           Func = "EXP"
	FnSin           Func = "SIN"
	FnCos           Func = "COS"
	FnTan           Func = "TAN"
	FnCot           Func = "COT"
	FnAsin          Func = "ASIN"
	FnAcos          Func = "ACOS"
	FnAtan          Func = "ATAN"
	FnAtan2         Func = "ATAN2"
	FnSinh          Func = "SINH"
	FnCosh          Func = "COSH"
	FnTanh          Func = "TANH"
	FnDegrees       Func = "DEGREES"
	FnRadians       Func = "RADIANS"
	FnSign          Func = "SIGN"
	FnPi            Func = "PI"
	FnE             Func = "E"
	FnRand          Func = "RAND"
	FnRandInteger   Func = "RAND_INTEGER"
	FnUUID          Func = "UUID"
	FnBin           Func = "BIN"
	FnHex           Func = "HEX"
	FnTruncate      Func = "TRUNCATE"
	FnRegexpExtract Func = "REGEXP_EXTRACT"
	FnRegexpReplace Func = "REGEXP_REPLACE"
	FnRegexp        Func = "REGEXP"
	FnSplitIndex    Func = "SPLIT_INDEX"
	FnLPad          Func = "LPAD"
	FnRPad          Func = "RPAD"
	FnRepeat        Func = "REPEAT"
	FnReverse       Func = "REVERSE"
	FnInitCap       Func = "INITCAP"
	FnTranslate     Func = "TRANSLATE"
	FnConcatWS      Func = "CONCAT_WS"
	FnLeft          Func = "LEFT"
	FnRight         Func = "RIGHT"
	FnInstr         Func = "INSTR"
	FnASCII         Func = "ASCII"
	FnChr           Func = "CHR"
	FnFromBase64    Func = "FROM_BASE64"
	FnToBase64      Func = "TO_BASE64"
	FnMD5           Func = "MD5"
	FnSHA1          Func = "SHA1"
	FnSHA2          Func = "SHA2"
	FnSHA224        Func = "SHA224"
	FnSHA256        Func = "SHA256"
	FnSHA384        Func = "SHA384"
	FnSHA512        Func = "SHA512"
	FnYear          Func = "YEAR"
	FnQuarter       Func = "QUARTER"
	FnMonth         Func = "MONTH"
	FnWeek          Func = "WEEK"
	FnDayOfYear     Func = "DAYOFYEAR"
	FnDayOfMonth    Func = "DAYOFMONTH"
	FnDayOfWeek     Func = "DAYOFWEEK"
	FnHour          Func = "HOUR"
	FnMinute        Func = "MINUTE"
	FnSecond        Func = "SECOND"
	FnTimestampAdd  Func = "TIMESTAMPADD"
	FnTimestampDiff Func = "TIMESTAMPDIFF"
	FnFromUnixtime  Func = "FROM_UNIXTIME"
	FnUnixTimestamp Func = "UNIX_TIMESTAMP"
	FnToDate        Func = "TO_DATE"
	FnIsAlpha       Func = "IS_ALPHA"
	FnIsDigit       Func = "IS_DIGIT"
	FnIsDecimal     Func = "IS_DECIMAL"
	FnLocate        Func = "LOCATE"
	FnElt           Func = "ELT"
	FnURLEncode     Func = "URL_ENCODE"
	FnURLDecode     Func = "URL_DECODE"
	FnParseURL      Func = "PARSE_URL"
	FnCurrentDate   Func = "CURRENT_DATE"
	FnConvertTZ     Func = "CONVERT_TZ"
	FnFloorTime     Func = "FLOOR TO"
	FnCeilTime      Func = "CEIL TO"
	FnRegexpCount   Func = "REGEXP_COUNT"
	FnRegexpInstr   Func = "REGEXP_INSTR"
	FnRegexpSubstr  Func = "REGEXP_SUBSTR"
	FnSimilar       Func = "SIMILAR TO"
	FnOverlay       Func = "OVERLAY"
	FnJSONValue     Func = "JSON_VALUE"
	FnJSONExists    Func = "JSON_EXISTS"
	FnIsJSON        Func = "IS JSON"     // (STRING, STRING literal kind: VALUE, SCALAR, ARRAY, OBJECT)
	FnIsNotJSON     Func = "IS NOT JSON" // FALSE for NULL, as IS JSON

	// Structured types (bindnested.go). FnField: (ROW, INT literal field index), the field,
	// NULL when the row is. FnItem: (ARRAY, INT) the element at a 1-based index, NULL out of
	// range; (MAP, key of the key type) the value, NULL when absent. FnRow, FnArray, FnMap
	// construct a value from their arguments (FnMap's: key, value, key, value, ...; the
	// last of equal keys wins). FnCardinality: (ARRAY or MAP) INT. FnElement: (ARRAY) its
	// only element, NULL when empty, an error when it has more.
	FnField       Func = "FIELD"
	FnItem        Func = "ITEM"
	FnRow         Func = "ROW"
	FnArray       Func = "ARRAY"
	FnMap         Func = "MAP"
	FnCardinality Func = "CARDINALITY"
	FnElement     Func = "ELEMENT"

	// Collection functions (functions.go's rows say their types and NULLs).
	FnArrayContains Func = "ARRAY_CONTAINS"
	FnArrayDistinct Func = "ARRAY_DISTINCT"
	FnArrayPosition Func = "ARRAY_POSITION"
	FnArrayRemove   Func = "ARRAY_REMOVE"
	FnArrayReverse  Func = "ARRAY_REVERSE"
	FnMapKeys       Func = "MAP_KEYS"
	FnMapValues     Func = "MAP_VALUES"
	FnMapFromArrays Func = "MAP_FROM_ARRAYS"
	FnStrToMap      Func = "STR_TO_MAP"
	FnEncode        Func = "ENCODE"
	FnDecode        Func = "DECODE"
	FnUnhex         Func = "UNHEX"
	FnPrintf        Func = "PRINTF"
	FnJSONString    Func = "JSON_STRING"
	// FnJSONObject: (keepNulls BOOLEAN literal, key STRING literal, value, key, value, ...)
	// and FnJSONArray: (keepNulls, value, ...) build JSON text; a value that is itself
	// one of them is inserted as JSON, not as a string.
	// FnCurrentWatermark: (a time attribute) the watermark its operator has seen, NULL
	// before the first.
	FnCurrentWatermark Func = "CURRENT_WATERMARK"
	// FnProctime: the processing time (the clock) as TIMESTAMP_LTZ(3); a computed column
	// `proc AS PROCTIME()` makes it its table's time attribute.
	FnProctime Func = "PROCTIME"
	// FnJSONQuery: (json, path, wrapper, on empty, on error): the last three STRING
	// literals, "WITHOUT", "CONDITIONAL" or "UNCONDITIONAL", and "NULL", "EMPTY ARRAY",
	// "EMPTY OBJECT" or "ERROR".
	FnJSONQuery  Func = "JSON_QUERY"
	FnJSONObject Func = "JSON_OBJECT"
	FnJSONArray  Func = "JSON_ARRAY"
)

func (e *ColumnRef) Type() Type { return e.T }
func (e *Literal) Type() Type   { return e.T }
func (e *Call) Type() Type      { return e.T }
func (e *Cast) Type() Type      { return e.T }
func (e *Case) Type() Type      { return e.T }

func (e *ColumnRef) String() string { return fmt.Sprintf("$%d:%s", e.Index, e.Name) }

func (e *Literal) String() string {
	switch v := e.Value.(type) {
	case nil:
		return "NULL"
	case string:
		if e.T.Kind == Decimal {
			return v
		}
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	default:
		return fmt.Sprint(v)
	}
}

func (e *Call) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

// write appends e's text to b: one builder for a whole tree of calls, so printing a
// long chain (1+1+...+1) is linear, not quadratic.
func (e *Call) write(b *strings.Builder) {
	arg := func(i int) { writeExpr(b, e.Args[i]) }
	list := func(args []Expr, sep string) {
		for i, a := range args {
			if i > 0 {
				b.WriteString(sep)
			}
			writeExpr(b, a)
		}
	}
	switch e.Fn {
	case FnAdd, FnSub, FnMul, FnDiv, FnEq, FnNe, FnLt, FnLe, FnGt, FnGe, FnIsDistinct, FnIsNotDistinct:
		b.WriteByte('(')
		arg(0)
		b.WriteString(" " + string(e.Fn) + " ")
		arg(1)
		b.WriteByte(')')
		return
	case FnAnd, FnOr:
		b.WriteByte('(')
		list(e.Args, " "+string(e.Fn)+" ")
		b.WriteByte(')')
		return
	case FnIsNull, FnIsNotNull, FnIsTrue, FnIsNotTrue, FnIsFalse, FnIsNotFalse:
		b.WriteByte('(')
		arg(0)
		b.WriteString(" " + string(e.Fn) + ")")
		return
	case FnIn:
		b.WriteByte('(')
		arg(0)
		b.WriteString(" IN (")
		list(e.Args[1:], ", ")
		b.WriteString("))")
		return
	case FnLike, FnSimilar:
		op := " LIKE "
		if e.Fn == FnSimilar {
			op = " SIMILAR TO "
		}
		b.WriteByte('(')
		arg(0)
		b.WriteString(op)
		arg(1)
		b.WriteByte(')')
		return
	case FnField:
		if i, ok := e.Args[1].(*Literal); ok && len(e.Args) == 2 {
			if k, ok := i.Value.(int32); ok && int(k) < len(e.Args[0].Type().Fields()) {
				arg(0)
				b.WriteString("." + e.Args[0].Type().Fields()[k].Name)
				return
			}
		}
	case FnItem:
		arg(0)
		b.WriteByte('[')
		arg(1)
		b.WriteByte(']')
		return
	case FnArray, FnMap:
		b.WriteString(string(e.Fn) + "[")
		list(e.Args, ", ")
		b.WriteByte(']')
		return
	case FnFloorTime, FnCeilTime:
		if u, ok := e.Args[0].(*Literal); ok && len(e.Args) == 2 {
			name := "FLOOR"
			if e.Fn == FnCeilTime {
				name = "CEIL"
			}
			b.WriteString(name + "(")
			arg(1)
			fmt.Fprintf(b, " TO %v)", u.Value)
			return
		}
	}
	b.WriteString(string(e.Fn) + "(")
	list(e.Args, ", ")
	b.WriteByte(')')
}

func writeExpr(b *strings.Builder, x Expr) {
	if c, ok := x.(*Call); ok {
		c.write(b)
		return
	}
	b.WriteString(x.String())
}

func (e *Cast) String() string {
	name := "CAST"
	if e.Try {
		name = "TRY_CAST"
	}
	return fmt.Sprintf("%s(%s AS %s)", name, e.X, e.T.Nullable())
}

func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range e.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Result)
	}
	fmt.Fprintf(&b, " ELSE %s END", e.Else)
	return b.String()
}
