package expr

import (
	"math"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// temporalArith is TIMESTAMP, TIMESTAMP_LTZ or DATE ± an interval. Day-time intervals are
// milliseconds; year-month intervals are calendar months on the wall clock (in the session
// zone for TIMESTAMP_LTZ), clamping the day.
func temporalArith(fn planner.Func, ta, tb, t planner.Type) (kernelFn, error) {
	dt := exec.ArrowType(t)
	sign := int64(1)
	if fn == planner.FnSub {
		sign = -1
	}
	switch {
	case ta.Kind != planner.Date && tb.Kind == planner.IntervalDayTime:
		return intArith[int64](fn, dt), nil
	case ta.Kind != planner.Date: // ± months
		ltz := ta.Kind == planner.TimestampLTZ
		return func(c *ctx, n int, args []datum) (datum, error) {
			ts, mo := intColOf(args[0]), intColOf(args[1])
			return fixedRows(c, n, args, dt, func(i int) (int64, bool, error) {
				if !ltz {
					return addMonths(ts.at(i), sign*mo.at(i)), true, nil
				}
				return fromWall(c.loc, addMonths(toWall(c.loc, ts.at(i)), sign*mo.at(i))), true, nil
			})
		}, nil
	}
	months := tb.Kind == planner.IntervalYearMonth
	toDate := t.Kind == planner.Date
	if !toDate && t.Kind != planner.Timestamp {
		return nil, newError(ErrUnsupported, "DATE %s %s gives DATE or TIMESTAMP, not %s", fn, tb, t)
	}
	wall := func(days, iv int64) int64 {
		if months {
			return addMonths(days*msPerDay, sign*iv)
		}
		return days*msPerDay + sign*iv
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		days, iv := intColOf(args[0]), intColOf(args[1])
		if toDate {
			return fixedRows(c, n, args, dt, func(i int) (int32, bool, error) {
				return int32(floorDiv(wall(days.at(i), iv.at(i)), msPerDay)), true, nil
			})
		}
		return fixedRows(c, n, args, dt, func(i int) (int64, bool, error) {
			return wall(days.at(i), iv.at(i)), true, nil
		})
	}, nil
}

// timeKernel compiles TO_TIMESTAMP, TO_TIMESTAMP_LTZ, DATE_FORMAT and EXTRACT.
func timeKernel(fn planner.Func, args []node, argT []planner.Type, t planner.Type) (kernelFn, bool, error) {
	dt := exec.ArrowType(t)
	switch fn {
	case planner.FnToTimestamp:
		for _, a := range argT {
			if a.Kind != planner.String && a.Kind != planner.Null {
				return nil, false, newError(ErrUnsupported, "TO_TIMESTAMP takes STRING arguments, got %s", a)
			}
		}
		pattern, err := constPattern(fn, args, 1)
		if err != nil {
			return nil, false, err
		}
		return toTimestampKernel(pattern, dt), true, nil
	case planner.FnToTimestampLTZ:
		return toTimestampLTZKernel(args, argT, dt)
	case planner.FnDateFormat:
		if !argT[0].IsTemporal() && argT[0].Kind != planner.String || argT[1].Kind != planner.String {
			return nil, false, newError(ErrUnsupported, "DATE_FORMAT takes a timestamp and a STRING, got %s, %s", argT[0], argT[1])
		}
		pattern, err := constPattern(fn, args, 1)
		if err != nil {
			return nil, false, err
		}
		return dateFormatKernel(argT[0], pattern), true, nil
	}
	return extractKernel(args, argT)
}

// constPattern compiles argument i when it is a constant pattern (nil otherwise: compiled
// per row, and a bad one gives NULL).
func constPattern(fn planner.Func, args []node, i int) (datePattern, error) {
	if i >= len(args) {
		return nil, nil
	}
	d, ok := isConst(args[i])
	if !ok || d.null {
		return nil, nil
	}
	dp, err := compileDatePattern(d.s)
	if err != nil {
		return nil, newError(ErrInvalidArgument, "%s: %v", fn, err)
	}
	return dp, nil
}

// patternCache compiles per-row patterns, reusing the last one.
type patternCache struct {
	text string
	dp   datePattern
	err  error
	set  bool
}

func (pc *patternCache) get(s string) (datePattern, error) {
	if !pc.set || s != pc.text {
		pc.text, pc.set = strings.Clone(s), true
		pc.dp, pc.err = compileDatePattern(s)
	}
	return pc.dp, pc.err
}

func toTimestampKernel(pattern datePattern, dt arrow.DataType) kernelFn {
	var cache patternCache
	return func(c *ctx, n int, args []datum) (datum, error) {
		s := strColOf(args[0])
		var fmtCol strCol
		perRow := len(args) > 1 && pattern == nil
		if perRow {
			fmtCol = strColOf(args[1])
		}
		return fixedRows(c, n, args, dt, func(i int) (int64, bool, error) {
			dp := pattern
			if perRow {
				var err error
				if dp, err = cache.get(fmtCol.at(i)); err != nil {
					return 0, false, nil
				}
			}
			if dp == nil {
				v, ok := parseTimestampText(s.at(i))
				return v, ok, nil
			}
			v, ok := dp.parse(s.at(i))
			return v, ok, nil
		})
	}
}

// toTimestampLTZKernel is TO_TIMESTAMP_LTZ(epoch, precision): seconds (0) or milliseconds (3).
func toTimestampLTZKernel(args []node, argT []planner.Type, dt arrow.DataType) (kernelFn, bool, error) {
	prec := int64(3)
	if len(args) > 1 {
		d, ok := isConst(args[1])
		if !ok || d.null || (d.i != 0 && d.i != 3) {
			return nil, false, newError(ErrUnsupported, "TO_TIMESTAMP_LTZ precision must be the literal 0 or 3")
		}
		prec = d.i
	}
	mult := int64(1)
	if prec == 0 {
		mult = 1000
	}
	switch argT[0].Kind {
	case planner.Int, planner.BigInt:
		return func(c *ctx, n int, a []datum) (datum, error) {
			v := intColOf(a[0])
			return fixedRows(c, n, a[:1], dt, func(i int) (int64, bool, error) { return v.at(i) * mult, true, nil })
		}, true, nil
	case planner.Double:
		return func(c *ctx, n int, a []datum) (datum, error) {
			v := arrowbuf.Values[float64](a[0].arr)
			return fixedRows(c, n, a[:1], dt, func(i int) (int64, bool, error) {
				f := v[i] * float64(mult)
				if math.IsNaN(f) || math.Abs(f) >= 1<<63 {
					return 0, false, nil
				}
				return int64(f), true, nil
			})
		}, true, nil
	case planner.Decimal:
		s := argT[0].Scale
		return func(c *ctx, n int, a []datum) (datum, error) {
			v := arrowbuf.Values[dec](a[0].arr)
			return fixedRows(c, n, a[:1], dt, func(i int) (int64, bool, error) {
				r, ok := decRescale(v[i], s, s-int(prec)+3, 0)
				if !ok {
					return 0, false, nil
				}
				ms, ok := decTrunc(r, s-int(prec)+3)
				return ms, ok, nil
			})
		}, true, nil
	}
	return nil, false, newError(ErrUnsupported, "TO_TIMESTAMP_LTZ does not take %s", argT[0])
}

func dateFormatKernel(ta planner.Type, pattern datePattern) kernelFn {
	var cache patternCache
	return func(c *ctx, n int, args []datum) (datum, error) {
		fmtCol := strColOf(args[1])
		wall := wallReader(c, ta, args[0])
		return strRows(c, n, args, 24*n, func(i int, dst []byte) ([]byte, bool, error) {
			dp := pattern
			if dp == nil {
				var err error
				if dp, err = cache.get(fmtCol.at(i)); err != nil {
					return dst, false, nil
				}
			}
			w, ok := wall(i)
			if !ok {
				return dst, false, nil
			}
			return dp.format(dst, w), true, nil
		})
	}
}

// wallReader reads a temporal (or timestamp text) datum as wall-clock milliseconds.
func wallReader(c *ctx, t planner.Type, d datum) func(i int) (int64, bool) {
	if t.Kind == planner.String {
		s := strColOf(d)
		return func(i int) (int64, bool) { return parseTimestampText(s.at(i)) }
	}
	v := intColOf(d)
	switch t.Kind {
	case planner.Date:
		return func(i int) (int64, bool) { return v.at(i) * msPerDay, true }
	case planner.Time: // the time of day of 1970-01-01
		unit := planner.TimeUnitMillis(t)
		return func(i int) (int64, bool) { return v.at(i) * unit, true }
	case planner.TimestampLTZ:
		return func(i int) (int64, bool) { return toWall(c.loc, v.at(i)), true }
	}
	return func(i int) (int64, bool) { return v.at(i), true }
}

// extractKernel is EXTRACT(unit FROM x) as BIGINT, on the wall clock (in the session zone
// for TIMESTAMP_LTZ; EPOCH of a TIMESTAMP_LTZ is its instant).
func extractKernel(args []node, argT []planner.Type) (kernelFn, bool, error) {
	u, ok := isConst(args[0])
	if !ok || u.null || argT[0].Kind != planner.String {
		return nil, false, newError(ErrUnsupported, "EXTRACT unit must be a literal")
	}
	unit := strings.ToUpper(u.s)
	if !validUnits[unit] {
		return nil, false, newError(ErrUnsupported, "unsupported EXTRACT unit %s", u.s)
	}
	tx := argT[1]
	if !tx.IsTemporal() && tx.Kind != planner.Time {
		return nil, false, newError(ErrUnsupported, "EXTRACT takes a TIMESTAMP, TIMESTAMP_LTZ, DATE or TIME, got %s", tx)
	}
	if unit == "EPOCH" && tx.Kind == planner.TimestampLTZ {
		tx = planner.TypeTS // an instant's epoch ignores the zone
	}
	return func(c *ctx, n int, a []datum) (datum, error) {
		wall := wallReader(c, tx, a[1])
		return fixedRows(c, n, a[1:], arrow.PrimitiveTypes.Int64, func(i int) (int64, bool, error) {
			w, _ := wall(i)
			return extract(unit, w), true, nil
		})
	}, true, nil
}

var validUnits = map[string]bool{"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true,
	"DAY": true, "HOUR": true, "MINUTE": true, "SECOND": true, "MILLISECOND": true, "DOW": true,
	"DOY": true, "EPOCH": true, "ISODOW": true, "ISOYEAR": true, "DECADE": true, "CENTURY": true,
	"MILLENNIUM": true, "MICROSECOND": true}

// extract returns a field of a wall clock.
func extract(unit string, w int64) int64 {
	days := floorDiv(w, msPerDay)
	tod := w - days*msPerDay
	switch unit {
	case "HOUR":
		return tod / 3600000
	case "MINUTE":
		return tod / 60000 % 60
	case "SECOND":
		return tod / 1000 % 60
	case "MILLISECOND":
		return tod % 1000
	case "MICROSECOND":
		return tod % 1000 * 1000
	case "EPOCH":
		return floorDiv(w, 1000)
	case "DOW":
		return floorMod(days+4, 7) + 1 // 1 = Sunday
	case "ISODOW":
		return floorMod(days+3, 7) + 1 // 1 = Monday
	case "WEEK", "ISOYEAR":
		thursday := days - floorMod(days+3, 7) + 3
		y, _, _ := civil(thursday)
		if unit == "ISOYEAR" {
			return int64(y)
		}
		return (thursday-daysFromCivil(y, 1, 1))/7 + 1
	}
	y, m, d := civil(days)
	switch unit {
	case "YEAR":
		return int64(y)
	case "QUARTER":
		return int64((m-1)/3 + 1)
	case "MONTH":
		return int64(m)
	case "DAY":
		return int64(d)
	case "DOY":
		return days - daysFromCivil(y, 1, 1) + 1
	case "DECADE":
		return floorDiv(int64(y), 10)
	case "CENTURY":
		if y > 0 {
			return int64((y + 99) / 100)
		}
		return -int64((-y + 99) / 100)
	}
	if y > 0 { // MILLENNIUM
		return int64((y + 999) / 1000)
	}
	return -int64((-y + 999) / 1000)
}
