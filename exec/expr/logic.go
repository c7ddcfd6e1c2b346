package expr

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// logicNode is AND (or OR) of two or more BOOLEANs with three-valued logic. Like Flink it
// short-circuits: an argument that may fail is evaluated only on rows not yet decided
// (FALSE for AND, TRUE for OR).
type logicNode struct {
	or        bool
	args      []lazyArg
	all, iota []int32
}

func (cp *compiler) compileLogic(e *planner.Call) (node, error) {
	nd := &logicNode{or: e.Fn == planner.FnOr}
	for _, a := range e.Args {
		if k := a.Type().Kind; k != planner.Boolean && k != planner.Null {
			return nil, newError(ErrUnsupported, "%s argument %s is %s, want BOOLEAN", e.Fn, a, a.Type())
		}
		la, err := cp.lazyArg(a)
		if err != nil {
			return nil, err
		}
		nd.args = append(nd.args, la)
	}
	return nd, nil
}

func (nd *logicNode) eval(c *ctx, b *batch) (datum, error) {
	acc, err := nd.args[0].nd.eval(c, b)
	if err != nil {
		return datum{}, err
	}
	for k := 1; k < len(nd.args); k++ {
		if acc.arr == nil && !acc.null && acc.b == nd.or {
			return acc, nil // decided for every row
		}
		var next datum
		if nd.args[k].fail && acc.arr != nil {
			open := undecided(acc, nd.or, allRows(&nd.all, b.n))
			if len(open) == 0 {
				break
			}
			d, compact, err := nd.args[k].evalPart(c, b, open)
			if err != nil {
				acc.release()
				return datum{}, err
			}
			next, _ = assemble(c, planner.TypeBoolean, boolType, b.n, []part{{d: d, rows: open, idx: compactIdx(&nd.iota, compact, len(open))}})
		} else if next, err = nd.args[k].nd.eval(c, b); err != nil {
			acc.release()
			return datum{}, err
		}
		r := logic3(c.mem, b.n, acc, next, nd.or)
		acc.release()
		next.release()
		acc = r
	}
	return acc, nil
}

// undecided returns the rows where acc is not FALSE (AND) or not TRUE (OR).
func undecided(acc datum, or bool, rows []int32) []int32 {
	vbits, valid := boolBits(acc.arr)
	out := make([]int32, 0, len(rows))
	for _, r := range rows {
		i := int(r)
		if (valid != nil && !bitAt(valid, i)) || bitAt(vbits, i) != or {
			out = append(out, r)
		}
	}
	return out
}

// logic3 computes a AND b (or OR) with three-valued logic over whole bitmaps. The result
// holds its own references.
func logic3(mem memory.Allocator, n int, a, b datum, or bool) datum {
	if a.arr == nil {
		a, b = b, a
	}
	if b.arr == nil { // at most a is an array
		switch {
		case !b.null && b.b == or: // FALSE AND x, TRUE OR x
			return b
		case !b.null: // TRUE AND x, FALSE OR x
			if a.arr != nil {
				a.arr.Retain()
			}
			return datum{arr: a.arr, null: a.null, b: a.b}
		case a.arr == nil: // NULL with a scalar
			if !a.null && a.b == or {
				return a
			}
			return nullDatum()
		}
		// NULL AND x is FALSE where x is FALSE, else NULL; NULL OR x is TRUE where x is TRUE.
		av, avalid := boolBits(a.arr)
		vbuf, valid := arrowbuf.AllocBits(mem, n)
		buf, out := arrowbuf.AllocBits(mem, n)
		for i := range valid {
			ok := ^byte(0)
			if avalid != nil {
				ok = avalid[i]
			}
			if or {
				valid[i] = ok & av[i]
				out[i] = ok & av[i]
			} else {
				valid[i] = ok &^ av[i]
			}
		}
		return arrDatum(arrowbuf.NewArray(boolType, n, vbuf, buf, array.UnknownNullCount), true)
	}
	av, avalid := boolBits(a.arr)
	bv, bvalid := boolBits(b.arr)
	buf, out := arrowbuf.AllocBits(mem, n)
	if avalid == nil && bvalid == nil {
		for i := range out {
			if or {
				out[i] = av[i] | bv[i]
			} else {
				out[i] = av[i] & bv[i]
			}
		}
		return arrDatum(arrowbuf.NewArray(boolType, n, nil, buf, 0), true)
	}
	vbuf, valid := arrowbuf.AllocBits(mem, n)
	for i := range out {
		va, vb := ^byte(0), ^byte(0)
		if avalid != nil {
			va = avalid[i]
		}
		if bvalid != nil {
			vb = bvalid[i]
		}
		at, af := va&av[i], va&^av[i]
		bt, bf := vb&bv[i], vb&^bv[i]
		if or {
			t := at | bt
			out[i] = t
			valid[i] = t | (af & bf)
		} else {
			t := at & bt
			out[i] = t
			valid[i] = t | af | bf
		}
	}
	return arrDatum(arrowbuf.NewArray(boolType, n, vbuf, buf, array.UnknownNullCount), true)
}

func notKernel(c *ctx, n int, args []datum) (datum, error) {
	v, _ := boolBits(args[0].arr)
	vbuf := andValidity(c.mem, n, args)
	buf, out := arrowbuf.AllocBits(c.mem, n)
	for i := range out {
		out[i] = ^v[i]
	}
	return arrDatum(arrowbuf.NewArray(boolType, n, vbuf, buf, array.UnknownNullCount), true), nil
}

