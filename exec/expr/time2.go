package expr

import (
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// extractUnits maps YEAR(x), MONTH(x), ... to the EXTRACT unit they are.
var extractUnits = map[planner.Func]string{
	planner.FnYear: "YEAR", planner.FnQuarter: "QUARTER", planner.FnMonth: "MONTH", planner.FnWeek: "WEEK",
	planner.FnDayOfYear: "DOY", planner.FnDayOfMonth: "DAY", planner.FnDayOfWeek: "DOW",
	planner.FnHour: "HOUR", planner.FnMinute: "MINUTE", planner.FnSecond: "SECOND",
}

func strLit(s string) *planner.Literal {
	return &planner.Literal{Value: s, T: planner.Type{Kind: planner.String, NotNull: true}}
}

// compileExtractAs compiles YEAR(x) and its kin as EXTRACT(unit FROM x).
func (cp *compiler) compileExtractAs(e *planner.Call) (node, error) {
	return cp.compileCall(&planner.Call{Fn: planner.FnExtract, Args: []planner.Expr{strLit(extractUnits[e.Fn]), e.Args[0]}, T: e.T})
}

// compileFromUnixtime is FROM_UNIXTIME(seconds[, format]): DATE_FORMAT of the instant, in
// the session time zone.
func (cp *compiler) compileFromUnixtime(e *planner.Call) (node, error) {
	ts := &planner.Call{Fn: planner.FnToTimestampLTZ, T: planner.Type{Kind: planner.TimestampLTZ, Precision: 3, NotNull: e.Args[0].Type().NotNull},
		Args: []planner.Expr{e.Args[0], &planner.Literal{Value: int32(0), T: planner.Type{Kind: planner.Int, NotNull: true}}}}
	var format planner.Expr = strLit("yyyy-MM-dd HH:mm:ss")
	if len(e.Args) > 1 {
		format = e.Args[1]
	}
	return cp.compileCall(&planner.Call{Fn: planner.FnDateFormat, Args: []planner.Expr{ts, format}, T: e.T})
}

// unitMillis are the TIMESTAMPADD and TIMESTAMPDIFF units of fixed length; the others
// (MONTH, QUARTER, YEAR) count calendar months.
var unitMillis = map[string]int64{"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60000, "HOUR": 3600000,
	"DAY": msPerDay, "WEEK": 7 * msPerDay}

var unitMonths = map[string]int64{"MONTH": 1, "QUARTER": 3, "YEAR": 12}

func constUnit(args []node, name string) (string, error) {
	d, ok := isConst(args[0])
	if !ok || d.null {
		return "", newError(ErrUnsupported, "%s unit must be a literal", name)
	}
	if _, ok := unitMillis[d.s]; !ok && unitMonths[d.s] == 0 {
		return "", newError(ErrUnsupported, "%s does not know the unit %s", name, d.s)
	}
	return d.s, nil
}

// timestampAddKernel is TIMESTAMPADD(unit, n, t): t moved by n units, months on the wall
// clock (in the session zone for TIMESTAMP_LTZ) with the day clamped to the month's end.
func timestampAddKernel(args []node, argT []planner.Type, t planner.Type) (kernelFn, error) {
	unit, err := constUnit(args, "TIMESTAMPADD")
	if err != nil {
		return nil, err
	}
	tx := argT[2]
	dt := exec.ArrowType(t)
	ms, months := unitMillis[unit], unitMonths[unit]
	// Past ±292 million years in milliseconds (or ±10 million years in months) the result
	// does not fit: an error, as Flink's overflow is.
	const maxMonths = 120_000_000
	overflow := newError(ErrOverflow, "TIMESTAMPADD result out of range")
	move := func(c *ctx, w, k int64) (int64, error) { // w: a wall clock, or an instant for TIMESTAMP_LTZ and ms units
		if months == 0 {
			d, ok := mulI64(k, ms)
			if !ok || (d > 0 && w > math.MaxInt64-d) || (d < 0 && w < math.MinInt64-d) {
				return 0, overflow
			}
			return w + d, nil
		}
		if k > maxMonths || k < -maxMonths {
			return 0, overflow
		}
		if tx.Kind == planner.TimestampLTZ {
			return fromWall(c.loc, addMonths(toWall(c.loc, w), k*months)), nil
		}
		return addMonths(w, k*months), nil
	}
	return func(c *ctx, n int, a []datum) (datum, error) {
		k, x := intColOf(a[1]), intColOf(a[2])
		if tx.Kind == planner.Date && t.Kind == planner.Date {
			return fixedRows(c, n, a[1:], dt, func(i int) (int32, bool, error) {
				w, err := move(c, x.at(i)*msPerDay, k.at(i))
				return int32(floorDiv(w, msPerDay)), err == nil, err
			})
		}
		scale := int64(1)
		if tx.Kind == planner.Date {
			scale = msPerDay
		}
		return fixedRows(c, n, a[1:], dt, func(i int) (int64, bool, error) {
			w, err := move(c, x.at(i)*scale, k.at(i))
			return w, err == nil, err
		})
	}, nil
}

// timestampDiffKernel is TIMESTAMPDIFF(unit, t1, t2): the whole units from t1 to t2,
// truncated toward zero; months compare the wall clocks' day and time within the month.
func timestampDiffKernel(args []node, argT []planner.Type) (kernelFn, error) {
	unit, err := constUnit(args, "TIMESTAMPDIFF")
	if err != nil {
		return nil, err
	}
	ms, months := unitMillis[unit], unitMonths[unit]
	// Two instants differ by the same milliseconds in every zone.
	instants := argT[1].Kind == planner.TimestampLTZ && argT[2].Kind == planner.TimestampLTZ && months == 0
	return func(c *ctx, n int, a []datum) (datum, error) {
		r1, r2 := wallReader(c, argT[1], a[1]), wallReader(c, argT[2], a[2])
		if instants {
			x, y := intColOf(a[1]), intColOf(a[2])
			r1 = func(i int) (int64, bool) { return x.at(i), true }
			r2 = func(i int) (int64, bool) { return y.at(i), true }
		}
		return fixedRows(c, n, a[1:], arrow.PrimitiveTypes.Int32, func(i int) (int32, bool, error) {
			w1, _ := r1(i)
			w2, _ := r2(i)
			if months == 0 {
				return int32((w2 - w1) / ms), true, nil
			}
			return int32(monthsBetween(w1, w2) / months), true, nil
		})
	}, nil
}

// monthsBetween counts the whole calendar months from wall clock a to b.
func monthsBetween(a, b int64) int64 {
	ya, ma, da := civil(floorDiv(a, msPerDay))
	yb, mb, db := civil(floorDiv(b, msPerDay))
	m := int64((yb*12 + mb) - (ya*12 + ma))
	// The position within the month: day, then time of day.
	pa := int64(da)*msPerDay + floorMod(a, msPerDay)
	pb := int64(db)*msPerDay + floorMod(b, msPerDay)
	switch {
	case m > 0 && pb < pa:
		m--
	case m < 0 && pb > pa:
		m++
	}
	return m
}

// unixTimestampKernel is UNIX_TIMESTAMP(text[, format]): the text read as a wall clock in
// the session zone, in epoch seconds; text that does not parse gives Long.MIN_VALUE, as
// Flink.
func unixTimestampKernel(args []node) (kernelFn, error) {
	pattern, err := constPattern(planner.FnUnixTimestamp, args, 1)
	if err != nil {
		return nil, err
	}
	parse := toTimestampKernel(pattern, exec.ArrowType(planner.TypeTS))
	return func(c *ctx, n int, a []datum) (datum, error) {
		d, err := parse(c, n, a)
		if err != nil {
			return datum{}, err
		}
		defer d.release()
		w := intColOf(d)
		return fixedRows(c, n, a, arrow.PrimitiveTypes.Int64, func(i int) (int64, bool, error) {
			if d.arr.IsNull(i) {
				return math.MinInt64, true, nil
			}
			return floorDiv(fromWall(c.loc, w.at(i)), 1000), true, nil
		})
	}, nil
}

// compileUnixTimestamp is UNIX_TIMESTAMP(), the clock's epoch seconds, or the kernel of
// UNIX_TIMESTAMP(text[, format]).
func (cp *compiler) compileUnixTimestamp(e *planner.Call) (node, error) {
	if len(e.Args) == 0 {
		return unixNowNode{}, nil
	}
	args, argT, err := cp.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	fn, err := unixTimestampKernel(args)
	if err != nil {
		return nil, err
	}
	return cp.call(string(e.Fn), args, argT, e.T, true, fn)
}

type unixNowNode struct{}

func (unixNowNode) eval(c *ctx, _ *batch) (datum, error) {
	return datum{i: floorDiv(c.now(), 1000)}, nil
}

// toDateKernel is TO_DATE(text[, format]): the date of the text (format default
// 'yyyy-MM-dd'); NULL when it does not parse.
func toDateKernel(args []node) (kernelFn, error) {
	pattern, err := constPattern(planner.FnToDate, args, 1)
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		if pattern, err = compileDatePattern("yyyy-MM-dd"); err != nil {
			return nil, err
		}
	}
	parse := toTimestampKernel(pattern, exec.ArrowType(planner.TypeTS))
	return func(c *ctx, n int, a []datum) (datum, error) {
		d, err := parse(c, n, a)
		if err != nil {
			return datum{}, err
		}
		defer d.release()
		w := intColOf(d)
		return fixedRows(c, n, []datum{d}, arrow.FixedWidthTypes.Date32, func(i int) (int32, bool, error) {
			return int32(floorDiv(w.at(i), msPerDay)), true, nil
		})
	}, nil
}

