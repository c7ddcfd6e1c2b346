package expr

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// Env is what evaluation needs beyond the input: the session time zone and the clock.
// A nil Env, Location or Now means UTC and time.Now.
type Env struct {
	Location *time.Location
	Now      func() time.Time
	// Watermark, when set, is the event time the evaluating operator has seen pass
	// (exec.MinWatermark before any), for CURRENT_WATERMARK; without it that is NULL.
	Watermark func() int64
}

// Evaluator computes an expression for every row of a record.
type Evaluator interface {
	// Eval returns an array of rec.NumRows() values, owned by the caller (who releases it).
	Eval(rec arrow.Record) (arrow.Array, error)
}

// ctx is the per-evaluator state kernels see.
type ctx struct {
	mem    memory.Allocator
	loc    *time.Location
	clock  func() time.Time
	wm     func() int64
	nowMs  int64
	nowSet bool
}

// begin starts one Eval or Select call: CURRENT_TIMESTAMP is read at most once per call.
func (c *ctx) begin() { c.nowSet = false }

func (c *ctx) now() int64 {
	if !c.nowSet {
		c.nowMs = c.clock().UnixMilli()
		c.nowSet = true
	}
	return c.nowMs
}

func newCtx(mem memory.Allocator, env *Env) *ctx {
	c := &ctx{mem: mem, loc: time.UTC, clock: time.Now}
	if env != nil {
		if env.Location != nil {
			c.loc = env.Location
		}
		if env.Now != nil {
			c.clock = env.Now
		}
		c.wm = env.Watermark
	}
	return c
}

// batch is the input of a node: the columns of a record, or of the subset of its rows that
// reach a lazily evaluated branch (nil where the branch does not read the column).
type batch struct {
	cols []arrow.Array
	n    int
}

// node is a compiled expression: one eval per batch, never per row.
type node interface {
	eval(c *ctx, b *batch) (datum, error)
}

// kernelFn computes a function over n rows of its arguments, which are arrays of n values or
// scalars (never all scalars: callNode folds those). It may take over an owned argument by
// zeroing its slot.
type kernelFn func(c *ctx, n int, args []datum) (datum, error)

type evaluator struct {
	root node
	t    planner.Type
	dt   arrow.DataType
	c    *ctx
	b    batch // reused by every call
}

// Compile compiles a bound expression into an Evaluator whose arrays are allocated from mem.
func Compile(e planner.Expr, mem memory.Allocator, env *Env) (Evaluator, error) {
	cp := &compiler{c: newCtx(mem, env)}
	root, err := cp.compile(e)
	if err != nil {
		return nil, err
	}
	return &evaluator{root: root, t: e.Type(), dt: exec.ArrowType(e.Type()), c: cp.c}, nil
}

func (ev *evaluator) Eval(rec arrow.Record) (arrow.Array, error) {
	if rec.NumRows() == 0 { // no row reaches anything, not even a failing constant
		return broadcast(ev.c.mem, ev.t, ev.dt, nullDatum(), 0), nil
	}
	ev.b = batch{cols: rec.Columns(), n: int(rec.NumRows())}
	defer func() { ev.b.cols = nil }()
	ev.c.begin()
	d, err := ev.root.eval(ev.c, &ev.b)
	if err != nil {
		return nil, err
	}
	if d.arr != nil {
		return d.arr, nil
	}
	return broadcast(ev.c.mem, ev.t, ev.dt, d, ev.b.n), nil
}

// colNode reads an input column, zero copy.
type colNode struct {
	idx   int
	name  string
	t     planner.Type
	id    arrow.Type
	scale int32
}

