package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// literalDatum converts a planner literal to a scalar.
func literalDatum(e *planner.Literal) (datum, error) {
	if e.Value == nil || e.T.Kind == planner.Null {
		return nullDatum(), nil
	}
	bad := newError(ErrUnsupported, "literal %v (%T) is not a valid %s", e.Value, e.Value, e.T)
	switch e.T.Kind {
	case planner.Boolean:
		if v, ok := e.Value.(bool); ok {
			return datum{b: v}, nil
		}
	case planner.Int, planner.BigInt, planner.Date, planner.Timestamp, planner.TimestampLTZ,
		planner.IntervalDayTime, planner.IntervalYearMonth:
		switch v := e.Value.(type) {
		case int32:
			return datum{i: int64(v)}, nil
		case int64:
			return datum{i: v}, nil
		case int:
			return datum{i: int64(v)}, nil
		}
	case planner.Double:
		switch v := e.Value.(type) {
		case float64:
			return datum{f: v}, nil
		case int64:
			return datum{f: float64(v)}, nil
		case int32:
			return datum{f: float64(v)}, nil
		}
	case planner.Decimal:
		if v, ok := e.Value.(string); ok {
			if d, ok := parseDecimal(v, e.T.Precision, e.T.Scale); ok {
				return datum{d: d}, nil
			}
		}
	case planner.String:
		if v, ok := e.Value.(string); ok {
			return datum{s: v}, nil
		}
	}
	return datum{}, bad
}

// sameCastType reports whether a CAST between a and b changes nothing in the data.
func sameCastType(a, b planner.Type) bool {
	switch {
	case a.Kind != b.Kind:
		return false
	case a.Kind == planner.Decimal:
		return a.Precision == b.Precision && a.Scale == b.Scale
	}
	return true // VARCHAR(n) does not truncate; TIMESTAMP precisions share milliseconds
}

// castMayFail reports whether CAST (not TRY_CAST) from a to b can fail for some value.
func castMayFail(a, b planner.Type) bool {
	switch {
	case sameCastType(a, b) || a.Kind == planner.Null || b.Kind == planner.String:
		return false
	case a.Kind == planner.String || b.Kind == planner.Decimal:
		return true
	case b.Kind == planner.Int:
		return a.Kind == planner.BigInt || a.Kind == planner.Double || a.Kind == planner.Decimal
	case b.Kind == planner.BigInt:
		return a.Kind == planner.Double || a.Kind == planner.Decimal
	}
	return false
}

// castFail is what a failed conversion does: an error for CAST, NULL for TRY_CAST.
type castFail struct {
	try bool
	to  planner.Type
}

func (f castFail) fail(shown string) (bool, error) {
	if f.try {
		return false, nil
	}
	return false, newError(ErrCast, "cannot cast %s to %s", shown, f.to.Nullable())
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func castKernel(from, to planner.Type, try bool) (kernelFn, error) {
	if from.Kind == planner.Null {
		return func(*ctx, int, []datum) (datum, error) { return nullDatum(), nil }, nil
	}
	if sameCastType(from, to) {
		return identityKernel, nil
	}
	f := castFail{try: try, to: to}
	dt := exec.ArrowType(to)
	var k kernelFn
	switch to.Kind {
	case planner.String:
		k = castToString(from)
	case planner.Boolean:
		k = castToBool(from, f)
	case planner.Int:
		k = castToInt[int32](from, f, dt, math.MinInt32, math.MaxInt32)
	case planner.BigInt:
		k = castToInt[int64](from, f, dt, math.MinInt64, math.MaxInt64)
	case planner.Double:
		k = castToDouble(from, f, dt)
	case planner.Decimal:
		k = castToDecimal(from, f, to, dt)
	case planner.Timestamp, planner.TimestampLTZ, planner.Date:
		k = castToTemporal(from, f, to, dt)
	}
	if k == nil {
		return nil, newError(ErrUnsupported, "cannot cast %s to %s", from, to)
	}
	return k, nil
}

func castToString(from planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		var fmt func(i int, dst []byte) []byte
		switch from.Kind {
		case planner.Boolean:
			v, _ := boolBits(a.arr)
			fmt = func(i int, dst []byte) []byte {
				if bitAt(v, i) {
					return append(dst, "TRUE"...)
				}
				return append(dst, "FALSE"...)
			}
		case planner.Int, planner.BigInt:
			v := intColOf(a)
			fmt = func(i int, dst []byte) []byte { return strconv.AppendInt(dst, v.at(i), 10) }
		case planner.Double:
			v := vals[float64](a.arr)
			fmt = func(i int, dst []byte) []byte { return appendDouble(dst, v[i]) }
		case planner.Decimal:
			v := vals[dec](a.arr)
			fmt = func(i int, dst []byte) []byte { return appendDecimal(dst, v[i], from.Scale) }
		case planner.Timestamp, planner.TimestampLTZ:
			v := intColOf(a)
			ltz := from.Kind == planner.TimestampLTZ
			fmt = func(i int, dst []byte) []byte {
				w := v.at(i)
				if ltz {
					w = toWall(c.loc, w)
				}
				return appendTimestamp(dst, w, from.Precision)
			}
		case planner.Date:
			v := intColOf(a)
			fmt = func(i int, dst []byte) []byte { return appendDate(dst, v.at(i)) }
		case planner.IntervalDayTime:
			v := intColOf(a)
			fmt = func(i int, dst []byte) []byte { return appendDayTime(dst, v.at(i)) }
		case planner.IntervalYearMonth:
			v := intColOf(a)
			fmt = func(i int, dst []byte) []byte { return appendYearMonth(dst, v.at(i)) }
		default:
			return datum{}, newError(ErrUnsupported, "cannot cast %s to STRING", from)
		}
		return strRows(c, n, args, 12*n, func(i int, dst []byte) ([]byte, bool, error) {
			return fmt(i, dst), true, nil
		})
	}
}

