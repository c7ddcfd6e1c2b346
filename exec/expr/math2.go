package expr

import (
	crand "crypto/rand"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// doubleFuncs are the DOUBLE -> DOUBLE functions, as Java's Math computes them.
var doubleFuncs = map[planner.Func]func(float64) float64{
	planner.FnLn: math.Log, planner.FnLog10: math.Log10, planner.FnLog2: math.Log2, planner.FnExp: math.Exp,
	planner.FnSin: math.Sin, planner.FnCos: math.Cos, planner.FnTan: math.Tan,
	planner.FnCot:  func(x float64) float64 { return 1 / math.Tan(x) },
	planner.FnAsin: math.Asin, planner.FnAcos: math.Acos, planner.FnAtan: math.Atan,
	planner.FnSinh: math.Sinh, planner.FnCosh: math.Cosh, planner.FnTanh: math.Tanh,
	planner.FnDegrees: func(x float64) float64 { return x * (180 / math.Pi) },
	planner.FnRadians: func(x float64) float64 { return x / 180 * math.Pi },
}

// doubleKernel applies one of doubleFuncs to a DOUBLE column.
func doubleKernel(fn planner.Func, argT []planner.Type) (kernelFn, error) {
	f, ok := doubleFuncs[fn]
	if !ok || argT[0].Kind != planner.Double {
		return nil, newError(ErrUnsupported, "%s does not take %s", fn, argT[0])
	}
	return unaryKernel(arrow.PrimitiveTypes.Float64, func(a, out []float64, _ []byte) error {
		for i := range a {
			out[i] = f(a[i])
		}
		return nil
	}), nil
}

// double2Kernel is a (DOUBLE, DOUBLE) -> DOUBLE function over every operand shape.
func double2Kernel(f func(a, b float64) float64) kernelFn {
	return binKernel(arrow.PrimitiveTypes.Float64, binLoops[float64]{
		aa: func(a, b, out []float64, _ []byte) error {
			for i := range a {
				out[i] = f(a[i], b[i])
			}
			return nil
		},
		as: func(a []float64, s float64, out []float64, _ []byte) error {
			for i := range a {
				out[i] = f(a[i], s)
			}
			return nil
		},
		sa: func(s float64, b, out []float64, _ []byte) error {
			for i := range b {
				out[i] = f(s, b[i])
			}
			return nil
		},
	})
}

// logKernel is LOG(x), the natural logarithm, or LOG(base, x).
func logKernel(argT []planner.Type) (kernelFn, error) {
	if len(argT) == 1 {
		return doubleKernel(planner.FnLn, argT)
	}
	return double2Kernel(func(base, x float64) float64 { return math.Log(x) / math.Log(base) }), nil
}

// signKernel is SIGN: -1, 0 or 1 in the argument's type (NaN stays NaN).
func signKernel(t planner.Type) (kernelFn, error) {
	dt := exec.ArrowType(t)
	switch t.Kind {
	case planner.Int:
		return unaryKernel(dt, func(a, out []int32, _ []byte) error {
			for i, v := range a {
				out[i] = int32(b2i(v > 0) - b2i(v < 0))
			}
			return nil
		}), nil
	case planner.BigInt:
		return unaryKernel(dt, func(a, out []int64, _ []byte) error {
			for i, v := range a {
				out[i] = int64(b2i(v > 0) - b2i(v < 0))
			}
			return nil
		}), nil
	case planner.Double:
		return unaryKernel(dt, func(a, out []float64, _ []byte) error {
			for i, v := range a {
				switch {
				case v > 0:
					out[i] = 1
				case v < 0:
					out[i] = -1
				default:
					out[i] = v // 0, -0 and NaN
				}
			}
			return nil
		}), nil
	case planner.Decimal:
		one, _ := decFromInt(1, 38, t.Scale)
		minus := one.Negate()
		return unaryKernel(dt, func(a, out []dec, _ []byte) error {
			for i, v := range a {
				switch v.Sign() {
				case 1:
					out[i] = one
				case -1:
					out[i] = minus
				default:
					out[i] = decZero
				}
			}
			return nil
		}), nil
	}
	return nil, newError(ErrUnsupported, "SIGN does not take %s", t)
}

// truncateKernel is TRUNCATE(x[, d]): x cut toward zero to d decimal places (d < 0 zeroes
// digits left of the point), in T.
func truncateKernel(ta, t planner.Type) (kernelFn, error) {
	return placesKernel(placeOps{"TRUNCATE", truncInt, truncFloat, truncDec}, ta, t, exec.ArrowType(t))
}

func truncInt(x, d int64) int64 {
	if d >= 0 {
		return x
	}
	if d < -18 {
		return 0
	}
	p := i64Pow[-d]
	return x / p * p
}

// truncFloat cuts x on its shortest decimal text, as Flink's BigDecimal arithmetic does, so
// that TRUNCATE(0.29, 2) is 0.29 and not 0.28.
func truncFloat(x float64, d int64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 || d > 300 {
		return x
	}
	if d < -308 {
		return math.Copysign(0, x)
	}
	if d < 0 {
		p := math.Pow(10, float64(-d))
		return math.Trunc(x/p) * p
	}
	if d < int64(len(f64Pow)) {
		// x·10^d cut toward zero is exact unless it lies next to an integer, where the
		// binary value may sit just below the decimal one (0.29·100 = 28.999...).
		if v := math.Abs(x) * f64Pow[d]; v < 1<<52 {
			if f := v - math.Floor(v); f > 1e-6 && f < 1-1e-6 {
				return math.Copysign(math.Floor(v)/f64Pow[d], x)
			}
		}
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-dot-1 > int(d) {
		s = s[:dot+1+int(d)]
	}
	f, _ := strconv.ParseFloat(strings.TrimSuffix(s, "."), 64)
	return f
}

// truncDec cuts x (scale s) to d places toward zero, then expresses it at t's scale.
func truncDec(x dec, s int, d int64, t planner.Type) (dec, bool) {
	if d >= int64(s) {
		return decRescale(x, s, t.Scale, t.Precision)
	}
	cut := s - int(max(d, -38))
	b := decBig(x)
	b.Quo(b, bigPow[min(cut, len(bigPow)-1)])
	// b is at scale s-cut = d; move it to t's scale.
	return bigDec(bigScale(b, t.Scale-(s-cut)), t.Precision)
}

// radixKernel formats BIGINT values as text: BIN (base 2) and HEX (base 16, upper case),
// negative numbers in two's complement, as Java's Long.toBinaryString and toHexString.
func radixKernel(base int) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		v := intColOf(args[0])
		return strRows(c, n, args, 8*n, func(i int, dst []byte) ([]byte, bool, error) {
			start := len(dst)
			dst = strconv.AppendUint(dst, uint64(v.at(i)), base)
			if base == 16 {
				for k := start; k < len(dst); k++ {
					if dst[k] >= 'a' {
						dst[k] -= 'a' - 'A'
					}
				}
			}
			return dst, true, nil
		})
	}
}