// floorTimeKernel is FLOOR(x TO unit) (or CEIL, ceil): x down (up) to a whole unit of its
// wall clock, in the session zone for TIMESTAMP_LTZ; months, quarters and years start on the
// first of January, April, July and October.
func floorTimeKernel(args []node, argT []planner.Type, ceil bool) (kernelFn, error) {
	d, ok := isConst(args[0])
	ms, months := unitMillis[d.s], unitMonths[d.s]
	if !ok || d.null || ms == 0 && months == 0 {
		return nil, newError(ErrUnsupported, "FLOOR and CEIL take a literal time unit, got %v", d.s)
	}
	tx := argT[1]
	round := func(w int64) int64 {
		var f int64
		if months == 0 {
			f = floorDiv(w, ms) * ms
		} else {
			y, m, _ := civil(floorDiv(w, msPerDay))
			f = daysFromCivil(y, int((int64(m)-1)/months*months)+1, 1) * msPerDay
		}
		if ceil && f != w {
			if months == 0 {
				return f + ms
			}
			return addMonths(f, months)
		}
		return f
	}
	dt := exec.ArrowType(tx)
	return func(c *ctx, n int, a []datum) (datum, error) {
		x := intColOf(a[1])
		switch tx.Kind {
		case planner.Date:
			return fixedRows(c, n, a[1:], dt, func(i int) (int32, bool, error) {
				return int32(floorDiv(round(x.at(i)*msPerDay), msPerDay)), true, nil
			})
		case planner.TimestampLTZ:
			return fixedRows(c, n, a[1:], dt, func(i int) (int64, bool, error) {
				return fromWall(c.loc, round(toWall(c.loc, x.at(i)))), true, nil
			})
		}
		return fixedRows(c, n, a[1:], dt, func(i int) (int64, bool, error) { return round(x.at(i)), true, nil })
	}, nil
}