func (nd *colNode) eval(c *ctx, b *batch) (datum, error) {
	if nd.idx < 0 || nd.idx >= len(b.cols) || b.cols[nd.idx] == nil {
		return datum{}, newError(ErrUnsupported, "column %d (%s) is not in the input", nd.idx, nd.name)
	}
	a := b.cols[nd.idx]
	if a.Len() != b.n {
		return datum{}, newError(ErrUnsupported, "column %s has %d rows, want %d", nd.name, a.Len(), b.n)
	}
	id := a.DataType().ID()
	if id == arrow.NULL || nd.id == arrow.NULL {
		return nullDatum(), nil // a NULL column, or a column of type NULL
	}
	bad := id != nd.id
	switch dt := a.DataType().(type) {
	case *arrow.Decimal128Type:
		bad = bad || dt.Scale != nd.scale
	case *arrow.TimestampType:
		bad = bad || dt.Unit != arrow.Millisecond
	case *arrow.DurationType:
		bad = bad || dt.Unit != arrow.Millisecond
	}
	if bad {
		return datum{}, newError(ErrUnsupported, "column %s is %s, want %s", nd.name, a.DataType(), nd.t)
	}
	a.Retain()
	return arrDatum(a, false), nil
}

// constNode is a literal or a folded constant.
type constNode struct{ d datum }

func (nd *constNode) eval(*ctx, *batch) (datum, error) { return nd.d, nil }

// nowNode is CURRENT_TIMESTAMP.
type nowNode struct{}

func (nowNode) eval(c *ctx, _ *batch) (datum, error) { return datum{i: c.now()}, nil }

// watermarkNode is CURRENT_WATERMARK(rowtime): NULL before the first watermark.
type watermarkNode struct{}

func (watermarkNode) eval(c *ctx, _ *batch) (datum, error) {
	if c.wm == nil {
		return nullDatum(), nil
	}
	if wm := c.wm(); wm != math.MinInt64 && wm != math.MaxInt64 {
		return datum{i: wm}, nil
	}
	return nullDatum(), nil
}

// callNode applies a kernel to its evaluated arguments.
type callNode struct {
	name   string
	args   []node
	argT   []planner.Type
	t      planner.Type
	dt     arrow.DataType
	strict bool // NULL when any argument is NULL
	fn     kernelFn
	buf    []datum
}

func (nd *callNode) eval(c *ctx, b *batch) (datum, error) {
	args := nd.buf[:0]
	allScalar, anyNull := true, false
	for _, a := range nd.args {
		d, err := a.eval(c, b)
		if err != nil {
			releaseAll(args)
			return datum{}, err
		}
		args = append(args, d)
		if d.arr != nil {
			allScalar = false
		} else if d.null {
			anyNull = true
		}
	}
	nd.buf = args
	defer releaseAll(args)
	if nd.strict && anyNull {
		return nullDatum(), nil
	}
	if allScalar && physOf(nd.t) == physNested {
		for i := range args { // a structured result is an array: evaluate over every row
			args[i] = arrDatum(broadcast(c.mem, nd.argT[i], exec.ArrowType(nd.argT[i]), args[i], b.n), false)
		}
	} else if allScalar {
		return nd.evalScalars(c, args)
	}
	return nd.fn(c, b.n, args)
}

// evalScalars runs the kernel over one-row arrays and returns the result as a scalar.
func (nd *callNode) evalScalars(c *ctx, args []datum) (datum, error) {
	for i := range args {
		args[i] = arrDatum(broadcast(c.mem, nd.argT[i], exec.ArrowType(nd.argT[i]), args[i], 1), false)
	}
	d, err := nd.fn(c, 1, args)
	if err != nil || d.arr == nil {
		return d, err
	}
	s := scalarAt(d.arr, 0)
	d.release()
	return s, nil
}

// compiler turns planner expressions into nodes, folding constant subtrees.
type compiler struct {
	c      *ctx
	consts map[planner.Expr]bool // isConst's answers: each subtree is asked once
}

func (cp *compiler) compile(e planner.Expr) (node, error) {
	nd, err := cp.compileNode(e)
	if err != nil {
		return nil, err
	}
	if _, ok := nd.(*constNode); !ok && cp.isConst(e) {
		nd = cp.fold(nd)
	}
	return nd, nil
}

