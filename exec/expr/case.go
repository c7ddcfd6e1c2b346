package expr

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// Lazy evaluation. A subexpression that may fail (mayFail) under CASE, COALESCE, AND or OR
// is evaluated only on the rows that reach it: its input columns are gathered with Take
// into a smaller batch, and its result is compact (one value per reaching row). Other
// subexpressions are evaluated over the whole batch, which costs no gather, and indexed by
// row. assemble then builds the result from the parts.

// lazyArg is a compiled subexpression with what lazy evaluation needs.
type lazyArg struct {
	nd   node
	fail bool  // may fail: evaluate on reaching rows only
	cols []int // input columns it reads
}

func (cp *compiler) lazyArg(e planner.Expr) (lazyArg, error) {
	nd, err := cp.compile(e)
	if err != nil {
		return lazyArg{}, err
	}
	return lazyArg{nd: nd, fail: mayFail(e), cols: colsOf(e)}, nil
}

// evalPart evaluates a on rows (ascending) of b; compact reports a result indexed by the
// position in rows rather than by row.
func (a *lazyArg) evalPart(c *ctx, b *batch, rows []int32) (d datum, compact bool, err error) {
	if d, ok := isConst(a.nd); ok {
		return d, false, nil
	}
	if !a.fail || len(rows) == b.n {
		d, err = a.nd.eval(c, b)
		return d, false, err
	}
	d, err = evalOn(c, a.nd, b, rows, a.cols)
	return d, true, err
}

// evalOn evaluates nd on the given rows of b only.
func evalOn(c *ctx, nd node, b *batch, rows []int32, cols []int) (datum, error) {
	sub := batch{cols: make([]arrow.Array, len(b.cols)), n: len(rows)}
	for _, ci := range cols {
		if ci < len(b.cols) && b.cols[ci] != nil {
			sub.cols[ci] = exec.Take(c.mem, b.cols[ci], rows)
		}
	}
	d, err := nd.eval(c, &sub)
	for _, a := range sub.cols {
		if a != nil {
			a.Release()
		}
	}
	return d, err
}

// allRows returns 0..n-1 from buf, which callers must not modify.
func allRows(buf *[]int32, n int) []int32 {
	if len(*buf) < n {
		*buf = make([]int32, n)
		for i := range *buf {
			(*buf)[i] = int32(i)
		}
	}
	return (*buf)[:n]
}

// compactIdx returns the identity index of a compact result of n values, else nil.
func compactIdx(buf *[]int32, compact bool, n int) []int32 {
	if !compact {
		return nil
	}
	return allRows(buf, n)
}

// split partitions rows by whether d (a BOOLEAN, or any type when nonNull is set) is TRUE
// (non-NULL) there. When d is compact (indexed by position in rows), yesIdx holds the
// positions of the yes rows.
func split(d datum, compact bool, rows []int32, nonNull bool) (yes, no, yesIdx []int32) {
	if d.arr == nil {
		if (nonNull && !d.null) || (!nonNull && !d.null && d.b) {
			return rows, nil, nil
		}
		return nil, rows, nil
	}
	if isNullArr(d.arr) {
		return nil, rows, nil
	}
	var vbits, valid []byte
	var voff int
	if nonNull {
		valid, voff = arrowbuf.Validity(d.arr)
	} else {
		vbits, valid = boolBits(d.arr)
	}
	// Branch-free partition: write each row to both lists, advance one.
	yes, no = make([]int32, len(rows)), make([]int32, len(rows))
	if compact {
		yesIdx = make([]int32, len(rows))
	}
	ky, kn := 0, 0
	for j, r := range rows {
		i := int(r)
		if compact {
			i = j
		}
		ok := valid == nil || bitAt(valid, voff+i)
		if vbits != nil {
			ok = ok && bitAt(vbits, i)
		}
		yes[ky], no[kn] = r, r
		if compact {
			yesIdx[ky] = int32(j)
		}
		t := b2i(ok)
		ky += t
		kn += 1 - t
	}
	if compact {
		yesIdx = yesIdx[:ky]
	}
	return yes[:ky], no[:kn], yesIdx
}

// part supplies the result of rows (ascending) from d: row rows[j] is d's value idx[j], or
// d's value rows[j] when idx is nil (d covers the whole batch).
type part struct {
	d    datum
	rows []int32
	idx  []int32
}

