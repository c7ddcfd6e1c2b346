package expr

import (
	"cmp"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/planner"
)

var boolType = arrow.FixedWidthTypes.Boolean

// flip returns the operator with its operands swapped: s < a is a > s.
func flip(fn planner.Func) planner.Func {
	switch fn {
	case planner.FnLt:
		return planner.FnGt
	case planner.FnLe:
		return planner.FnGe
	case planner.FnGt:
		return planner.FnLt
	case planner.FnGe:
		return planner.FnLe
	}
	return fn
}

// cmpTable maps the sign of a three-way comparison (index sign+1) to the operator's result.
func cmpTable(fn planner.Func) [3]uint8 {
	switch fn {
	case planner.FnEq:
		return [3]uint8{0, 1, 0}
	case planner.FnNe:
		return [3]uint8{1, 0, 1}
	case planner.FnLt:
		return [3]uint8{1, 0, 0}
	case planner.FnLe:
		return [3]uint8{1, 1, 0}
	case planner.FnGt:
		return [3]uint8{0, 0, 1}
	}
	return [3]uint8{0, 1, 1}
}

func cmpKernel(fn planner.Func, ta, tb planner.Type) (kernelFn, error) {
	p := physOf(ta)
	if p != physOf(tb) || (p == physDec && ta.Scale != tb.Scale) {
		return nil, newError(ErrUnsupported, "cannot compare %s with %s", ta, tb)
	}
	switch p {
	case physI32:
		return ordCmp[int32](fn), nil
	case physI64:
		return ordCmp[int64](fn), nil
	case physF64:
		return ordCmp[float64](fn), nil
	case physDec:
		return boolOut(func(a, b datum, n int, out []byte) { decCmpLoop(fn, a, b, n, out) }), nil
	case physStr:
		return boolOut(func(a, b datum, n int, out []byte) { strCmpLoop(fn, a, b, n, out) }), nil
	case physBool:
		return boolOut(func(a, b datum, n int, out []byte) { boolCmpLoop(fn, a, b, n, out) }), nil
	}
	return func(*ctx, int, []datum) (datum, error) { return nullDatum(), nil }, nil
}

// boolOut wraps a loop writing a BOOLEAN bitmap over two operands; the result is NULL where
// either operand is.
func boolOut(loop func(a, b datum, n int, out []byte)) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		vbuf := andValidity(c.mem, n, args)
		buf, out := arrowbuf.AllocBits(c.mem, n)
		loop(args[0], args[1], n, out)
		return arrDatum(arrowbuf.NewArray(boolType, n, vbuf, buf, array.UnknownNullCount), true), nil
	}
}

func ordCmp[T int32 | int64 | float64](fn planner.Func) kernelFn {
	return boolOut(func(a, b datum, n int, out []byte) {
		switch {
		case a.arr != nil && b.arr != nil:
			cmpAA(fn, arrowbuf.Values[T](a.arr), arrowbuf.Values[T](b.arr), out)
		case a.arr != nil:
			cmpAS(fn, arrowbuf.Values[T](a.arr), scalarAs[T](b), out)
		default:
			cmpAS(flip(fn), arrowbuf.Values[T](b.arr), scalarAs[T](a), out)
		}
	})
}

// cmpAS packs a[i] op s into out, eight rows a byte.
func cmpAS[T cmp.Ordered](fn planner.Func, a []T, s T, out []byte) {
	n := len(a)
	switch fn {
	case planner.FnEq:
		for base := 0; base < n; base += 8 {
			var w byte
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v == s) << j
			}
			out[base>>3] = w
		}
	case planner.FnNe:
		for base := 0; base < n; base += 8 {
			var w byte
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v != s) << j
			}
			out[base>>3] = w
		}
	case planner.FnLt:
		for base := 0; base < n; base += 8 {
			var w byte
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v < s) << j
			}
			out[base>>3] = w
		}
	case planner.FnLe:
		for base := 0; base < n; base += 8 {
			var w byte
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v <= s) << j
			}
			out[base>>3] = w
		}
	case planner.FnGt:
		for base := 0; base < n; base += 8 {
			var w byte
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v > s) << j
			}
			out[base>>3] = w
		}
	default:
		for base := 0; base < n; base += 8 {
			var w byte
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v >= s) << j
			}
			out[base>>3] = w
		}
	}
}