// isConst is isConstExpr, remembered: compile asks it of every subtree, which would
// make a long chain of calls quadratic.
func (cp *compiler) isConst(e planner.Expr) bool {
	if c, ok := cp.consts[e]; ok {
		return c
	}
	if cp.consts == nil {
		cp.consts = map[planner.Expr]bool{}
	}
	c := constExpr(e, cp.isConst)
	cp.consts[e] = c
	return c
}

// isConstExpr reports whether e reads no column and no clock. A structured value is
// never folded: it has no scalar form (see nested.go).
func isConstExpr(e planner.Expr) bool { return constExpr(e, isConstExpr) }

// constExpr is isConstExpr, asking sub of e's operands.
func constExpr(e planner.Expr, sub func(planner.Expr) bool) bool {
	if e.Type().IsNested() {
		return false
	}
	switch e := e.(type) {
	case *planner.Literal:
		return true
	case *planner.Cast:
		return sub(e.X)
	case *planner.Case:
		for _, w := range e.Whens {
			if !sub(w.Cond) || !sub(w.Result) {
				return false
			}
		}
		return e.Else == nil || sub(e.Else)
	case *planner.Call:
		if kernels[e.Fn].volatile {
			return false
		}
		for _, a := range e.Args {
			if !sub(a) {
				return false
			}
		}
		return true
	}
	return false
}

func (cp *compiler) compileNode(e planner.Expr) (node, error) {
	switch e := e.(type) {
	case *planner.ColumnRef:
		dt := exec.ArrowType(e.T)
		nd := &colNode{idx: e.Index, name: e.Name, t: e.T, id: dt.ID()}
		if e.T.Kind == planner.Decimal {
			nd.scale = int32(e.T.Scale)
		}
		return nd, nil
	case *planner.Literal:
		d, err := literalDatum(e)
		if err != nil {
			return nil, err
		}
		return &constNode{d: d}, nil
	case *planner.Cast:
		x, err := cp.compile(e.X)
		if err != nil {
			return nil, err
		}
		k, err := castKernel(e.X.Type(), e.T, e.Try)
		if err != nil {
			return nil, err
		}
		return cp.call("CAST", []node{x}, []planner.Type{e.X.Type()}, e.T, true, k)
	case *planner.Case:
		return cp.compileCase(e)
	case *planner.Call:
		return cp.compileCall(e)
	case nil:
		return nil, newError(ErrUnsupported, "missing expression")
	}
	return nil, newError(ErrUnsupported, "unsupported expression %T", e)
}

func (cp *compiler) compileArgs(es []planner.Expr) ([]node, []planner.Type, error) {
	nodes := make([]node, len(es))
	types := make([]planner.Type, len(es))
	for i, a := range es {
		nd, err := cp.compile(a)
		if err != nil {
			return nil, nil, err
		}
		nodes[i], types[i] = nd, a.Type()
	}
	return nodes, types, nil
}

// call builds a callNode.
func (cp *compiler) call(name string, args []node, argT []planner.Type, t planner.Type, strict bool, fn kernelFn) (node, error) {
	return &callNode{name: name, args: args, argT: argT, t: t, dt: exec.ArrowType(t), strict: strict, fn: fn}, nil
}

// fold evaluates a constant node once; a failing constant, such as 1/0, is kept as it is and
// fails only if a row reaches it.
func (cp *compiler) fold(nd node) node {
	cp.c.begin()
	d, err := nd.eval(cp.c, &batch{n: 1})
	if err != nil {
		return nd
	}
	if d.arr != nil {
		if d.arr.Len() != 1 {
			d.release()
			return nd
		}
		s := scalarAt(d.arr, 0)
		d.release()
		d = s
	}
	return &constNode{d: d}
}

func isConst(nd node) (datum, bool) {
	if c, ok := nd.(*constNode); ok {
		return c.d, true
	}
	return datum{}, false
}

