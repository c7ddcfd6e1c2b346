package expr

import (
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// compileIn compiles x IN (list). A constant list becomes a set probed once per row: TRUE when
// x is in it, else NULL if the list holds a NULL, else FALSE; NULL when x is NULL. Otherwise
// it is x = a OR x = b ..., as Calcite rewrites it.
func (cp *compiler) compileIn(e *planner.Call) (node, error) {
	x, items := e.Args[0], e.Args[1:]
	p := physOf(x.Type())
	allConst := true
	for _, it := range items {
		if it.Type().Kind != planner.Null && (physOf(it.Type()) != p || it.Type().Scale != x.Type().Scale) {
			return nil, newError(ErrUnsupported, "IN list item %s is %s, want %s", it, it.Type(), x.Type())
		}
		allConst = allConst && isConstExpr(it)
	}
	if allConst {
		var consts []datum
		for _, it := range items {
			nd, err := cp.compile(it)
			if err != nil {
				return nil, err
			}
			d, ok := isConst(nd)
			if !ok {
				allConst = false
				break
			}
			consts = append(consts, d)
		}
		if fn := inKernel(p, consts); allConst && fn != nil {
			xn, err := cp.compile(x)
			if err != nil {
				return nil, err
			}
			return cp.call("IN", []node{xn}, []planner.Type{x.Type()}, planner.TypeBoolean, true, fn)
		}
	}
	ors := make([]planner.Expr, len(items))
	for i, it := range items {
		ors[i] = &planner.Call{Fn: planner.FnEq, Args: []planner.Expr{x, it}, T: planner.TypeBoolean}
	}
	if len(ors) == 1 {
		return cp.compile(ors[0])
	}
	return cp.compile(&planner.Call{Fn: planner.FnOr, Args: ors, T: planner.TypeBoolean})
}

// valueSet is a small set: a linear scan up to 8 values, a map beyond.
type valueSet[T comparable] struct {
	list []T
	m    map[T]struct{}
}

func newValueSet[T comparable](items []T) *valueSet[T] {
	s := &valueSet[T]{list: items}
	if len(items) > 8 {
		s.m = make(map[T]struct{}, len(items))
		for _, v := range items {
			s.m[v] = struct{}{}
		}
	}
	return s
}

func (s *valueSet[T]) has(v T) bool {
	if s.m != nil {
		_, ok := s.m[v]
		return ok
	}
	for _, x := range s.list {
		if x == v {
			return true
		}
	}
	return false
}

// inKernel returns the set-probing kernel for a constant list, or nil for types it does not
// cover (they use the OR form).
func inKernel(p phys, items []datum) kernelFn {
	hasNull := false
	var nonNull []datum
	for _, d := range items {
		if d.null {
			hasNull = true
		} else {
			nonNull = append(nonNull, d)
		}
	}
	switch p {
	case physI32:
		return inFixed(collect(nonNull, func(d datum) int32 { return int32(d.i) }), hasNull)
	case physI64:
		return inFixed(collect(nonNull, func(d datum) int64 { return d.i }), hasNull)
	case physF64:
		return inFixed(collect(nonNull, func(d datum) float64 { return d.f }), hasNull)
	case physDec:
		return inFixed(collect(nonNull, func(d datum) dec { return d.d }), hasNull)
	case physStr:
		set := newValueSet(collect(nonNull, func(d datum) string { return d.s }))
		return func(c *ctx, n int, args []datum) (datum, error) {
			s := strColOf(args[0])
			return inRows(c, n, args, hasNull, func(i int) bool { return set.has(s.at(i)) })
		}
	}
	return nil
}

func collect[T any](ds []datum, f func(datum) T) []T {
	out := make([]T, len(ds))
	for i, d := range ds {
		out[i] = f(d)
	}
	return out
}

func inFixed[T int32 | int64 | float64 | dec](items []T, hasNull bool) kernelFn {
	set := newValueSet(items)
	return func(c *ctx, n int, args []datum) (datum, error) {
		v := arrowbuf.Values[T](args[0].arr)
		return inRows(c, n, args, hasNull, func(i int) bool { return set.has(v[i]) })
	}
}

func inRows(c *ctx, n int, args []datum, hasNull bool, has func(i int) bool) (datum, error) {
	return boolRows(c, n, args, func(i int) (bool, bool, error) {
		if has(i) {
			return true, true, nil
		}
		return false, !hasNull, nil
	})
}
