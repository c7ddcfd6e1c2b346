package expr

import (
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow/decimal128"
)

// DECIMAL values are unscaled 128-bit integers. The helpers below take an int64 fast path
// when operands fit (every DECIMAL of precision up to 18) and fall back to math/big.

type dec = decimal128.Num

var (
	bigTen  = big.NewInt(10)
	bigPow  [80]*big.Int // 10^i
	i64Pow  [19]int64    // 10^i
	decPow  [39]dec      // 10^i
	f64Pow  [23]float64  // exactly representable 10^i
	decZero dec
)

func init() {
	p := big.NewInt(1)
	for i := range bigPow {
		bigPow[i] = new(big.Int).Set(p)
		p.Mul(p, bigTen)
	}
	v := int64(1)
	for i := range i64Pow {
		i64Pow[i] = v
		v *= 10
	}
	for i := range decPow {
		decPow[i] = decimal128.GetScaleMultiplier(i)
	}
	f := 1.0
	for i := range f64Pow {
		f64Pow[i] = f
		f *= 10
	}
}

// decI64 returns n as an int64 when it fits.
func decI64(n dec) (int64, bool) {
	hi, lo := n.HighBits(), n.LowBits()
	if (hi == 0 && lo>>63 == 0) || (hi == -1 && lo>>63 == 1) {
		return int64(lo), true
	}
	return 0, false
}

func decBig(n dec) *big.Int {
	if v, ok := decI64(n); ok {
		return big.NewInt(v)
	}
	return n.BigInt()
}

// bigDec converts b to a dec when it fits in 127 bits and precision p (0: any).
func bigDec(b *big.Int, p int) (dec, bool) {
	if b.BitLen() > 127 {
		return decZero, false
	}
	if p > 0 && b.CmpAbs(bigPow[p]) >= 0 {
		return decZero, false
	}
	if b.IsInt64() {
		return decimal128.FromI64(b.Int64()), true
	}
	return decimal128.FromBigInt(b), true
}

// decFits reports whether |n| < 10^p (p <= 0: any).
func decFits(n dec, p int) bool {
	if p <= 0 {
		return true // no precision to check
	}
	if p >= 38 {
		p = 38
	}
	if v, ok := decI64(n); ok && p > 18 {
		return true
	} else if ok {
		return v < i64Pow[p] && v > -i64Pow[p]
	}
	if n.Sign() < 0 {
		return n.Greater(decPow[p].Negate())
	}
	return n.Less(decPow[p])
}

func mulI64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// divHalfUp divides with rounding half away from zero.
func divHalfUp(a, b int64) int64 {
	q, r := a/b, a%b
	if r < 0 {
		r = -r
	}
	ab := b
	if ab < 0 {
		ab = -ab
	}
	if r >= ab-r {
		if (a < 0) != (b < 0) {
			q--
		} else {
			q++
		}
	}
	return q
}

