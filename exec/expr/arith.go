package expr

import (
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

var errDivZero = newError(ErrDivisionByZero, "division by zero")

type number interface{ ~int32 | ~int64 | ~float64 }
type integer interface{ ~int32 | ~int64 }

// binLoops are the three shapes of a binary fixed-width kernel. valid is the bitmap of rows
// where both operands are non-NULL (nil: all), for loops that must skip NULL rows.
type binLoops[T any] struct {
	aa func(a, b, out []T, valid []byte) error
	as func(a []T, s T, out []T, valid []byte) error
	sa func(s T, b, out []T, valid []byte) error
}

// binKernel runs loops over two operands of type T into a result of type T (dt), writing
// into an owned operand's buffer when there is one.
func binKernel[T fixed](dt arrow.DataType, l binLoops[T]) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		a, b := args[0], args[1]
		vbuf := andValidity(c.mem, n, args)
		var valid []byte
		if vbuf != nil {
			valid = vbuf.Bytes()
		}
		buf, out := outFixed[T](c.mem, n, args)
		var err error
		switch {
		case a.arr != nil && b.arr != nil:
			err = l.aa(arrowbuf.Values[T](a.arr), arrowbuf.Values[T](b.arr), out, valid)
		case a.arr != nil:
			err = l.as(arrowbuf.Values[T](a.arr), scalarAs[T](b), out, valid)
		default:
			err = l.sa(scalarAs[T](a), arrowbuf.Values[T](b.arr), out, valid)
		}
		if err != nil {
			buf.Release()
			if vbuf != nil {
				vbuf.Release()
			}
			return datum{}, err
		}
		return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, array.UnknownNullCount), true), nil
	}
}

func arithKernel(fn planner.Func, ta, tb, t planner.Type) (kernelFn, error) {
	dt := exec.ArrowType(t)
	switch {
	case ta.Kind == tb.Kind && t.Kind == ta.Kind && ta.Kind == planner.Int:
		return intArith[int32](fn, dt), nil
	case ta.Kind == tb.Kind && t.Kind == ta.Kind && ta.Kind == planner.BigInt:
		return intArith[int64](fn, dt), nil
	case ta.Kind == tb.Kind && t.Kind == ta.Kind && ta.Kind == planner.Double:
		return floatArith(fn, dt), nil
	case ta.Kind == planner.Decimal && tb.Kind == planner.Decimal && t.Kind == planner.Decimal:
		return decArithKernel(fn, ta, tb, t), nil
	case (ta.IsTemporal() && (tb.Kind == planner.IntervalDayTime || tb.Kind == planner.IntervalYearMonth)) &&
		(fn == planner.FnAdd || fn == planner.FnSub):
		return temporalArith(fn, ta, tb, t)
	}
	return nil, newError(ErrUnsupported, "unsupported operands %s %s %s", ta, fn, tb)
}

func intArith[T integer](fn planner.Func, dt arrow.DataType) kernelFn {
	switch fn {
	case planner.FnAdd:
		return binKernel(dt, binLoops[T]{addAA[T], addAS[T], addSA[T]})
	case planner.FnSub:
		return binKernel(dt, binLoops[T]{subAA[T], subAS[T], subSA[T]})
	case planner.FnMul:
		return binKernel(dt, binLoops[T]{mulAA[T], mulAS[T], mulSA[T]})
	case planner.FnDiv:
		return binKernel(dt, binLoops[T]{idivAA[T], idivAS[T], idivSA[T]})
	default:
		return binKernel(dt, binLoops[T]{imodAA[T], imodAS[T], imodSA[T]})
	}
}

func floatArith(fn planner.Func, dt arrow.DataType) kernelFn {
	switch fn {
	case planner.FnAdd:
		return binKernel(dt, binLoops[float64]{addAA[float64], addAS[float64], addSA[float64]})
	case planner.FnSub:
		return binKernel(dt, binLoops[float64]{subAA[float64], subAS[float64], subSA[float64]})
	case planner.FnMul:
		return binKernel(dt, binLoops[float64]{mulAA[float64], mulAS[float64], mulSA[float64]})
	case planner.FnDiv:
		return binKernel(dt, binLoops[float64]{fdivAA, fdivAS, fdivSA})
	default:
		return binKernel(dt, binLoops[float64]{fmodAA, fmodAS, fmodSA})
	}
}