// at returns the index into the part's datum of its j-th row.
func (p *part) at(j int) int {
	if p.idx != nil {
		return int(p.idx[j])
	}
	return int(p.rows[j])
}

// assemble builds an n-row result of type t from parts covering disjoint rows (rows no part
// covers are NULL), releasing the parts.
func assemble(c *ctx, t planner.Type, dt arrow.DataType, n int, parts []part) (datum, error) {
	defer func() {
		for i := range parts {
			parts[i].d.release()
		}
	}()
	if len(parts) == 1 && len(parts[0].rows) == n {
		d := parts[0].d
		parts[0].d = datum{}
		return d, nil
	}
	switch physOf(t) {
	case physNull:
		return nullDatum(), nil
	case physBool:
		return assembleBool(c.mem, n, parts), nil
	case physI32:
		return assembleFixed[int32](c.mem, dt, n, parts), nil
	case physI64:
		return assembleFixed[int64](c.mem, dt, n, parts), nil
	case physF64:
		return assembleFixed[float64](c.mem, dt, n, parts), nil
	case physDec:
		return assembleFixed[dec](c.mem, dt, n, parts), nil
	case physNested, physI8, physI16, physF32, physBin:
		return assembleArrays(c.mem, dt, n, parts)
	}
	return assembleString(c.mem, n, parts), nil
}

// assembleArrays assembles any layout: the parts' arrays concatenated, then taken.
func assembleArrays(mem memory.Allocator, dt arrow.DataType, n int, parts []part) (datum, error) {
	var arrs []arrow.Array
	sel := make([]int32, n)
	keep := make([]byte, (n+7)/8)
	total := 0
	for k := range parts {
		p := &parts[k]
		if p.d.arr == nil || isNullArr(p.d.arr) {
			continue
		}
		for j, r := range p.rows {
			sel[r] = int32(total + p.at(j))
			setBit(keep, int(r))
		}
		arrs = append(arrs, p.d.arr)
		total += p.d.arr.Len()
	}
	if total == 0 {
		return arrDatum(array.MakeArrayOfNull(mem, dt, n), false), nil
	}
	all, err := array.Concatenate(arrs, mem)
	if err != nil {
		return datum{}, newError(ErrUnsupported, "%s: %v", dt, err)
	}
	defer all.Release()
	taken := exec.Take(mem, all, sel)
	defer taken.Release()
	return arrDatum(maskNulls(mem, taken, keep), false), nil
}

func isNullArr(a arrow.Array) bool { return a.DataType().ID() == arrow.NULL }

func assembleFixed[T fixed](mem memory.Allocator, dt arrow.DataType, n int, parts []part) datum {
	vbuf, valid := arrowbuf.AllocBits(mem, n)
	buf, out := arrowbuf.AllocFixed[T](mem, n)
	clear(out)
	for _, p := range parts {
		if p.d.arr == nil || isNullArr(p.d.arr) {
			if p.d.arr != nil || p.d.null {
				continue
			}
			s := scalarAs[T](p.d)
			for _, r := range p.rows {
				out[r] = s
				setBit(valid, int(r))
			}
			continue
		}
		src := arrowbuf.Values[T](p.d.arr)
		bm, off := arrowbuf.Validity(p.d.arr)
		for j, r := range p.rows {
			i := p.at(j)
			if bm == nil || bitAt(bm, off+i) {
				out[r] = src[i]
				setBit(valid, int(r))
			}
		}
	}
	return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, array.UnknownNullCount), true)
}

func assembleBool(mem memory.Allocator, n int, parts []part) datum {
	vbuf, valid := arrowbuf.AllocBits(mem, n)
	buf, out := arrowbuf.AllocBits(mem, n)
	for _, p := range parts {
		if p.d.arr == nil || isNullArr(p.d.arr) {
			if p.d.arr != nil || p.d.null {
				continue
			}
			for _, r := range p.rows {
				setBit(valid, int(r))
				if p.d.b {
					setBit(out, int(r))
				}
			}
			continue
		}
		src, bm := boolBits(p.d.arr)
		for j, r := range p.rows {
			i := p.at(j)
			if bm == nil || bitAt(bm, i) {
				setBit(valid, int(r))
				if bitAt(src, i) {
					setBit(out, int(r))
				}
			}
		}
	}
	return arrDatum(arrowbuf.NewArray(boolType, n, vbuf, buf, array.UnknownNullCount), true)
}