// bigDivHalfUp sets q to a/b rounded half away from zero.
func bigDivHalfUp(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() != 0 {
		r.Abs(r).Lsh(r, 1)
		if r.CmpAbs(b) >= 0 {
			if a.Sign()*b.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return q
}

// bigScale multiplies b by 10^delta, or divides rounding half-up when delta < 0.
func bigScale(b *big.Int, delta int) *big.Int {
	switch {
	case delta == 0:
		return b
	case delta > 0:
		return new(big.Int).Mul(b, bigPow[min(delta, len(bigPow)-1)])
	case -delta >= len(bigPow):
		return new(big.Int)
	}
	return bigDivHalfUp(b, bigPow[-delta])
}

// decRescale moves n from scale `from` to scale `to`, rounding half-up; it fails when the
// result does not fit precision p.
func decRescale(n dec, from, to, p int) (dec, bool) {
	delta := to - from
	if v, ok := decI64(n); ok {
		switch {
		case delta == 0:
			return n, decFits(n, p)
		case delta > 0 && delta <= 18:
			if r, ok := mulI64(v, i64Pow[delta]); ok {
				d := decimal128.FromI64(r)
				return d, decFits(d, p)
			}
		case delta < 0 && -delta <= 18:
			d := decimal128.FromI64(divHalfUp(v, i64Pow[-delta]))
			return d, decFits(d, p)
		}
	}
	return bigDec(bigScale(decBig(n), delta), p)
}

// decArith computes a op b for a at scale sa, b at scale sb, into precision p and scale s.
// ok is false on overflow; divZero on division or MOD by zero.
func decArith(op byte, a dec, sa int, b dec, sb int, p, s int) (r dec, ok, divZero bool) {
	if (op == '/' || op == '%') && b == decZero {
		return decZero, false, true
	}
	av, aok := decI64(a)
	bv, bok := decI64(b)
	if aok && bok {
		if r, ok := decArithI64(op, av, sa, bv, sb, s); ok {
			d := decimal128.FromI64(r)
			return d, decFits(d, p), false
		}
	}
	x, y := decBig(a), decBig(b)
	var out *big.Int
	switch op {
	case '+', '-', '%':
		c := max(sa, sb)
		x, y = bigScale(x, c-sa), bigScale(y, c-sb)
		switch op {
		case '+':
			out = x.Add(x, y)
		case '-':
			out = x.Sub(x, y)
		default:
			out = x.Rem(x, y)
		}
		out = bigScale(out, s-c)
	case '*':
		out = bigScale(x.Mul(x, y), s-sa-sb)
	case '/':
		k := sb + s - sa
		if k >= 0 {
			x = bigScale(x, k)
		} else {
			y = bigScale(y, -k)
		}
		out = bigDivHalfUp(x, y)
	}
	r, ok = bigDec(out, p)
	return r, ok, false
}

// decArithI64 is decArith on int64 operands; ok is false when an intermediate overflows.
func decArithI64(op byte, a int64, sa int, b int64, sb int, s int) (int64, bool) {
	scale := func(v int64, delta int) (int64, bool) {
		switch {
		case delta == 0:
			return v, true
		case delta > 0 && delta <= 18:
			return mulI64(v, i64Pow[delta])
		case delta < 0 && -delta <= 18:
			return divHalfUp(v, i64Pow[-delta]), true
		}
		return 0, false
	}
	var r int64
	switch op {
	case '+', '-', '%':
		c := max(sa, sb)
		x, ok1 := scale(a, c-sa)
		y, ok2 := scale(b, c-sb)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch op {
		case '+':
			r = x + y
			if (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
				return 0, false
			}
		case '-':
			r = x - y
			if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
				return 0, false
			}
		default:
			if y == -1 {
				r = 0
			} else {
				r = x % y
			}
		}
		return scale(r, s-c)
	case '*':
		m, ok := mulI64(a, b)
		if !ok {
			return 0, false
		}
		return scale(m, s-sa-sb)
	default: // '/'
		k := sb + s - sa
		x, y := a, b
		var ok bool
		if k >= 0 {
			x, ok = scale(a, k)
		} else {
			y, ok = scale(b, -k)
		}
		if !ok || y == 0 || (x == math.MinInt64 && y == -1) {
			return 0, false
		}
		return divHalfUp(x, y), true
	}
}

// parseDecimal parses text (surrounding whitespace allowed; sign, digits, point, exponent)
// into an unscaled value at scale s, rounding half-up; ok is false for bad text or overflow.
func parseDecimal(text string, p, s int) (dec, bool) {
	t := trimSpaceASCII(text)
	i := 0
	neg := false
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		neg = t[i] == '-'
		i++
	}
	var mant uint64
	var big_ *big.Int
	digits, frac, sawPoint := 0, 0, false
	for ; i < len(t); i++ {
		c := t[i]
		if c == '.' {
			if sawPoint {
				return decZero, false
			}
			sawPoint = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		if sawPoint {
			frac++
		}
		if big_ == nil && mant < (math.MaxUint64-9)/10 {
			mant = mant*10 + uint64(c-'0')
			continue
		}
		if big_ == nil {
			big_ = new(big.Int).SetUint64(mant)
		}
		big_.Mul(big_, bigTen).Add(big_, big.NewInt(int64(c-'0')))
	}
	if digits == 0 {
		return decZero, false
	}
	exp := 0
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		eneg := false
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			eneg = t[i] == '-'
			i++
		}
		ed := 0
		for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
			if exp < 10000 {
				exp = exp*10 + int(t[i]-'0')
			}
			ed++
		}
		if ed == 0 {
			return decZero, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(t) {
		return decZero, false
	}
	change := exp - frac + s
	if big_ == nil && mant <= math.MaxInt64 {
		v := int64(mant)
		if neg {
			v = -v
		}
		switch {
		case change >= 0 && change <= 18:
			if r, ok := mulI64(v, i64Pow[change]); ok {
				d := decimal128.FromI64(r)
				return d, decFits(d, p)
			}
		case change < 0 && -change <= 18:
			d := decimal128.FromI64(divHalfUp(v, i64Pow[-change]))
			return d, decFits(d, p)
		case change < -18:
			return decZero, true
		}
	}
	if big_ == nil {
		big_ = new(big.Int).SetUint64(mant)
	}
	if neg {
		big_.Neg(big_)
	}
	if change > 80 {
		return decZero, big_.Sign() == 0
	}
	return bigDec(bigScale(big_, change), p)
}