// cmpAA packs a[i] op b[i] into out.
func cmpAA[T cmp.Ordered](fn planner.Func, a, b []T, out []byte) {
	n := len(a)
	b = b[:n]
	switch fn {
	case planner.FnEq:
		for base := 0; base < n; base += 8 {
			var w byte
			bb := b[base:min(base+8, n)]
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v == bb[j]) << j
			}
			out[base>>3] = w
		}
	case planner.FnNe:
		for base := 0; base < n; base += 8 {
			var w byte
			bb := b[base:min(base+8, n)]
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v != bb[j]) << j
			}
			out[base>>3] = w
		}
	case planner.FnLt:
		for base := 0; base < n; base += 8 {
			var w byte
			bb := b[base:min(base+8, n)]
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v < bb[j]) << j
			}
			out[base>>3] = w
		}
	case planner.FnLe:
		for base := 0; base < n; base += 8 {
			var w byte
			bb := b[base:min(base+8, n)]
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v <= bb[j]) << j
			}
			out[base>>3] = w
		}
	case planner.FnGt:
		for base := 0; base < n; base += 8 {
			var w byte
			bb := b[base:min(base+8, n)]
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v > bb[j]) << j
			}
			out[base>>3] = w
		}
	default:
		for base := 0; base < n; base += 8 {
			var w byte
			bb := b[base:min(base+8, n)]
			for j, v := range a[base:min(base+8, n)] {
				w |= b2u8(v >= bb[j]) << j
			}
			out[base>>3] = w
		}
	}
}

func decCmpLoop(fn planner.Func, a, b datum, n int, out []byte) {
	tbl := cmpTable(fn)
	var av, bv []dec
	if a.arr != nil {
		av = arrowbuf.Values[dec](a.arr)
	}
	if b.arr != nil {
		bv = arrowbuf.Values[dec](b.arr)
	}
	for i := 0; i < n; i++ {
		x, y := a.d, b.d
		if av != nil {
			x = av[i]
		}
		if bv != nil {
			y = bv[i]
		}
		out[i>>3] |= tbl[x.Cmp(y)+1] << (i & 7)
	}
}

func strCmpLoop(fn planner.Func, a, b datum, n int, out []byte) {
	tbl := cmpTable(fn)
	x, y := strColOf(a), strColOf(b)
	if fn == planner.FnEq || fn == planner.FnNe {
		want := fn == planner.FnEq
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u8((x.at(i) == y.at(i)) == want) << (i & 7)
		}
		return
	}
	for i := 0; i < n; i++ {
		out[i>>3] |= tbl[strings.Compare(x.at(i), y.at(i))+1] << (i & 7)
	}
}

// boolCmpLoop compares BOOLEANs (false < true) with bitwise operations.
func boolCmpLoop(fn planner.Func, a, b datum, n int, out []byte) {
	nb := len(out)
	av, bv := boolBytes(a, nb), boolBytes(b, nb)
	for i := 0; i < nb; i++ {
		x, y := av(i), bv(i)
		var r byte
		switch fn {
		case planner.FnEq:
			r = ^(x ^ y)
		case planner.FnNe:
			r = x ^ y
		case planner.FnLt:
			r = ^x & y
		case planner.FnLe:
			r = ^x | y
		case planner.FnGt:
			r = x &^ y
		default:
			r = x | ^y
		}
		out[i] = r
	}
}

// boolBytes returns a reader of byte i of a BOOLEAN datum's values (a scalar reads as 0x00
// or 0xff).
func boolBytes(d datum, nb int) func(int) byte {
	if d.arr == nil {
		var v byte
		if d.b {
			v = 0xff
		}
		return func(int) byte { return v }
	}
	bits, _ := boolBits(d.arr)
	return func(i int) byte { return bits[i] }
}
