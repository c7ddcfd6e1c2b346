package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// sameCastType reports whether a CAST between a and b changes nothing in the data.
func sameCastType(a, b planner.Type) bool {
	switch {
	case a.IsNested() || b.IsNested():
		return arrow.TypeEqual(exec.ArrowType(a), exec.ArrowType(b))
	case a.Kind != b.Kind:
		return false
	case a.Kind == planner.Decimal:
		return a.Precision == b.Precision && a.Scale == b.Scale
	case a.Kind == planner.Time:
		// Same unit, and b keeps every fraction digit a has.
		return planner.TimeUnitMillis(a) == planner.TimeUnitMillis(b) && planner.TimeDigits(b) >= planner.TimeDigits(a)
	case a.Kind == planner.Timestamp || a.Kind == planner.TimestampLTZ:
		// Milliseconds either way; b keeps every digit a has, or all that are kept.
		return b.Precision >= min(a.Precision, 3)
	case a.Kind == planner.Binary:
		// Values of a fit b when b is unbounded, or bounded no shorter without padding.
		return !b.Fixed && (b.Length == 0 || a.Length > 0 && a.Length <= b.Length) || a.Nullable() == b.Nullable()
	}
	return true // VARCHAR(n) does not truncate
}

// castMayFail reports whether CAST (not TRY_CAST) from a to b can fail for some value.
func castMayFail(a, b planner.Type) bool {
	switch {
	case sameCastType(a, b) || a.Kind == planner.Null || b.Kind == planner.String:
		return false
	case a.IsNested():
		return true // a part may not convert
	case isSmall(a):
		return castMayFail(wideOf(a), b)
	case isSmall(b):
		return a.Kind != planner.Boolean
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
	if from.IsNested() {
		return castNested(from, to, try)
	}
	if from.Kind == planner.Binary || to.Kind == planner.Binary {
		if from.Kind != planner.String && from.Kind != planner.Binary || to.Kind != planner.String && to.Kind != planner.Binary {
			return nil, newError(ErrUnsupported, "cannot cast %s to %s", from, to)
		}
		return castBinary(from, to), nil
	}
	if k, err := castSmall(from, to, try); k != nil || err != nil {
		return k, err
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
	case planner.Time:
		k = castToTime(from, f, to, dt)
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
			v := arrowbuf.Values[float64](a.arr)
			fmt = func(i int, dst []byte) []byte { return appendDouble(dst, v[i]) }
		case planner.Decimal:
			v := arrowbuf.Values[dec](a.arr)
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
		case planner.Time:
			v, unit, digits := intColOf(a), planner.TimeUnitMillis(from), planner.TimeDigits(from)
			fmt = func(i int, dst []byte) []byte { return appendTime(dst, v.at(i)*unit, digits) }
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

func castToBool(from planner.Type, f castFail) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		var conv func(i int) (bool, bool, error)
		switch from.Kind {
		case planner.Int, planner.BigInt:
			v := intColOf(a)
			conv = func(i int) (bool, bool, error) { return v.at(i) != 0, true, nil }
		case planner.Double:
			v := arrowbuf.Values[float64](a.arr)
			conv = func(i int) (bool, bool, error) { return v[i] != 0, true, nil }
		case planner.Decimal:
			v := arrowbuf.Values[dec](a.arr)
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
			v := arrowbuf.Values[float64](a.arr)
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
			v := arrowbuf.Values[dec](a.arr)
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
			return parseInts[T](c, n, a, f, dt, lo, hi)
		default:
			return datum{}, newError(ErrUnsupported, "cannot cast %s to %s", from, f.to)
		}
		return fixedRows(c, n, args, dt, conv)
	}
}

// parseInts is CAST(STRING AS INT or BIGINT), a direct loop over the offsets.
func parseInts[T int32 | int64](c *ctx, n int, a datum, f castFail, dt arrow.DataType, lo, hi int64) (datum, error) {
	s := strColOf(a)
	vbuf, valid := writableValidity(c.mem, n, []datum{a})
	buf, out := arrowbuf.AllocFixed[T](c.mem, n)
	nulls := 0
	for i := range out {
		out[i] = 0
		if !bitAt(valid, i) {
			nulls++
			continue
		}
		v := s.at(i)
		x, ok := parseInt(v)
		if !ok || x < lo || x > hi {
			if _, err := f.fail(quote(v)); err != nil {
				vbuf.Release()
				buf.Release()
				return datum{}, err
			}
			clearBit(valid, i)
			nulls++
			continue
		}
		out[i] = T(x)
	}
	if nulls == 0 {
		vbuf.Release()
		vbuf = nil
	}
	return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, nulls), true), nil
}