// hexStringKernel is HEX of a STRING: its UTF-8 bytes in upper-case hex.
func hexStringKernel(c *ctx, n int, args []datum) (datum, error) {
	s := strColOf(args[0])
	return strRows(c, n, args, 2*dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
		v := s.at(i)
		start := len(dst)
		dst = hex.AppendEncode(dst, []byte(v))
		for k := start; k < len(dst); k++ {
			if dst[k] >= 'a' {
				dst[k] -= 'a' - 'A'
			}
		}
		return dst, true, nil
	})
}

// randNode is RAND([seed]), RAND_INTEGER([seed, ] bound) and UUID(): a value per row, from
// a generator of the evaluator's own (seeded when the call gives a seed).
type randNode struct {
	fn    planner.Func
	r     *rand.Rand
	bound node // RAND_INTEGER's bound
}

func (cp *compiler) compileRand(e *planner.Call) (node, error) {
	nd := &randNode{fn: e.Fn}
	args := e.Args
	seeded := e.Fn == planner.FnRand && len(args) == 1 || e.Fn == planner.FnRandInteger && len(args) == 2
	if seeded {
		seed, err := cp.compile(args[0])
		if err != nil {
			return nil, err
		}
		d, ok := isConst(seed)
		if !ok {
			return nil, newError(ErrUnsupported, "%s needs a constant seed", e.Fn)
		}
		s := uint64(d.i)
		nd.r = rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
		args = args[1:]
	} else {
		nd.r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if e.Fn == planner.FnRandInteger {
		b, err := cp.compile(args[0])
		if err != nil {
			return nil, err
		}
		nd.bound = b
	}
	return nd, nil
}

func (nd *randNode) eval(c *ctx, b *batch) (datum, error) {
	n := b.n
	switch nd.fn {
	case planner.FnRand:
		buf, out := arrowbuf.AllocFixed[float64](c.mem, n)
		for i := range out {
			out[i] = nd.r.Float64()
		}
		return arrDatum(arrowbuf.NewArray(arrow.PrimitiveTypes.Float64, n, nil, buf, 0), true), nil
	case planner.FnUUID:
		raw := make([]byte, 16*n)
		if _, err := crand.Read(raw); err != nil {
			return datum{}, newError(ErrInvalidArgument, "UUID: %v", err)
		}
		sb := newStrBuilder(c.mem, n, 36*n)
		var text [36]byte
		for i := 0; i < n; i++ {
			u := raw[16*i : 16*i+16]
			u[6] = u[6]&0x0f | 0x40 // version 4
			u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
			hex.Encode(text[0:8], u[0:4])
			text[8] = '-'
			hex.Encode(text[9:13], u[4:6])
			text[13] = '-'
			hex.Encode(text[14:18], u[6:8])
			text[18] = '-'
			hex.Encode(text[19:23], u[8:10])
			text[23] = '-'
			hex.Encode(text[24:36], u[10:16])
			sb.appendString(string(text[:]))
			sb.endRow(i)
		}
		return arrDatum(sb.finish(nil), true), nil
	}
	bd, err := nd.bound.eval(c, b)
	if err != nil {
		return datum{}, err
	}
	defer bd.release()
	if bd.null {
		return nullDatum(), nil
	}
	bound := intColOf(bd)
	args := []datum{bd}
	return fixedRows(c, n, args, arrow.PrimitiveTypes.Int32, func(i int) (int32, bool, error) {
		k := bound.at(i)
		if k <= 0 {
			return 0, false, newError(ErrInvalidArgument, "RAND_INTEGER bound must be positive, got %d", k)
		}
		return int32(nd.r.Int64N(k)), true, nil
	})
}