// appendDouble formats f as Java's Double.toString: shortest round-trip digits, plain for
// 1e-3 <= |f| < 1e7 with at least one fractional digit (35.8, 100.0), else d.dddE±n.
func appendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
		if !strings.Contains(string(dst[start:]), ".") {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	e := strings.IndexByte(string(s), 'e')
	mant, exp := s[:e], s[e+1:]
	dst = append(dst, mant...)
	if !strings.Contains(string(mant), ".") {
		dst = append(dst, ".0"...)
	}
	dst = append(dst, 'E')
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = exp[1:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

// appendDayTime formats milliseconds as Flink prints INTERVAL DAY TO SECOND: +d hh:mm:ss.SSS.
func appendDayTime(dst []byte, ms int64) []byte {
	if ms < 0 {
		dst = append(dst, '-')
		ms = -ms
	} else {
		dst = append(dst, '+')
	}
	dst = strconv.AppendInt(dst, ms/msPerDay, 10)
	dst = append(dst, ' ')
	dst = pad(dst, ms/3600000%24, 2)
	dst = append(dst, ':')
	dst = pad(dst, ms/60000%60, 2)
	dst = append(dst, ':')
	dst = pad(dst, ms/1000%60, 2)
	dst = append(dst, '.')
	return pad(dst, ms%1000, 3)
}

// appendYearMonth formats months as Flink prints INTERVAL YEAR TO MONTH: +y-mm.
func appendYearMonth(dst []byte, m int64) []byte {
	if m < 0 {
		dst = append(dst, '-')
		m = -m
	} else {
		dst = append(dst, '+')
	}
	dst = strconv.AppendInt(dst, m/12, 10)
	dst = append(dst, '-')
	return pad(dst, m%12, 2)
}

// parseBool accepts Flink's spellings, case-insensitive: t true y yes 1, f false n no 0.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(trimSpaceASCII(s)) {
	case "t", "true", "y", "yes", "1":
		return true, true
	case "f", "false", "n", "no", "0":
		return false, true
	}
	return false, false
}

func castToBool(from planner.Type, f castFail) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		var conv func(i int) (bool, bool, error)
		switch from.Kind {
		case planner.Int, planner.BigInt:
			v := intColOf(a)
			conv = func(i int) (bool, bool, error) { return v.at(i) != 0, true, nil }
		case planner.Double:
			v := vals[float64](a.arr)
			conv = func(i int) (bool, bool, error) { return v[i] != 0, true, nil }
		case planner.Decimal:
			v := vals[dec](a.arr)
			conv = func(i int) (bool, bool, error) { return v[i] != decZero, true, nil }
		case planner.String:
			s := strColOf(a)
			conv = func(i int) (bool, bool, error) {
				if b, ok := parseBool(s.at(i)); ok {
					return b, true, nil
				}
				ok, err := f.fail(quote(s.at(i)))
				return false, ok, err
			}
		default:
			return datum{}, newError(ErrUnsupported, "cannot cast %s to BOOLEAN", from)
		}
		return boolRows(c, n, args, conv)
	}
}