// appendDecimal appends n at scale s in plain notation, e.g. -0.50.
func appendDecimal(dst []byte, n dec, s int) []byte {
	var tmp [48]byte
	var digits []byte
	neg := n.Sign() < 0
	if v, ok := decI64(n); ok {
		u := uint64(v)
		if neg {
			u = uint64(-v)
		}
		digits = strconv.AppendUint(tmp[:0], u, 10)
	} else {
		b := n.BigInt()
		digits = b.Abs(b).Append(tmp[:0], 10)
	}
	if neg {
		dst = append(dst, '-')
	}
	if s <= 0 {
		return append(dst, digits...)
	}
	if len(digits) <= s {
		dst = append(dst, '0', '.')
		for k := len(digits); k < s; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-s]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-s:]...)
}

// decToFloat converts n at scale s to the nearest DOUBLE.
func decToFloat(n dec, s int) float64 {
	if v, ok := decI64(n); ok && v < 1<<53 && v > -(1<<53) && s >= 0 && s < len(f64Pow) {
		return float64(v) / f64Pow[s]
	}
	var buf [64]byte
	f, _ := strconv.ParseFloat(string(appendDecimal(buf[:0], n, s)), 64)
	return f
}

// decFromFloat converts f to precision p and scale s, from its shortest decimal text
// (as Java's BigDecimal.valueOf), rounding half-up.
func decFromFloat(f float64, p, s int) (dec, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return decZero, false
	}
	var buf [32]byte
	return parseDecimal(string(strconv.AppendFloat(buf[:0], f, 'e', -1, 64)), p, s)
}

// decFromInt converts v to precision p and scale s.
func decFromInt(v int64, p, s int) (dec, bool) {
	if s <= 18 {
		if r, ok := mulI64(v, i64Pow[s]); ok {
			d := decimal128.FromI64(r)
			return d, decFits(d, p)
		}
	}
	return bigDec(bigScale(big.NewInt(v), s), p)
}

// decTrunc returns n at scale s truncated toward zero to an integer; ok is false when it
// does not fit an int64.
func decTrunc(n dec, s int) (int64, bool) {
	if v, ok := decI64(n); ok {
		if s <= 18 {
			return v / i64Pow[s], true
		}
		return 0, true
	}
	b := decBig(n)
	if s > 0 {
		b.Quo(b, bigPow[min(s, len(bigPow)-1)])
	}
	if !b.IsInt64() {
		return 0, false
	}
	return b.Int64(), true
}

// decFloorCeil rounds n at scale s to an integer (scale 0), down or up.
func decFloorCeil(n dec, s int, ceil bool) (dec, bool) {
	if s == 0 {
		return n, true
	}
	if v, ok := decI64(n); ok && s <= 18 {
		q, r := v/i64Pow[s], v%i64Pow[s]
		if r < 0 && !ceil {
			q--
		} else if r > 0 && ceil {
			q++
		}
		return decimal128.FromI64(q), true
	}
	b := decBig(n)
	q, m := new(big.Int).DivMod(b, bigPow[min(s, len(bigPow)-1)], new(big.Int)) // floor division
	if ceil && m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return bigDec(q, 0)
}

func trimSpaceASCII(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