// widen converts every value with a typed loop (no failure possible).
func widen[I int32 | int64, O int64 | float64](c *ctx, n int, a datum, dt arrow.DataType) datum {
	src := arrowbuf.Values[I](a.arr)
	vbuf := andValidity(c.mem, n, []datum{a})
	buf, out := arrowbuf.AllocFixed[O](c.mem, n)
	for i := range out {
		out[i] = O(src[i])
	}
	return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, -1), true)
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
			v := arrowbuf.Values[dec](a.arr)
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
			switch {
			case ok:
				return r, true, nil
			case from.Kind != planner.String:
				return decZero, false, nil // a number too large for the DECIMAL is NULL, as in Flink
			}
			ok, err := f.fail(shown())
			return decZero, ok, err
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
			if s == 0 && p >= 19 && v.v64 != nil {
				return widenToDecimal(c, n, args, v.v64, dt), nil
			}
			conv = func(i int) (dec, bool, error) {
				r, ok := decFromInt(v.at(i), p, s)
				return result(r, ok, func() string { return strconv.FormatInt(v.at(i), 10) })
			}
		case planner.Double:
			v := arrowbuf.Values[float64](a.arr)
			conv = func(i int) (dec, bool, error) {
				r, ok := decFromFloat(v[i], p, s)
				return result(r, ok, func() string { return string(appendDouble(nil, v[i])) })
			}
		case planner.Decimal:
			v := arrowbuf.Values[dec](a.arr)
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

// widenToDecimal casts BIGINT values to a DECIMAL of scale 0 and at least 19 digits,
// which holds every one: a loop with nothing to check (q1 of Nexmark casts each bid's
// price so).
func widenToDecimal(c *ctx, n int, args []datum, v []int64, dt arrow.DataType) datum {
	vbuf, valid := writableValidity(c.mem, n, args)
	buf, out := arrowbuf.AllocFixed[dec](c.mem, n)
	for i, x := range v[:n] {
		out[i] = decimal128.FromI64(x)
	}
	nulls := n - bitutil.CountSetBits(valid, 0, n)
	if nulls == 0 {
		vbuf.Release()
		vbuf = nil
	} else {
		for i := range out { // as fixedRows leaves them
			if !bitAt(valid, i) {
				out[i] = decZero
			}
		}
	}
	return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, nulls), true)
}

// castToTemporal converts between STRING, TIMESTAMP, TIMESTAMP_LTZ and DATE, through the
// session zone where a TIMESTAMP_LTZ meets a wall clock.
func castToTemporal(from planner.Type, f castFail, to planner.Type, dt arrow.DataType) kernelFn {
	switch from.Kind {
	case planner.String, planner.Timestamp, planner.TimestampLTZ, planner.Date:
	case planner.Time:
		if to.Kind == planner.Date {
			return nil
		}
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
		if to.Kind == planner.TimestampLTZ && from.Kind == planner.TimestampLTZ && to.Precision >= min(from.Precision, 3) {
			return identityKernel(c, n, args)
		}
		// A precision below milliseconds cuts the digits past it (zone offsets are
		// whole seconds, so the wall clock and the instant lose the same).
		p := to.Precision
		return fixedRows(c, n, args, dt, func(i int) (int64, bool, error) {
			w, ok, err := wall(i)
			if to.Kind == planner.TimestampLTZ {
				w = fromWall(c.loc, w)
			}
			return planner.TruncateMillis(w, p), ok, err
		})
	}
}

// castToTime converts STRING (H:m[:s[.fraction]]), TIMESTAMP, TIMESTAMP_LTZ (its wall
// clock in the session zone) and TIME to TIME(p): the time of day, truncated to the
// fraction digits p keeps.
func castToTime(from planner.Type, f castFail, to planner.Type, dt arrow.DataType) kernelFn {
	switch from.Kind {
	case planner.String, planner.Timestamp, planner.TimestampLTZ, planner.Time:
	default:
		return nil
	}
	unit, keep := planner.TimeUnitMillis(to), int64(1)
	for k := planner.TimeDigits(to); k < 3; k++ {
		keep *= 10
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		var wall func(i int) (int64, bool, error)
		if from.Kind == planner.String {
			s := strColOf(a)
			wall = func(i int) (int64, bool, error) {
				ms, _, ok := planner.ParseTimeOfDay(s.at(i))
				if !ok {
					ok, err := f.fail(quote(s.at(i)))
					return 0, ok, err
				}
				return ms, true, nil
			}
		} else {
			r := wallReader(c, from, a)
			wall = func(i int) (int64, bool, error) { w, _ := r(i); return w, true, nil }
		}
		return fixedRows(c, n, args, dt, func(i int) (int32, bool, error) {
			w, ok, err := wall(i)
			ms := floorMod(w, msPerDay)
			ms -= ms % keep
			return int32(ms / unit), ok, err
		})
	}
}