// parseInt parses an integer as Flink does: surrounding whitespace, an optional sign,
// digits, and an optional fraction that is checked and dropped.
func parseInt(s string) (int64, bool) {
	s = trimSpaceASCII(s)
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	var v uint64
	digits := 0
	for ; i < len(s) && s[i] != '.'; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (1<<63)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
		if v > 1<<63 {
			return 0, false
		}
		digits++
	}
	if i < len(s) {
		for i++; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
		}
	}
	if digits == 0 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

func castToInt[T int32 | int64](from planner.Type, f castFail, dt arrow.DataType, lo, hi int64) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		var conv func(i int) (T, bool, error)
		inRange := func(v int64, shown func() string) (T, bool, error) {
			if v < lo || v > hi {
				ok, err := f.fail(shown())
				return 0, ok, err
			}
			return T(v), true, nil
		}
		switch from.Kind {
		case planner.Boolean:
			v, _ := boolBits(a.arr)
			conv = func(i int) (T, bool, error) { return T(b2i(bitAt(v, i))), true, nil }
		case planner.Int, planner.BigInt:
			if from.Kind == planner.Int && hi == math.MaxInt64 {
				return widen[int32, int64](c, n, a, dt), nil
			}
			v := intColOf(a)
			conv = func(i int) (T, bool, error) {
				return inRange(v.at(i), func() string { return strconv.FormatInt(v.at(i), 10) })
			}
		case planner.Double:
			v := vals[float64](a.arr)
			conv = func(i int) (T, bool, error) {
				x := math.Trunc(v[i])
				shown := func() string { return string(appendDouble(nil, v[i])) }
				if math.IsNaN(x) || x < float64(lo) || x >= -float64(lo) {
					ok, err := f.fail(shown())
					return 0, ok, err
				}
				return inRange(int64(x), shown)
			}
		case planner.Decimal:
			v := vals[dec](a.arr)
			conv = func(i int) (T, bool, error) {
				shown := func() string { return string(appendDecimal(nil, v[i], from.Scale)) }
				x, ok := decTrunc(v[i], from.Scale)
				if !ok {
					ok, err := f.fail(shown())
					return 0, ok, err
				}
				return inRange(x, shown)
			}
		case planner.String:
			s := strColOf(a)
			conv = func(i int) (T, bool, error) {
				x, ok := parseInt(s.at(i))
				if !ok {
					ok, err := f.fail(quote(s.at(i)))
					return 0, ok, err
				}
				return inRange(x, func() string { return quote(s.at(i)) })
			}
		default:
			return datum{}, newError(ErrUnsupported, "cannot cast %s to %s", from, f.to)
		}
		return fixedRows(c, n, args, dt, conv)
	}
}

// widen converts every value with a typed loop (no failure possible).
func widen[I int32 | int64, O int64 | float64](c *ctx, n int, a datum, dt arrow.DataType) datum {
	src := vals[I](a.arr)
	vbuf := andValidity(c.mem, n, []datum{a})
	buf, out := allocFixed[O](c.mem, n)
	for i := range out {
		out[i] = O(src[i])
	}
	return arrDatum(newArray(dt, n, vbuf, buf, -1), true)
}