func addAA[T number](a, b, out []T, _ []byte) error {
	b, out = b[:len(a)], out[:len(a)]
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return nil
}

func addAS[T number](a []T, s T, out []T, _ []byte) error {
	out = out[:len(a)]
	for i := range a {
		out[i] = a[i] + s
	}
	return nil
}

func addSA[T number](s T, b, out []T, v []byte) error { return addAS(b, s, out, v) }

func subAA[T number](a, b, out []T, _ []byte) error {
	b, out = b[:len(a)], out[:len(a)]
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return nil
}

func subAS[T number](a []T, s T, out []T, _ []byte) error {
	out = out[:len(a)]
	for i := range a {
		out[i] = a[i] - s
	}
	return nil
}

func subSA[T number](s T, b, out []T, _ []byte) error {
	out = out[:len(b)]
	for i := range b {
		out[i] = s - b[i]
	}
	return nil
}

func mulAA[T number](a, b, out []T, _ []byte) error {
	b, out = b[:len(a)], out[:len(a)]
	for i := range a {
		out[i] = a[i] * b[i]
	}
	return nil
}

func mulAS[T number](a []T, s T, out []T, _ []byte) error {
	out = out[:len(a)]
	for i := range a {
		out[i] = a[i] * s
	}
	return nil
}

func mulSA[T number](s T, b, out []T, v []byte) error { return mulAS(b, s, out, v) }

// Integer division and MOD fail on a zero divisor of a row whose operands are both non-NULL.

func idivAA[T integer](a, b, out []T, valid []byte) error {
	b, out = b[:len(a)], out[:len(a)]
	for i := range a {
		d := b[i]
		if d == 0 {
			if valid == nil || bitAt(valid, i) {
				return errDivZero
			}
			out[i] = 0
			continue
		}
		out[i] = a[i] / d
	}
	return nil
}

func idivAS[T integer](a []T, s T, out []T, valid []byte) error {
	if s == 0 {
		return zeroDivisor(len(a), valid)
	}
	out = out[:len(a)]
	for i := range a {
		out[i] = a[i] / s
	}
	return nil
}

func idivSA[T integer](s T, b, out []T, valid []byte) error {
	out = out[:len(b)]
	for i := range b {
		d := b[i]
		if d == 0 {
			if valid == nil || bitAt(valid, i) {
				return errDivZero
			}
			out[i] = 0
			continue
		}
		out[i] = s / d
	}
	return nil
}

func imodAA[T integer](a, b, out []T, valid []byte) error {
	b, out = b[:len(a)], out[:len(a)]
	for i := range a {
		d := b[i]
		if d == 0 {
			if valid == nil || bitAt(valid, i) {
				return errDivZero
			}
			out[i] = 0
			continue
		}
		out[i] = a[i] % d
	}
	return nil
}

func imodAS[T integer](a []T, s T, out []T, valid []byte) error {
	if s == 0 {
		return zeroDivisor(len(a), valid)
	}
	out = out[:len(a)]
	for i := range a {
		out[i] = a[i] % s
	}
	return nil
}

func imodSA[T integer](s T, b, out []T, valid []byte) error {
	out = out[:len(b)]
	for i := range b {
		d := b[i]
		if d == 0 {
			if valid == nil || bitAt(valid, i) {
				return errDivZero
			}
			out[i] = 0
			continue
		}
		out[i] = s % d
	}
	return nil
}

// zeroDivisor fails when any of n rows is non-NULL.
func zeroDivisor(n int, valid []byte) error {
	for i := 0; i < n; i++ {
		if valid == nil || bitAt(valid, i) {
			return errDivZero
		}
	}
	return nil
}

func fdivAA(a, b, out []float64, _ []byte) error {
	b, out = b[:len(a)], out[:len(a)]
	for i := range a {
		out[i] = a[i] / b[i]
	}
	return nil
}

func fdivAS(a []float64, s float64, out []float64, _ []byte) error {
	out = out[:len(a)]
	for i := range a {
		out[i] = a[i] / s
	}
	return nil
}

