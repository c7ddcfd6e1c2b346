package expr

import (
	"cmp"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"math/bits"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

// Predicate compiles a BOOLEAN expression used as a filter.
type Predicate interface {
	// Select returns the indices of rows where the predicate is TRUE (NULL and FALSE drop the
	// row), appended to sel[:0]; pass the previous result back in to reuse its storage.
	Select(rec arrow.Record, sel []int32) ([]int32, error)
}

// selector filters rows. It considers every row when all is set, else the rows in in
// (ascending), and writes the passing ones to out, which has room for all of them and may
// alias in.
type selector interface {
	filter(c *ctx, b *batch, in []int32, all bool, out []int32) ([]int32, error)
}

type predicate struct {
	s selector
	c *ctx
	b batch // reused by every call
}

// CompilePredicate compiles a BOOLEAN filter. Comparisons of a column with a constant or
// another column, IS [NOT] NULL of a column, BOOLEAN columns and conjunctions of these write
// indices directly; other predicates evaluate a BOOLEAN array. The conjuncts of an AND run
// in order, each over the rows that passed the previous ones.
func CompilePredicate(e planner.Expr, mem memory.Allocator, env *Env) (Predicate, error) {
	if k := e.Type().Kind; k != planner.Boolean && k != planner.Null {
		return nil, newError(ErrUnsupported, "filter %s is %s, want BOOLEAN", e, e.Type())
	}
	cp := &compiler{c: newCtx(mem, env)}
	s, err := cp.selector(e)
	if err != nil {
		return nil, err
	}
	return &predicate{s: s, c: cp.c}, nil
}

func (p *predicate) Select(rec arrow.Record, sel []int32) ([]int32, error) {
	n := int(rec.NumRows())
	if n == 0 {
		return sel[:0], nil
	}
	if cap(sel) < n {
		sel = make([]int32, n)
	}
	p.b = batch{cols: rec.Columns(), n: n}
	defer func() { p.b.cols = nil }()
	p.c.begin()
	return p.s.filter(p.c, &p.b, nil, true, sel[:n])
}

func (cp *compiler) selector(e planner.Expr) (selector, error) {
	if call, ok := e.(*planner.Call); ok {
		switch call.Fn {
		case planner.FnAnd:
			var and andSel
			for _, a := range call.Args {
				s, err := cp.selector(a)
				if err != nil {
					return nil, err
				}
				and = append(and, s)
			}
			return and, nil
		case planner.FnEq, planner.FnNe, planner.FnLt, planner.FnLe, planner.FnGt, planner.FnGe:
			if s, err := cp.cmpSelector(call); s != nil || err != nil {
				return s, err
			}
		case planner.FnIsNull, planner.FnIsNotNull:
			if col, ok := call.Args[0].(*planner.ColumnRef); ok {
				nd, _ := cp.compile(col)
				return &nullSel{col: nd.(*colNode), not: call.Fn == planner.FnIsNotNull}, nil
			}
		}
	}
	if col, ok := e.(*planner.ColumnRef); ok && col.T.Kind == planner.Boolean {
		nd, _ := cp.compile(col)
		return &boolColSel{col: nd.(*colNode)}, nil
	}
	nd, err := cp.compile(e)
	if err != nil {
		return nil, err
	}
	return &genericSel{nd: nd, fail: mayFail(e), cols: colsOf(e)}, nil
}

// cmpSelector returns a direct selector for column ⊕ constant or column ⊕ column, or nil.
func (cp *compiler) cmpSelector(e *planner.Call) (selector, error) {
	l, err := cp.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	r, err := cp.compile(e.Args[1])
	if err != nil {
		return nil, err
	}
	fn := e.Fn
	lc, lcol := l.(*colNode)
	rc, rcol := r.(*colNode)
	// A side that reads no column (a literal, or CURRENT_TIMESTAMP - INTERVAL '1' HOUR) is one
	// value per batch.
	lconst, rconst := len(colsOf(e.Args[0])) == 0, len(colsOf(e.Args[1])) == 0
	t := e.Args[0].Type()
	if physOf(t) != physOf(e.Args[1].Type()) {
		return nil, nil
	}
	var val node
	switch {
	case lcol && rconst:
		val = r
	case lconst && rcol:
		lc, val, fn = rc, l, flip(fn)
	case lcol && rcol:
		switch physOf(t) {
		case physI32:
			return &colColSel[int32]{a: lc, b: rc, fn: fn}, nil
		case physI64:
			return &colColSel[int64]{a: lc, b: rc, fn: fn}, nil
		case physF64:
			return &colColSel[float64]{a: lc, b: rc, fn: fn}, nil
		}
		return nil, nil
	default:
		return nil, nil
	}
	if d, ok := isConst(val); ok && d.null {
		return noneSel{}, nil
	}
	switch physOf(t) {
	case physI32:
		return &colConstSel[int32]{col: lc, fn: fn, val: val}, nil
	case physI64:
		return &colConstSel[int64]{col: lc, fn: fn, val: val}, nil
	case physF64:
		return &colConstSel[float64]{col: lc, fn: fn, val: val}, nil
	case physStr:
		return &strConstSel{col: lc, fn: fn, val: val}, nil
	}
	return nil, nil
}

// batchValue evaluates a node that reads no column; ok is false when it is NULL.
func batchValue(c *ctx, b *batch, nd node) (datum, bool, error) {
	d, err := nd.eval(c, b)
	if err != nil {
		return d, false, err
	}
	if d.arr != nil { // not expected: a column-free node yields a scalar
		s := scalarAt(d.arr, 0)
		d.release()
		d = s
	}
	return d, !d.null, nil
}

// rowsOf returns the rows to consider: in, or 0..n-1 from out's storage when all is set.
func rowsOf(b *batch, in []int32, all bool, out []int32) []int32 {
	if !all {
		return in
	}
	out = out[:b.n]
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// dropNulls keeps the rows of sel where the column is valid.
func dropNulls(a arrow.Array, sel []int32) []int32 {
	bm, off := arrowbuf.Validity(a)
	if bm == nil {
		return sel
	}
	k := 0
	for _, r := range sel {
		sel[k] = r
		k += b2i(bitAt(bm, off+int(r)))
	}
	return sel[:k]
}

type andSel []selector

func (s andSel) filter(c *ctx, b *batch, in []int32, all bool, out []int32) ([]int32, error) {
	for i, child := range s {
		var err error
		if out, err = child.filter(c, b, in, all && i == 0, out); err != nil {
			return nil, err
		}
		in, all = out, false
		if len(out) == 0 {
			break
		}
	}
	return out, nil
}

type noneSel struct{}

func (noneSel) filter(_ *ctx, _ *batch, _ []int32, _ bool, out []int32) ([]int32, error) {
	return out[:0], nil
}

// colConstSel is column op value over INT, BIGINT, DOUBLE and the types stored alike.
type colConstSel[T int32 | int64 | float64] struct {
	col *colNode
	fn  planner.Func
	val node // reads no column
}

func (p *colConstSel[T]) filter(c *ctx, b *batch, in []int32, all bool, out []int32) ([]int32, error) {
	v, ok, err := batchValue(c, b, p.val)
	if err != nil || !ok || b.n == 0 {
		return out[:0], err
	}
	d, err := p.col.eval(c, b)
	if err != nil || d.arr == nil {
		return out[:0], err
	}
	defer d.release()
	a, s := arrowbuf.Values[T](d.arr), scalarAs[T](v)
	var k int
	if all {
		k = selAS(p.fn, a, s, out)
	} else {
		k = refineAS(p.fn, a, s, in, out)
	}
	return dropNulls(d.arr, out[:k]), nil
}

// selAS writes the rows i where a[i] op s, branch-free.
func selAS[T cmp.Ordered](fn planner.Func, a []T, s T, out []int32) int {
	k := 0
	out = out[:len(a)]
	switch fn {
	case planner.FnEq:
		for i, v := range a {
			out[k] = int32(i)
			k += b2i(v == s)
		}
	case planner.FnNe:
		for i, v := range a {
			out[k] = int32(i)
			k += b2i(v != s)
		}
	case planner.FnLt:
		for i, v := range a {
			out[k] = int32(i)
			k += b2i(v < s)
		}
	case planner.FnLe:
		for i, v := range a {
			out[k] = int32(i)
			k += b2i(v <= s)
		}
	case planner.FnGt:
		for i, v := range a {
			out[k] = int32(i)
			k += b2i(v > s)
		}
	default:
		for i, v := range a {
			out[k] = int32(i)
			k += b2i(v >= s)
		}
	}
	return k
}

// refineAS keeps the rows r of in where a[r] op s.
func refineAS[T cmp.Ordered](fn planner.Func, a []T, s T, in, out []int32) int {
	k := 0
	switch fn {
	case planner.FnEq:
		for _, r := range in {
			out[k] = r
			k += b2i(a[r] == s)
		}
	case planner.FnNe:
		for _, r := range in {
			out[k] = r
			k += b2i(a[r] != s)
		}
	case planner.FnLt:
		for _, r := range in {
			out[k] = r
			k += b2i(a[r] < s)
		}
	case planner.FnLe:
		for _, r := range in {
			out[k] = r
			k += b2i(a[r] <= s)
		}
	case planner.FnGt:
		for _, r := range in {
			out[k] = r
			k += b2i(a[r] > s)
		}
	default:
		for _, r := range in {
			out[k] = r
			k += b2i(a[r] >= s)
		}
	}
	return k
}

// colColSel is column op column.
type colColSel[T int32 | int64 | float64] struct {
	a, b *colNode
	fn   planner.Func
}

func (p *colColSel[T]) filter(c *ctx, b *batch, in []int32, all bool, out []int32) ([]int32, error) {
	x, err := p.a.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer x.release()
	y, err := p.b.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer y.release()
	if x.arr == nil || y.arr == nil {
		return out[:0], nil
	}
	av, bv := arrowbuf.Values[T](x.arr), arrowbuf.Values[T](y.arr)
	rows := rowsOf(b, in, all, out)
	k := 0
	switch p.fn {
	case planner.FnEq:
		for _, r := range rows {
			out[k] = r
			k += b2i(av[r] == bv[r])
		}
	case planner.FnNe:
		for _, r := range rows {
			out[k] = r
			k += b2i(av[r] != bv[r])
		}
	case planner.FnLt:
		for _, r := range rows {
			out[k] = r
			k += b2i(av[r] < bv[r])
		}
	case planner.FnLe:
		for _, r := range rows {
			out[k] = r
			k += b2i(av[r] <= bv[r])
		}
	case planner.FnGt:
		for _, r := range rows {
			out[k] = r
			k += b2i(av[r] > bv[r])
		}
	default:
		for _, r := range rows {
			out[k] = r
			k += b2i(av[r] >= bv[r])
		}
	}
	return dropNulls(y.arr, dropNulls(x.arr, out[:k])), nil
}

// strConstSel is a STRING column op value, by bytes.
type strConstSel struct {
	col *colNode
	fn  planner.Func
	val node // reads no column
}

func (p *strConstSel) filter(c *ctx, b *batch, in []int32, all bool, out []int32) ([]int32, error) {
	v, ok, err := batchValue(c, b, p.val)
	if err != nil || !ok || b.n == 0 {
		return out[:0], err
	}
	d, err := p.col.eval(c, b)
	if err != nil || d.arr == nil {
		return out[:0], err
	}
	defer d.release()
	col := strColOf(d)
	rows := rowsOf(b, in, all, out)
	k := 0
	if p.fn == planner.FnEq {
		for _, r := range rows {
			out[k] = r
			k += b2i(col.at(int(r)) == v.s)
		}
	} else {
		tbl := cmpTable(p.fn)
		for _, r := range rows {
			out[k] = r
			k += int(tbl[strings.Compare(col.at(int(r)), v.s)+1])
		}
	}
	return dropNulls(d.arr, out[:k]), nil
}

// nullSel is column IS [NOT] NULL.
type nullSel struct {
	col *colNode
	not bool
}

func (p *nullSel) filter(c *ctx, b *batch, in []int32, all bool, out []int32) ([]int32, error) {
	d, err := p.col.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer d.release()
	rows := rowsOf(b, in, all, out)
	if d.arr == nil || isNullArr(d.arr) {
		if p.not {
			return out[:0], nil
		}
		return out[:copy(out, rows)], nil
	}
	bm, off := arrowbuf.Validity(d.arr)
	if bm == nil {
		if p.not {
			return out[:copy(out, rows)], nil
		}
		return out[:0], nil
	}
	k := 0
	for _, r := range rows {
		out[k] = r
		k += b2i(bitAt(bm, off+int(r)) == p.not)
	}
	return out[:k], nil
}

// boolColSel is a BOOLEAN column used as a filter.
type boolColSel struct{ col *colNode }

func (p *boolColSel) filter(c *ctx, b *batch, in []int32, all bool, out []int32) ([]int32, error) {
	d, err := p.col.eval(c, b)
	if err != nil {
		return nil, err
	}
	defer d.release()
	return selectTrue(d, false, b, in, all, out), nil
}

// genericSel evaluates a BOOLEAN array and keeps the TRUE rows. When it considers a subset
// of rows and may fail, it evaluates on that subset only.
type genericSel struct {
	nd   node
	fail bool
	cols []int
}

func (p *genericSel) filter(c *ctx, b *batch, in []int32, all bool, out []int32) ([]int32, error) {
	var d datum
	var err error
	compact := !all && p.fail && len(in) < b.n
	if compact {
		d, err = evalOn(c, p.nd, b, in, p.cols)
	} else {
		d, err = p.nd.eval(c, b)
	}
	if err != nil {
		return nil, err
	}
	defer d.release()
	return selectTrue(d, compact, b, in, all, out), nil
}

// selectTrue writes the rows where d is TRUE: of every row when all is set (eight bits at
// a time), else of in (d indexed by position in in when compact).
func selectTrue(d datum, compact bool, b *batch, in []int32, all bool, out []int32) []int32 {
	if d.arr == nil || isNullArr(d.arr) {
		if d.arr != nil || d.null || !d.b {
			return out[:0]
		}
		return out[:copy(out, rowsOf(b, in, all, out))]
	}
	v, valid := boolBits(d.arr)
	k := 0
	if all {
		for i, w := range v {
			if valid != nil {
				w &= valid[i]
			}
			for w != 0 {
				r := i*8 + bits.TrailingZeros8(w)
				if r >= b.n {
					break
				}
				out[k] = int32(r)
				k++
				w &= w - 1
			}
		}
		return out[:k]
	}
	for j, r := range in {
		i := int(r)
		if compact {
			i = j
		}
		out[k] = r
		k += b2i(bitAt(v, i) && (valid == nil || bitAt(valid, i)))
	}
	return out[:k]
}