func castToDouble(from planner.Type, f castFail, dt arrow.DataType) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		var conv func(i int) (float64, bool, error)
		switch from.Kind {
		case planner.Boolean:
			v, _ := boolBits(a.arr)
			conv = func(i int) (float64, bool, error) { return float64(b2i(bitAt(v, i))), true, nil }
		case planner.Int:
			return widen[int32, float64](c, n, a, dt), nil
		case planner.BigInt:
			return widen[int64, float64](c, n, a, dt), nil
		case planner.Decimal:
			v := vals[dec](a.arr)
			conv = func(i int) (float64, bool, error) { return decToFloat(v[i], from.Scale), true, nil }
		case planner.String:
			s := strColOf(a)
			conv = func(i int) (float64, bool, error) {
				t := trimSpaceASCII(s.at(i))
				x, err := strconv.ParseFloat(t, 64)
				if err != nil && !isRangeErr(err) || strings.ContainsAny(t, "_xXpP") {
					ok, err := f.fail(quote(s.at(i)))
					return 0, ok, err
				}
				return x, true, nil
			}
		default:
			return datum{}, newError(ErrUnsupported, "cannot cast %s to DOUBLE", from)
		}
		return fixedRows(c, n, args, dt, conv)
	}
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func castToDecimal(from planner.Type, f castFail, to planner.Type, dt arrow.DataType) kernelFn {
	p, s := to.Precision, to.Scale
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		var conv func(i int) (dec, bool, error)
		result := func(r dec, ok bool, shown func() string) (dec, bool, error) {
			if !ok {
				ok, err := f.fail(shown())
				return decZero, ok, err
			}
			return r, true, nil
		}
		switch from.Kind {
		case planner.Boolean:
			v, _ := boolBits(a.arr)
			conv = func(i int) (dec, bool, error) {
				r, ok := decFromInt(int64(b2i(bitAt(v, i))), p, s)
				return result(r, ok, func() string { return "TRUE" })
			}
		case planner.Int, planner.BigInt:
			v := intColOf(a)
			conv = func(i int) (dec, bool, error) {
				r, ok := decFromInt(v.at(i), p, s)
				return result(r, ok, func() string { return strconv.FormatInt(v.at(i), 10) })
			}
		case planner.Double:
			v := vals[float64](a.arr)
			conv = func(i int) (dec, bool, error) {
				r, ok := decFromFloat(v[i], p, s)
				return result(r, ok, func() string { return string(appendDouble(nil, v[i])) })
			}
		case planner.Decimal:
			v := vals[dec](a.arr)
			conv = func(i int) (dec, bool, error) {
				r, ok := decRescale(v[i], from.Scale, s, p)
				return result(r, ok, func() string { return string(appendDecimal(nil, v[i], from.Scale)) })
			}
		case planner.String:
			sv := strColOf(a)
			conv = func(i int) (dec, bool, error) {
				r, ok := parseDecimal(sv.at(i), p, s)
				return result(r, ok, func() string { return quote(sv.at(i)) })
			}
		default:
			return datum{}, newError(ErrUnsupported, "cannot cast %s to %s", from, to)
		}
		return fixedRows(c, n, args, dt, conv)
	}
}

// castToTemporal converts between STRING, TIMESTAMP, TIMESTAMP_LTZ and DATE, through the
// session zone where a TIMESTAMP_LTZ meets a wall clock.
func castToTemporal(from planner.Type, f castFail, to planner.Type, dt arrow.DataType) kernelFn {
	switch from.Kind {
	case planner.String, planner.Timestamp, planner.TimestampLTZ, planner.Date:
	default:
		return nil
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		// wall reads the source as a wall clock (ms).
		var wall func(i int) (int64, bool, error)
		if from.Kind == planner.String {
			s := strColOf(a)
			wall = func(i int) (int64, bool, error) {
				var w int64
				var ok bool
				if to.Kind == planner.Date {
					var d int64
					d, ok = parseDateText(s.at(i))
					w = d * msPerDay
				} else {
					w, ok = parseTimestampText(s.at(i))
				}
				if !ok {
					ok, err := f.fail(quote(s.at(i)))
					return 0, ok, err
				}
				return w, true, nil
			}
		} else {
			r := wallReader(c, from, a)
			wall = func(i int) (int64, bool, error) { w, _ := r(i); return w, true, nil }
		}
		if to.Kind == planner.Date {
			return fixedRows(c, n, args, dt, func(i int) (int32, bool, error) {
				w, ok, err := wall(i)
				return int32(floorDiv(w, msPerDay)), ok, err
			})
		}
		if to.Kind == planner.TimestampLTZ && from.Kind == planner.TimestampLTZ {
			return identityKernel(c, n, args)
		}
		return fixedRows(c, n, args, dt, func(i int) (int64, bool, error) {
			w, ok, err := wall(i)
			if to.Kind == planner.TimestampLTZ {
				w = fromWall(c.loc, w)
			}
			return w, ok, err
		})
	}
}