// isKernel is IS [NOT] NULL (any type) and IS [NOT] TRUE / FALSE (BOOLEAN); never NULL.
func isKernel(fn planner.Func, t planner.Type) (kernelFn, error) {
	if fn != planner.FnIsNull && fn != planner.FnIsNotNull && t.Kind != planner.Boolean && t.Kind != planner.Null {
		return nil, newError(ErrUnsupported, "%s takes a BOOLEAN, got %s", fn, t)
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0].arr
		buf, out := arrowbuf.AllocBits(c.mem, n)
		nb := len(out)
		var v, valid []byte
		allNull := isNullArr(a)
		if !allNull {
			if a.DataType().ID() == arrow.BOOL {
				v, valid = boolBits(a)
			} else if bm, off := arrowbuf.Validity(a); bm != nil {
				valid = make([]byte, nb)
				bitutil.CopyBitmap(bm, off, n, valid, 0)
			}
		}
		for i := 0; i < nb; i++ {
			ok, val := ^byte(0), byte(0)
			if allNull {
				ok = 0
			} else if valid != nil {
				ok = valid[i]
			}
			if v != nil {
				val = v[i]
			}
			var r byte
			switch fn {
			case planner.FnIsNull:
				r = ^ok
			case planner.FnIsNotNull:
				r = ok
			case planner.FnIsTrue:
				r = ok & val
			case planner.FnIsNotTrue:
				r = ^(ok & val)
			case planner.FnIsFalse:
				r = ok &^ val
			default:
				r = ^(ok &^ val)
			}
			out[i] = r
		}
		return arrDatum(arrowbuf.NewArray(boolType, n, nil, buf, 0), true), nil
	}, nil
}

// nullIfKernel is NULLIF(a, b): a, NULL where a = b.
func nullIfKernel(ta, tb, t planner.Type) (kernelFn, error) {
	eq, err := cmpKernel(planner.FnEq, ta, tb)
	if err != nil {
		return nil, err
	}
	dt := exec.ArrowType(t)
	return func(c *ctx, n int, args []datum) (datum, error) {
		if args[0].arr == nil && args[0].null {
			return nullDatum(), nil
		}
		if args[1].arr == nil && args[1].null {
			d := args[0]
			args[0] = datum{}
			return d, nil
		}
		e, err := eq(c, n, args)
		if err != nil {
			return datum{}, err
		}
		defer e.release()
		a := args[0].arr
		if a == nil {
			a = broadcast(c.mem, t, dt, args[0], n)
		} else {
			a.Retain()
		}
		defer a.Release()
		ev, evalid := boolBits(e.arr)
		data := a.Data()
		off := data.Offset()
		vbuf, valid := arrowbuf.AllocBits(c.mem, off+n)
		abm, _ := arrowbuf.Validity(a)
		for i := 0; i < n; i++ {
			equal := (evalid == nil || bitAt(evalid, i)) && bitAt(ev, i)
			if !equal && (abm == nil || bitAt(abm, off+i)) {
				setBit(valid, off+i)
			}
		}
		bufs := append([]*memory.Buffer{vbuf}, data.Buffers()[1:]...)
		nd := array.NewData(a.DataType(), n, bufs, nil, array.UnknownNullCount, off)
		vbuf.Release()
		out := array.MakeFromData(nd)
		nd.Release()
		return arrDatum(out, false), nil
	}, nil
}

// coalesceNode is COALESCE: argument k is evaluated on the rows where every earlier one was
// NULL (lazily if it may fail).
type coalesceNode struct {
	args      []lazyArg
	t         planner.Type
	dt        arrow.DataType
	all, iota []int32
}

func (cp *compiler) compileCoalesce(e *planner.Call) (node, error) {
	nd := &coalesceNode{t: e.T, dt: exec.ArrowType(e.T)}
	for _, a := range e.Args {
		if k := a.Type().Kind; k != planner.Null && (physOf(a.Type()) != physOf(e.T) || (k == planner.Decimal && a.Type().Scale != e.T.Scale)) {
			return nil, newError(ErrUnsupported, "COALESCE argument %s is %s, want %s", a, a.Type(), e.T)
		}
		la, err := cp.lazyArg(a)
		if err != nil {
			return nil, err
		}
		nd.args = append(nd.args, la)
	}
	return nd, nil
}

func (nd *coalesceNode) eval(c *ctx, b *batch) (datum, error) {
	remaining := allRows(&nd.all, b.n)
	var parts []part
	for k := range nd.args {
		if len(remaining) == 0 {
			break
		}
		d, compact, err := nd.args[k].evalPart(c, b, remaining)
		if err != nil {
			for i := range parts {
				parts[i].d.release()
			}
			return datum{}, err
		}
		if k == len(nd.args)-1 {
			parts = append(parts, part{d: d, rows: remaining, idx: compactIdx(&nd.iota, compact, len(remaining))})
			break
		}
		taken, rest, takenIdx := split(d, compact, remaining, true)
		if len(taken) > 0 {
			parts = append(parts, part{d: d, rows: taken, idx: takenIdx})
		} else {
			d.release()
		}
		remaining = rest
	}
	return assemble(c, nd.t, nd.dt, b.n, parts)
}
