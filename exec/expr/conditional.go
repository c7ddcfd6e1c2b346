package expr

import (
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// compileIf is IF(cond, a, b): a CASE, so that only the rows taking a branch evaluate it.
func (cp *compiler) compileIf(e *planner.Call) (node, error) {
	return cp.compileCase(&planner.Case{Whens: []planner.When{{Cond: e.Args[0], Result: e.Args[1]}}, Else: e.Args[2], T: e.T})
}

// compileTypeOf is TYPEOF(x [, force_serializable]): the type is known when compiling, so
// the argument is never evaluated; force_serializable is a constant (the planner checks).
func (cp *compiler) compileTypeOf(e *planner.Call) (node, error) {
	t := e.Args[0].Type()
	if len(e.Args) == 2 {
		l, ok := e.Args[1].(*planner.Literal)
		if !ok {
			return nil, newError(ErrUnsupported, "TYPEOF's force_serializable must be a constant")
		}
		if l.Value == true {
			return &constNode{d: datum{s: t.SerializableString()}}, nil
		}
	}
	return &constNode{d: datum{s: t.String()}}, nil
}

// extremeKernel is GREATEST (greatest) or LEAST over arguments of type t, NULL when any
// is NULL (the node is strict, so no argument is a NULL scalar).
func extremeKernel(greatest bool, t planner.Type) (kernelFn, error) {
	dt := exec.ArrowType(t)
	switch physOf(t) {
	case physI32:
		return extremeFixed(greatest, dt, func(a, b int32) bool { return a < b }), nil
	case physI64:
		return extremeFixed(greatest, dt, func(a, b int64) bool { return a < b }), nil
	case physF64:
		return extremeFixed(greatest, dt, func(a, b float64) bool { return a < b }), nil
	case physDec:
		return extremeFixed(greatest, dt, func(a, b dec) bool { return a.Less(b) }), nil
	case physStr:
		return extremeString(greatest), nil
	case physBool:
		return extremeBool(greatest), nil
	case physNull:
		return func(*ctx, int, []datum) (datum, error) { return nullDatum(), nil }, nil
	}
	return nil, newError(ErrUnsupported, "GREATEST and LEAST do not take %s", t)
}

func extremeFixed[T fixed](greatest bool, dt arrow.DataType, less func(a, b T) bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		vbuf := andValidity(c.mem, n, args)
		buf, out := arrowbuf.AllocFixed[T](c.mem, n)
		if a := args[0]; a.arr != nil {
			copy(out, arrowbuf.Values[T](a.arr))
		} else {
			s := scalarAs[T](a)
			for i := range out {
				out[i] = s
			}
		}
		for _, a := range args[1:] {
			if a.arr == nil {
				s := scalarAs[T](a)
				for i := range out {
					if less(out[i], s) == greatest && out[i] != s {
						out[i] = s
					}
				}
				continue
			}
			v := arrowbuf.Values[T](a.arr)
			for i := range out {
				if less(out[i], v[i]) == greatest && out[i] != v[i] {
					out[i] = v[i]
				}
			}
		}
		return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, array.UnknownNullCount), true), nil
	}
}

func extremeString(greatest bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		cols := make([]strCol, len(args))
		for i := range args {
			cols[i] = strColOf(args[i])
		}
		vbuf := andValidity(c.mem, n, args)
		var valid []byte
		if vbuf != nil {
			valid = vbuf.Bytes()
		}
		sb := newStrBuilder(c.mem, n, dataLen(args[0], n))
		for i := 0; i < n; i++ {
			if valid == nil || bitAt(valid, i) {
				best := cols[0].at(i)
				for k := 1; k < len(cols); k++ {
					if v := cols[k].at(i); (strings.Compare(v, best) > 0) == greatest && v != best {
						best = v
					}
				}
				sb.appendString(best)
			}
			sb.endRow(i)
		}
		return arrDatum(sb.finish(vbuf), true), nil
	}
}

// extremeBool: GREATEST of BOOLEANs is their OR, LEAST their AND (FALSE < TRUE).
func extremeBool(greatest bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		vbuf := andValidity(c.mem, n, args)
		buf, out := arrowbuf.AllocBits(c.mem, n)
		readers := make([]func(int) byte, len(args))
		for i, a := range args {
			readers[i] = boolBytes(a, len(out))
		}
		for k := range out {
			var v byte
			if !greatest {
				v = 0xff
			}
			for _, r := range readers {
				x := r(k)
				if greatest {
					v |= x
				} else {
					v &= x
				}
			}
			out[k] = v
		}
		return arrDatum(arrowbuf.NewArray(boolType, n, vbuf, buf, array.UnknownNullCount), true), nil
	}
}
