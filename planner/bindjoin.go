package planner

import (
	"math"

	"github.com/streamsql/streamsql/parser"
)

// join plans `left JOIN right ON cond`. The ON condition's equalities between a left
// and a right column become the join keys; bounds on the difference of the two sides'
// event times make an interval join; equal window_start and window_end of the same
// window function on both sides make a window join. The rest is the residual condition.
func (p *Planner) join(t *parser.JoinTable, depth int) (Node, *scope, error) {
	if u, ok := t.Right.(*parser.UnnestTable); ok {
		return p.unnest(t, u, depth)
	}
	if r, ok := t.Right.(*parser.TableName); ok && r.AsOf != nil {
		return p.systemTimeJoin(t, r, depth)
	}
	left, lsc, err := p.from(t.Left, depth)
	if err != nil {
		return nil, nil, err
	}
	right, rsc, err := p.from(t.Right, depth)
	if err != nil {
		return nil, nil, err
	}
	sc := &scope{cols: append(append([]scopeCol(nil), lsc.cols...), rsc.cols...)}
	b := &exprBinder{sc: sc}
	cond, err := b.bind(t.On)
	if err != nil {
		return nil, nil, err
	}
	checked, err := b.expect(t.On, cond, TypeBoolean)
	if err != nil {
		return nil, nil, errorf(t.On, "JOIN ... ON needs a BOOLEAN condition, got %s", cond.Type().Nullable())
	}
	cond = checked
	n := &Join{Left: left, Right: right, Kind: t.Kind}
	nl := len(left.Schema())
	var residual []Expr
	for _, c := range conjuncts(cond) {
		if l, r, ok := equiKey(c, nl); ok {
			n.LeftKeys, n.RightKeys = append(n.LeftKeys, l), append(n.RightKeys, r-nl)
			continue
		}
		residual = append(residual, c)
	}
	if !left.Updating() && !right.Updating() && !windowJoin(n) {
		residual = timeJoin(n, residual)
	}
	if len(residual) > 0 {
		n.Residual = and(residual)
	}
	// Columns of an outer join's padded side may be NULL.
	for i := range sc.cols {
		if n.Outer(0) && i >= nl || n.Outer(1) && i < nl {
			sc.cols[i].typ.NotNull = false
		}
	}
	return n, sc, nil
}

// conjuncts splits a condition at its top-level ANDs.
func conjuncts(e Expr) []Expr { return appendConjuncts(nil, e) }

// appendConjuncts appends e's conjuncts to out: one slice for a whole chain of ANDs,
// so a long one is linear.
func appendConjuncts(out []Expr, e Expr) []Expr {
	if c, ok := e.(*Call); ok && c.Fn == FnAnd {
		for _, a := range c.Args {
			out = appendConjuncts(out, a)
		}
		return out
	}
	return append(out, e)
}

func and(es []Expr) Expr {
	if len(es) == 1 {
		return es[0]
	}
	notNull := true
	for _, e := range es {
		notNull = notNull && e.Type().NotNull
	}
	return &Call{Fn: FnAnd, Args: es, T: Type{Kind: Boolean, NotNull: notNull}}
}