func (cp *compiler) compileCall(e *planner.Call) (node, error) {
	f, ok := planner.FunctionOf(e.Fn)
	spec, ok2 := kernels[e.Fn]
	if !ok || !ok2 {
		return nil, newError(ErrUnsupported, "unsupported function %s", e.Fn)
	}
	if lo, hi := f.MinArgs(), f.MaxArgs(); len(e.Args) < lo || len(e.Args) > hi {
		return nil, newError(ErrUnsupported, "%s takes %s arguments, got %d", e.Fn, arityText(lo, hi), len(e.Args))
	}
	if spec.node != nil {
		return spec.node(cp, e)
	}
	args, argT, err := cp.compileArgs(e.Args)
	if err != nil {
		return nil, err
	}
	fn, err := spec.kernel(cp, e, args, argT)
	if err != nil {
		return nil, err
	}
	return cp.call(string(e.Fn), args, argT, e.T, f.Nulls != planner.NullAware, fn)
}

func arityText(min, max int) string {
	switch {
	case min == max:
		return fmt.Sprint(min)
	case max > 1000:
		return fmt.Sprintf("at least %d", min)
	}
	return fmt.Sprintf("%d to %d", min, max)
}

// mayFail reports whether evaluating e can return an error for some row; such
// subexpressions of CASE, COALESCE, AND and OR are evaluated only on the rows that reach them.
func mayFail(e planner.Expr) bool {
	switch e := e.(type) {
	case *planner.Cast:
		return (!e.Try && castMayFail(e.X.Type(), e.T)) || mayFail(e.X)
	case *planner.Case:
		for _, w := range e.Whens {
			if mayFail(w.Cond) || mayFail(w.Result) {
				return true
			}
		}
		return e.Else != nil && mayFail(e.Else)
	case *planner.Call:
		for _, a := range e.Args {
			if mayFail(a) {
				return true
			}
		}
		if spec := kernels[e.Fn]; spec.mayFail != nil && len(e.Args) > 0 {
			return spec.mayFail(e)
		}
	}
	return false
}

// colsOf lists the input columns e reads.
func colsOf(e planner.Expr) []int {
	seen := map[int]bool{}
	var out []int
	var walk func(planner.Expr)
	walk = func(e planner.Expr) {
		switch e := e.(type) {
		case *planner.ColumnRef:
			if !seen[e.Index] {
				seen[e.Index] = true
				out = append(out, e.Index)
			}
		case *planner.Cast:
			walk(e.X)
		case *planner.Case:
			for _, w := range e.Whens {
				walk(w.Cond)
				walk(w.Result)
			}
			if e.Else != nil {
				walk(e.Else)
			}
		case *planner.Call:
			for _, a := range e.Args {
				walk(a)
			}
		}
	}
	walk(e)
	return out
}

// literalDatum converts a planner literal to a scalar.
func literalDatum(e *planner.Literal) (datum, error) {
	if e.Value == nil || e.T.Kind == planner.Null {
		return nullDatum(), nil
	}
	bad := newError(ErrUnsupported, "literal %v (%T) is not a valid %s", e.Value, e.Value, e.T)
	switch e.T.Kind {
	case planner.Boolean:
		if v, ok := e.Value.(bool); ok {
			return datum{b: v}, nil
		}
	case planner.TinyInt, planner.SmallInt, planner.Int, planner.BigInt, planner.Date, planner.Time, planner.Timestamp, planner.TimestampLTZ,
		planner.IntervalDayTime, planner.IntervalYearMonth:
		switch v := e.Value.(type) {
		case int32:
			return datum{i: int64(v)}, nil
		case int64:
			return datum{i: v}, nil
		case int:
			return datum{i: int64(v)}, nil
		}
	case planner.Double, planner.Float:
		switch v := e.Value.(type) {
		case float64:
			return datum{f: v}, nil
		case int64:
			return datum{f: float64(v)}, nil
		case int32:
			return datum{f: float64(v)}, nil
		}
	case planner.Decimal:
		if v, ok := e.Value.(string); ok {
			if d, ok := parseDecimal(v, e.T.Precision, e.T.Scale); ok {
				return datum{d: d}, nil
			}
		}
	case planner.String:
		if v, ok := e.Value.(string); ok {
			return datum{s: v}, nil
		}
	}
	return datum{}, bad
}
