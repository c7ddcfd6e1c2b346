package expr

import (
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

func mathKernel(fn planner.Func, argT []planner.Type, t planner.Type) (kernelFn, error) {
	dt := exec.ArrowType(t)
	ta := argT[0]
	bad := newError(ErrUnsupported, "%s does not take %s", fn, ta)
	switch fn {
	case planner.FnPower, planner.FnSqrt:
		for _, a := range argT {
			if a.Kind != planner.Double {
				return nil, bad
			}
		}
		if fn == planner.FnSqrt {
			return unaryKernel(dt, func(a, out []float64, _ []byte) error {
				for i := range a {
					out[i] = math.Sqrt(a[i])
				}
				return nil
			}), nil
		}
		return binKernel(dt, binLoops[float64]{
			aa: func(a, b, out []float64, _ []byte) error {
				for i := range a {
					out[i] = math.Pow(a[i], b[i])
				}
				return nil
			},
			as: func(a []float64, s float64, out []float64, _ []byte) error {
				for i := range a {
					out[i] = math.Pow(a[i], s)
				}
				return nil
			},
			sa: func(s float64, b, out []float64, _ []byte) error {
				for i := range b {
					out[i] = math.Pow(s, b[i])
				}
				return nil
			},
		}), nil
	case planner.FnRound:
		if len(argT) == 2 && argT[1].Kind != planner.Int && argT[1].Kind != planner.Null {
			return nil, newError(ErrUnsupported, "ROUND digits are %s, want INT", argT[1])
		}
		return roundKernel(ta, t, dt)
	}
	switch physOf(ta) {
	case physI32, physI64:
		if ta.Kind != planner.Int && ta.Kind != planner.BigInt {
			return nil, bad
		}
		if fn == planner.FnAbs {
			if ta.Kind == planner.Int {
				return unaryKernel(dt, absLoop[int32]), nil
			}
			return unaryKernel(dt, absLoop[int64]), nil
		}
		return identityKernel, nil // FLOOR and CEIL of an integer
	case physF64:
		f := map[planner.Func]func(float64) float64{planner.FnAbs: math.Abs, planner.FnFloor: math.Floor, planner.FnCeil: math.Ceil}[fn]
		return unaryKernel(dt, func(a, out []float64, _ []byte) error {
			for i := range a {
				out[i] = f(a[i])
			}
			return nil
		}), nil
	case physDec:
		if fn == planner.FnAbs {
			return unaryKernel(dt, func(a, out []dec, _ []byte) error {
				for i := range a {
					out[i] = a[i].Abs()
				}
				return nil
			}), nil
		}
		ceil, s, p := fn == planner.FnCeil, ta.Scale, t.Precision
		return unaryKernel(dt, func(a, out []dec, valid []byte) error {
			for i := range a {
				if valid != nil && !bitAt(valid, i) {
					continue
				}
				r, ok := decFloorCeil(a[i], s, ceil)
				if r, ok = decRescale(r, 0, t.Scale, p); !ok {
					return newError(ErrOverflow, "%s overflow", t.Nullable())
				}
				out[i] = r
			}
			return nil
		}), nil
	}
	return nil, bad
}

func identityKernel(_ *ctx, _ int, args []datum) (datum, error) {
	d := args[0]
	args[0] = datum{}
	return d, nil
}

func absLoop[T int32 | int64](a, out []T, _ []byte) error {
	for i := range a {
		v := a[i]
		if v < 0 {
			v = -v
		}
		out[i] = v
	}
	return nil
}

// roundKernel is ROUND(x[, d]): half away from zero, as Flink.
func roundKernel(ta, t planner.Type, dt arrow.DataType) (kernelFn, error) {
	return placesKernel(placeOps{"ROUND", roundInt, roundFloat, roundDec}, ta, t, dt)
}

// placeOps is a function of a number and a count of decimal places, by the number's
// type: ROUND and TRUNCATE.
type placeOps struct {
	name   string
	int    func(x, d int64) int64
	double func(x float64, d int64) float64
	dec    func(x dec, s int, d int64, t planner.Type) (dec, bool)
}

// placesKernel applies ops to x (of type ta) and d decimal places (default 0), in T.
func placesKernel(ops placeOps, ta, t planner.Type, dt arrow.DataType) (kernelFn, error) {
	switch ta.Kind {
	case planner.Int, planner.BigInt, planner.Double, planner.Decimal:
	default:
		return nil, newError(ErrUnsupported, "%s does not take %s", ops.name, ta)
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		digits := intCol{scalar: true}
		if len(args) > 1 {
			digits = intColOf(args[1])
		}
		x := args[0]
		if x.arr == nil { // a constant taken to the places of a column
			x = arrDatum(broadcast(c.mem, ta, exec.ArrowType(ta), x, n), true)
			defer x.release()
		}
		switch ta.Kind {
		case planner.Int:
			v := arrowbuf.Values[int32](x.arr)
			return fixedRows(c, n, args, dt, func(i int) (int32, bool, error) {
				return int32(ops.int(int64(v[i]), digits.at(i))), true, nil
			})
		case planner.BigInt:
			v := arrowbuf.Values[int64](x.arr)
			return fixedRows(c, n, args, dt, func(i int) (int64, bool, error) {
				return ops.int(v[i], digits.at(i)), true, nil
			})
		case planner.Double:
			v := arrowbuf.Values[float64](x.arr)
			return fixedRows(c, n, args, dt, func(i int) (float64, bool, error) {
				return ops.double(v[i], digits.at(i)), true, nil
			})
		}
		v := arrowbuf.Values[dec](x.arr)
		return fixedRows(c, n, args, dt, func(i int) (dec, bool, error) {
			r, ok := ops.dec(v[i], ta.Scale, digits.at(i), t)
			if !ok {
				return r, false, newError(ErrOverflow, "%s overflow", t.Nullable())
			}
			return r, true, nil
		})
	}, nil
}

func roundInt(x, d int64) int64 {
	if d >= 0 {
		return x
	}
	if d < -18 {
		return 0
	}
	p := i64Pow[-d]
	return divHalfUp(x, p) * p
}

// roundFloat rounds x to d decimal places half-up on its shortest decimal text, as Flink's
// BigDecimal.valueOf(x).setScale(d, HALF_UP).
func roundFloat(x float64, d int64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	ax := math.Abs(x)
	if d >= 0 && ax >= 1<<52 {
		return x
	}
	if d >= 0 && d < int64(len(f64Pow)) {
		s := ax * f64Pow[d]
		if s < 1<<52 {
			if f := s - math.Floor(s); math.Abs(f-0.5) > 1e-6 {
				return math.Copysign(math.Round(s)/f64Pow[d], x)
			}
		}
	}
	if d > 30 || d < -30 {
		return x
	}
	n, ok := decFromFloat(x, 38, int(d))
	if !ok {
		return x
	}
	if d >= 0 {
		return decToFloat(n, int(d))
	}
	return decToFloat(n, 0) * math.Pow(10, float64(-d))
}

// roundDec rounds x (scale s) to d places half-up, then expresses it at t's scale.
func roundDec(x dec, s int, d int64, t planner.Type) (dec, bool) {
	to := int(d)
	if d > int64(s) {
		to = s
	}
	if d < -38 {
		return decZero, true
	}
	r, ok := decRescale(x, s, to, 0)
	if !ok {
		return r, false
	}
	return decRescale(r, to, t.Scale, t.Precision)
}