// timeJoin makes n, a join of insert-only inputs, an interval join when conds (its
// residual conjuncts) bound the difference of a left and a right time column, and
// returns the conjuncts left over. Bounded on both sides, event-time attributes on both
// sides make a Flink interval join: each side's rows expire once the watermark says no
// row of the other side can match them. An inner join also expires one side's rows when
// the other side's column is a window's end out of a window aggregate: that aggregate
// drops late rows, so none of its rows to come ends at or before the watermark, and the
// join's result is that of a regular join, whose state it only bounds (Nexmark's q7
// joins every bid with the maximum price of the window ending up to 10 s after it). The
// side the bounds do not expire keeps its rows, as a regular join does.
func timeJoin(n *Join, conds []Expr) []Expr {
	nl := len(n.Left.Schema())
	bounds := Interval{Lower: math.MinInt64, Upper: math.MaxInt64}
	lt, rt := -1, -1
	var rest, timed []Expr
	for _, c := range conds {
		if l, r, ok := timeBound(c, nl, &bounds, lt, rt); ok {
			lt, rt = l, r
			timed = append(timed, c)
			continue
		}
		rest = append(rest, c)
	}
	regular := append(rest, timed...) // as a regular join's residual has them
	if lt < 0 {
		return regular
	}
	rt -= nl
	lower, upper := bounds.Lower != math.MinInt64, bounds.Upper != math.MaxInt64
	switch {
	case lower && upper && rowtime(n.Left, lt) && rowtime(n.Right, rt):
	case n.Kind != "INNER":
		return regular
	default:
		// A left row matches right times up to its own - Lower, a right row left
		// times up to its own + Upper.
		leftExpires := lower && windowEnd(n.Right, rt)
		rightExpires := upper && windowEnd(n.Left, lt)
		if !leftExpires && !rightExpires {
			return regular
		}
		bounds.Kept = [2]bool{!leftExpires, !rightExpires}
	}
	n.Interval, n.LeftTime, n.RightTime = &bounds, lt, rt
	return rest
}

// windowEnd says whether column i of n is the window_end of an insert-only window
// aggregate's output, which no row comes out with at or before the watermark that has
// passed: a window's row comes out, final, when the watermark passes its end, and late
// rows, which would reopen it, are dropped.
func windowEnd(n Node, i int) bool {
	switch n := n.(type) {
	case *Aggregate:
		return n.Window != nil && i == n.WindowEnd && !n.Updating()
	case *Project:
		c, ok := n.Exprs[i].(*ColumnRef)
		return ok && windowEnd(n.Input, c.Index)
	case *Filter:
		return windowEnd(n.Input, i)
	}
	return false
}

// equiKey recognises left column = right column (either way round), whose values hash
// alike on both sides: the same type, or INT widened to BIGINT.
func equiKey(e Expr, nl int) (left, right int, ok bool) {
	c, isCall := e.(*Call)
	if !isCall || c.Fn != FnEq {
		return 0, 0, false
	}
	a, aok := keyColumn(c.Args[0])
	b, bok := keyColumn(c.Args[1])
	switch {
	case !aok || !bok:
		return 0, 0, false
	case a < nl && b >= nl:
		return a, b, true
	case b < nl && a >= nl:
		return b, a, true
	}
	return 0, 0, false
}

func keyColumn(e Expr) (int, bool) {
	switch e := e.(type) {
	case *ColumnRef:
		return e.Index, true
	case *Cast:
		if c, ok := e.X.(*ColumnRef); ok && c.T.Kind == Int && e.T.Kind == BigInt {
			return c.Index, true
		}
	}
	return 0, false
}

// timeBound recognises a comparison of a left and a right time column, each plus or
// minus a constant interval, and narrows bounds on left time - right time by it. Once
// one pair of columns is bound (lt, rt >= 0), only that pair is.
func timeBound(e Expr, nl int, bounds *Interval, lt, rt int) (left, right int, ok bool) {
	c, isCall := e.(*Call)
	if !isCall || len(c.Args) != 2 {
		return 0, 0, false
	}
	flip := map[Func]Func{FnLt: FnGt, FnLe: FnGe, FnGt: FnLt, FnGe: FnLe}
	op := c.Fn
	if _, isCmp := flip[op]; !isCmp {
		return 0, 0, false
	}
	a, ao, aok := timeTerm(c.Args[0])
	b, bo, bok := timeTerm(c.Args[1])
	if !aok || !bok {
		return 0, 0, false
	}
	// a + ao op b + bo, so a - b op bo - ao.
	k := bo - ao
	if a >= nl && b < nl { // right op left: left - right flip(op) -k
		a, b, op, k = b, a, flip[op], -k
	}
	if a >= nl || b < nl || (lt >= 0 && (a != lt || b != rt)) {
		return 0, 0, false
	}
	switch op {
	case FnLt:
		bounds.Upper = min(bounds.Upper, k-1)
	case FnLe:
		bounds.Upper = min(bounds.Upper, k)
	case FnGt:
		bounds.Lower = max(bounds.Lower, k+1)
	case FnGe:
		bounds.Lower = max(bounds.Lower, k)
	}
	return a, b, true
}