func fdivSA(s float64, b, out []float64, _ []byte) error {
	out = out[:len(b)]
	for i := range b {
		out[i] = s / b[i]
	}
	return nil
}

func fmodAA(a, b, out []float64, _ []byte) error {
	b, out = b[:len(a)], out[:len(a)]
	for i := range a {
		out[i] = math.Mod(a[i], b[i])
	}
	return nil
}

func fmodAS(a []float64, s float64, out []float64, _ []byte) error {
	out = out[:len(a)]
	for i := range a {
		out[i] = math.Mod(a[i], s)
	}
	return nil
}

func fmodSA(s float64, b, out []float64, _ []byte) error {
	out = out[:len(b)]
	for i := range b {
		out[i] = math.Mod(s, b[i])
	}
	return nil
}

// decArithKernel computes DECIMAL arithmetic into the result type the planner chose.
func decArithKernel(fn planner.Func, ta, tb, t planner.Type) kernelFn {
	op := map[planner.Func]byte{planner.FnAdd: '+', planner.FnSub: '-', planner.FnMul: '*',
		planner.FnDiv: '/', planner.FnMod: '%'}[fn]
	sa, sb, p, s := ta.Scale, tb.Scale, t.Precision, t.Scale
	one := func(x, y dec) (dec, error) {
		r, ok, dz := decArith(op, x, sa, y, sb, p, s)
		if dz {
			return r, errDivZero
		}
		if !ok {
			return r, newError(ErrOverflow, "%s overflow", t.Nullable())
		}
		return r, nil
	}
	loops := binLoops[dec]{
		aa: func(a, b, out []dec, valid []byte) (err error) {
			for i := range a {
				if valid == nil || bitAt(valid, i) {
					if out[i], err = one(a[i], b[i]); err != nil {
						return err
					}
				}
			}
			return nil
		},
		as: func(a []dec, y dec, out []dec, valid []byte) (err error) {
			for i := range a {
				if valid == nil || bitAt(valid, i) {
					if out[i], err = one(a[i], y); err != nil {
						return err
					}
				}
			}
			return nil
		},
		sa: func(x dec, b, out []dec, valid []byte) (err error) {
			for i := range b {
				if valid == nil || bitAt(valid, i) {
					if out[i], err = one(x, b[i]); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	return binKernel(exec.ArrowType(t), loops)
}

// negKernel is unary minus: wrapping for INT and BIGINT, as Java.
func negKernel(ta, t planner.Type) (kernelFn, error) {
	dt := exec.ArrowType(t)
	switch physOf(ta) {
	case physI32:
		return unaryKernel(dt, func(a, out []int32, _ []byte) error { return negLoop(a, out) }), nil
	case physI64:
		return unaryKernel(dt, func(a, out []int64, _ []byte) error { return negLoop(a, out) }), nil
	case physF64:
		return unaryKernel(dt, func(a, out []float64, _ []byte) error { return negLoop(a, out) }), nil
	case physDec:
		return unaryKernel(dt, func(a, out []dec, _ []byte) error {
			for i := range a {
				out[i] = a[i].Negate()
			}
			return nil
		}), nil
	}
	return nil, newError(ErrUnsupported, "cannot negate %s", ta)
}

func negLoop[T number](a, out []T) error {
	out = out[:len(a)]
	for i := range a {
		out[i] = -a[i]
	}
	return nil
}

// unaryKernel maps a fixed-width array to one of the same width, keeping its validity
// (valid, nil when there are no nulls, for loops that must skip NULL rows).
func unaryKernel[T fixed](dt arrow.DataType, f func(a, out []T, valid []byte) error) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		vbuf := andValidity(c.mem, n, args[:1])
		var valid []byte
		if vbuf != nil {
			valid = vbuf.Bytes()
		}
		buf, out := outFixed[T](c.mem, n, args[:1])
		if err := f(arrowbuf.Values[T](args[0].arr), out, valid); err != nil {
			buf.Release()
			if vbuf != nil {
				vbuf.Release()
			}
			return datum{}, err
		}
		return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, array.UnknownNullCount), true), nil
	}
}
