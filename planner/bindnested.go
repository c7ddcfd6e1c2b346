package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/parser"
)

// This file binds the structured types: field access (t.r.f, r.f, x.f), subscripts
// (a[i], m[k]), the constructors ROW(...), ARRAY[...] and MAP[...], and their coercions.

// fieldPath applies the field accesses of a column reference's trailing parts to x.
func fieldPath(at positioned, x Expr, path []string) (Expr, error) {
	for _, name := range path {
		var err error
		if x, err = field(at, x, name); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// field binds x.name. Field names match as column names do: case-insensitively, an exact
// match first.
func field(at positioned, x Expr, name string) (Expr, error) {
	t := x.Type()
	if t.Kind != Row {
		return nil, errorf(at, "cannot read field `%s` of %s: only a ROW has fields", name, t.Nullable())
	}
	idx := -1
	var names []string
	for i, f := range t.Fields() {
		names = append(names, f.Name)
		if f.Name == name {
			idx = i
			break
		}
		if equalFold(f.Name, name) {
			if idx >= 0 {
				return nil, errorf(at, "field `%s` of %s is ambiguous", name, t.Nullable())
			}
			idx = i
		}
	}
	if idx < 0 {
		return nil, errorf(at, "%s has no field `%s`%s", t.Nullable(), name, suggest(name, names))
	}
	ft := t.Fields()[idx].Type
	ft.NotNull = ft.NotNull && t.NotNull
	return &Call{Fn: FnField, Args: []Expr{x, intLit(idx)}, T: ft}, nil
}

func intLit(i int) *Literal { return &Literal{Value: int32(i), T: Type{Kind: Int, NotNull: true}} }

// item binds x[index]: an ARRAY's element at a 1-based integer, a MAP's value at a key.
func (b *exprBinder) item(e *parser.ItemExpr) (Expr, error) {
	x, err := b.bind(e.X)
	if err != nil {
		return nil, err
	}
	i, err := b.bind(e.Index)
	if err != nil {
		return nil, err
	}
	t, it := x.Type(), i.Type()
	switch t.Kind {
	case Array:
		switch it.Kind {
		case TinyInt, SmallInt, Int, BigInt, Null:
		default:
			return nil, errorf(e.Index, "an ARRAY index must be an integer, got %s", it.Nullable())
		}
		return &Call{Fn: FnItem, Args: []Expr{x, castTo(i, TypeInt)}, T: t.Elem().Nullable()}, nil
	case Map:
		if t.Elem().IsNested() {
			return nil, errorf(e, "looking up a MAP by a key of type %s is not supported", t.Elem().Nullable())
		}
		if c, ok := commonType(t.Elem(), it); !ok || c.Nullable() != t.Elem().Nullable() && !(c.Kind == String && t.Elem().Kind == String) {
			return nil, errorf(e.Index, "the keys of %s are %s, got %s", t.Nullable(), t.Elem().Nullable(), it.Nullable())
		}
		return &Call{Fn: FnItem, Args: []Expr{x, castTo(i, t.Elem())}, T: t.Value().Nullable()}, nil
	}
	return nil, errorf(e, "cannot subscript %s: [ ] reads an ARRAY or a MAP", t.Nullable())
}

// fieldOf binds a FieldExpr, x.name on a value that is not a column reference.
func (b *exprBinder) fieldOf(e *parser.FieldExpr) (Expr, error) {
	x, err := b.bind(e.X)
	if err != nil {
		return nil, err
	}
	return field(e, x, e.Name)
}

// collection binds ARRAY[...] and MAP[...].
func (b *exprBinder) collection(e *parser.CollectionExpr) (Expr, error) {
	args, err := b.bindAll(e.Elems)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, errorf(e, "%s[] needs at least one element", e.Kind)
	}
	if e.Kind == "ARRAY" {
		return b.operator(e, FnArray, args...)
	}
	var keys, values []Expr
	for i := 0; i < len(args); i += 2 {
		keys, values = append(keys, args[i]), append(values, args[i+1])
	}
	kt, err := elementType(e, "MAP key", e.Elems, keys)
	if err != nil {
		return nil, err
	}
	vt, err := elementType(e, "MAP value", e.Elems[1:], values)
	if err != nil {
		return nil, err
	}
	for i := range args {
		if i%2 == 0 {
			args[i] = castTo(args[i], kt)
		} else {
			args[i] = castTo(args[i], vt)
		}
	}
	t := MapType(kt, vt)
	t.NotNull = true
	return &Call{Fn: FnMap, Args: args, T: t}, nil
}

// elementType is the common type of a MAP's keys or values (args, bound from every other
// of es), NOT NULL when all are.
func elementType(at positioned, what string, es []parser.Expr, args []Expr) (Type, error) {
	t := TypeNull
	notNull := true
	for i, a := range args {
		c, ok := commonType(t, a.Type())
		if !ok {
			return Type{}, errorf(es[2*i], "%s types %s and %s do not match", what, t, a.Type().Nullable())
		}
		t = c
		notNull = notNull && a.Type().NotNull
	}
	if t.Kind == Null {
		return Type{}, errorf(at, "the %s type is unknown: CAST the NULL to a type", what)
	}
	t.NotNull = notNull
	return t, nil
}

// rowOf is ROW(...)'s type: fields EXPR$0, EXPR$1, ... of the arguments' types, as Flink
// names them.
func rowOf(args []Expr) Type {
	fields := make([]Column, len(args))
	for i, a := range args {
		fields[i] = Column{Name: fmt.Sprintf("EXPR$%d", i), Type: a.Type()}
	}
	t := RowType(fields)
	t.NotNull = true
	return t
}

// arrayOf is ARRAY[...]'s type, its arguments already cast to their common type.
func arrayOf(args []Expr) Type {
	elem := TypeNull
	if len(args) > 0 {
		elem = args[0].Type()
	}
	for _, a := range args {
		elem.NotNull = elem.NotNull && a.Type().NotNull
	}
	t := ArrayType(elem)
	t.NotNull = true
	return t
}

// typedArgs refuses a NULL literal where a constructor cannot tell its type.
func typedArgs(c *CallSite) (Expr, error) {
	for i, a := range c.Args {
		if a.Type().Kind == Null {
			return nil, c.Errorf(i, "the type of NULL in %s is unknown: CAST it to a type", c.Fn.name())
		}
	}
	return c.Default(), nil
}

// nestedCommon is the type two structured types meet at: the same shape with the common
// types of their parts (field names from a), or false.
func nestedCommon(a, b Type) (Type, bool) {
	if a.Kind != b.Kind {
		return Type{}, false
	}
	part := func(x, y Type) (Type, bool) {
		c, ok := commonType(x, y)
		c.NotNull = x.NotNull && y.NotNull
		return c, ok
	}
	switch a.Kind {
	case Row:
		fa, fb := a.Fields(), b.Fields()
		if len(fa) != len(fb) {
			return Type{}, false
		}
		fields := make([]Column, len(fa))
		for i := range fa {
			t, ok := part(fa[i].Type, fb[i].Type)
			if !ok {
				return Type{}, false
			}
			fields[i] = Column{Name: fa[i].Name, Type: t}
		}
		return RowType(fields), true
	case Array:
		e, ok := part(a.Elem(), b.Elem())
		return ArrayType(e), ok
	case Map:
		k, ok1 := part(a.Elem(), b.Elem())
		v, ok2 := part(a.Value(), b.Value())
		return MapType(k, v), ok1 && ok2
	case Multiset:
		e, ok := part(a.Elem(), b.Elem())
		return MultisetType(e), ok
	}
	return Type{}, false
}

// canCastNested reports whether CAST between two structured types is allowed: the same
// shape, with parts that cast.
func canCastNested(from, to Type) bool {
	if from.Kind != to.Kind {
		return false
	}
	switch from.Kind {
	case Row:
		ff, tf := from.Fields(), to.Fields()
		if len(ff) != len(tf) {
			return false
		}
		for i := range ff {
			if !canCast(ff[i].Type, tf[i].Type) {
				return false
			}
		}
		return true
	case Array:
		return canCast(from.Elem(), to.Elem())
	case Map:
		return canCast(from.Elem(), to.Elem()) && canCast(from.Value(), to.Value())
	case Multiset:
		return canCast(from.Elem(), to.Elem())
	}
	return false
}