func assembleString(mem memory.Allocator, n int, parts []part) datum {
	// Which part and which index of it supply each row.
	from := make([]int32, n)
	idx := make([]int32, n)
	for i := range from {
		from[i] = -1
	}
	type source struct {
		col  strCol
		bm   []byte // validity of an array part
		off  int
		null bool // a NULL scalar or NULL array
	}
	srcs := make([]source, len(parts))
	hint := 0
	for k := range parts {
		p := &parts[k]
		src := &srcs[k]
		if p.d.arr == nil {
			src.null = p.d.null
		} else if src.null = isNullArr(p.d.arr); !src.null {
			src.bm, src.off = arrowbuf.Validity(p.d.arr)
		}
		if src.null {
			continue
		}
		src.col = strColOf(p.d)
		for j, r := range p.rows {
			from[r] = int32(k)
			idx[r] = int32(p.at(j))
		}
		hint += dataLen(p.d, len(p.rows))
	}
	vbuf, valid := arrowbuf.AllocBits(mem, n)
	sb := newStrBuilder(mem, n, hint)
	for r := 0; r < n; r++ {
		if k := from[r]; k >= 0 {
			src := &srcs[k]
			if i := int(idx[r]); src.bm == nil || bitAt(src.bm, src.off+i) {
				sb.appendString(src.col.at(i))
				setBit(valid, r)
			}
		}
		sb.endRow(r)
	}
	return arrDatum(sb.finish(vbuf), true)
}

// caseNode is a searched CASE: WHEN i is evaluated on the rows no earlier WHEN took, and each
// result on the rows whose WHEN took them.
type caseNode struct {
	conds, results []lazyArg
	els            lazyArg
	t              planner.Type
	dt             arrow.DataType
	all, iota      []int32
}

func (cp *compiler) compileCase(e *planner.Case) (node, error) {
	nd := &caseNode{t: e.T, dt: exec.ArrowType(e.T)}
	check := func(r planner.Expr) error {
		rt := r.Type()
		if rt.Kind != planner.Null && (physOf(rt) != physOf(e.T) || (rt.Kind == planner.Decimal && rt.Scale != e.T.Scale)) {
			return newError(ErrUnsupported, "CASE result %s is %s, want %s", r, rt, e.T)
		}
		return nil
	}
	for _, w := range e.Whens {
		if k := w.Cond.Type().Kind; k != planner.Boolean && k != planner.Null {
			return nil, newError(ErrUnsupported, "CASE condition %s is %s, want BOOLEAN", w.Cond, w.Cond.Type())
		}
		if err := check(w.Result); err != nil {
			return nil, err
		}
		cond, err := cp.lazyArg(w.Cond)
		if err != nil {
			return nil, err
		}
		res, err := cp.lazyArg(w.Result)
		if err != nil {
			return nil, err
		}
		nd.conds = append(nd.conds, cond)
		nd.results = append(nd.results, res)
	}
	nd.els = lazyArg{nd: &constNode{d: nullDatum()}}
	if e.Else != nil {
		if err := check(e.Else); err != nil {
			return nil, err
		}
		els, err := cp.lazyArg(e.Else)
		if err != nil {
			return nil, err
		}
		nd.els = els
	}
	return nd, nil
}

func (nd *caseNode) eval(c *ctx, b *batch) (datum, error) {
	remaining := allRows(&nd.all, b.n)
	var parts []part
	fail := func(err error) (datum, error) {
		for i := range parts {
			parts[i].d.release()
		}
		return datum{}, err
	}
	for k := range nd.conds {
		if len(remaining) == 0 {
			break
		}
		cond, compact, err := nd.conds[k].evalPart(c, b, remaining)
		if err != nil {
			return fail(err)
		}
		taken, rest, _ := split(cond, compact, remaining, false)
		cond.release()
		if len(taken) > 0 {
			res, compact, err := nd.results[k].evalPart(c, b, taken)
			if err != nil {
				return fail(err)
			}
			parts = append(parts, part{d: res, rows: taken, idx: compactIdx(&nd.iota, compact, len(taken))})
		}
		remaining = rest
	}
	if len(remaining) > 0 {
		res, compact, err := nd.els.evalPart(c, b, remaining)
		if err != nil {
			return fail(err)
		}
		parts = append(parts, part{d: res, rows: remaining, idx: compactIdx(&nd.iota, compact, len(remaining))})
	}
	return assemble(c, nd.t, nd.dt, b.n, parts)
}