// timeTerm recognises a time column plus or minus a constant interval.
func timeTerm(e Expr) (col int, offset int64, ok bool) {
	switch e := e.(type) {
	case *ColumnRef:
		return e.Index, 0, e.T.Kind == Timestamp || e.T.Kind == TimestampLTZ
	case *Call:
		if e.Fn != FnAdd && e.Fn != FnSub {
			return 0, 0, false
		}
		lit, isLit := e.Args[1].(*Literal)
		if !isLit || lit.T.Kind != IntervalDayTime {
			return 0, 0, false
		}
		ms, isMs := lit.Value.(int64)
		col, _, ok := timeTerm(e.Args[0])
		if !isMs || !ok {
			return 0, 0, false
		}
		if e.Fn == FnSub {
			ms = -ms
		}
		return col, ms, true
	}
	return 0, 0, false
}

// windowJoin makes n a window join when its keys pair the window_start and the
// window_end of the same window function on both sides, or of window aggregates over
// such windows.
func windowJoin(n *Join) bool {
	var w [2]*WindowTVF
	ends := [2]int{-1, -1}
	starts := false
	for i, l := range n.LeftKeys {
		lw, lcol := finalWindowOf(n.Left, l)
		rw, rcol := finalWindowOf(n.Right, n.RightKeys[i])
		if lw == nil || rw == nil || lcol != rcol {
			continue
		}
		switch lcol {
		case "window_start":
			starts = true
		case "window_end":
			ends = [2]int{l, n.RightKeys[i]}
		default:
			continue
		}
		w = [2]*WindowTVF{lw, rw}
	}
	if !starts || ends[0] < 0 || w[0].Kind == "SESSION" ||
		w[0].Kind != w[1].Kind || w[0].Size != w[1].Size || w[0].Slide != w[1].Slide || w[0].Offset != w[1].Offset {
		return false
	}
	n.Window, n.LeftTime, n.RightTime = w[0], ends[0], ends[1]
	return true
}

// rowtime says whether column i of n is an event-time attribute: the column a
// WATERMARK is declared on, passed through projections and filters, and through a UNION
// ALL whose inputs all have it there.
func rowtime(n Node, i int) bool {
	switch n := n.(type) {
	case *WatermarkAssigner:
		return i == n.TimeCol
	case *Project:
		c, ok := n.Exprs[i].(*ColumnRef)
		return ok && rowtime(n.Input, c.Index)
	case *Filter:
		return rowtime(n.Input, i)
	case *Unnest:
		return i < len(n.Input.Schema()) && rowtime(n.Input, i)
	case *OverAggregate:
		return i < len(n.Input.Schema()) && rowtime(n.Input, i)
	case *TemporalJoin:
		return i < len(n.Left.Schema()) && rowtime(n.Left, i)
	case *Sort:
		return n.ByTime && rowtime(n.Input, i) // a bounded sort emits its rows after every watermark
	case *MatchRecognize:
		return i == n.RowtimeOut
	case *Aggregate:
		// A window aggregate's window_time: its rows come out, final, before the
		// watermark that passes their window's end (cascading windows).
		return n.Window != nil && !n.Emit.On() && i == n.WindowTimeKey()
	case *WindowTVF:
		if in := len(n.Input.Schema()); i < in {
			return rowtime(n.Input, i)
		}
	case *Union:
		for _, in := range n.Inputs {
			if !rowtime(in, i) {
				return false
			}
		}
		return true
	}
	return false
}
