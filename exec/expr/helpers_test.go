package expr

import (
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// Expression builders for tests.

func col(i int, name string, t planner.Type) *planner.ColumnRef {
	return &planner.ColumnRef{Index: i, Name: name, T: t}
}

func lit(v any, t planner.Type) *planner.Literal { return &planner.Literal{Value: v, T: t} }
func null(t planner.Type) *planner.Literal       { return &planner.Literal{T: t} }
func i32(v int32) *planner.Literal               { return lit(v, planner.TypeInt) }
func i64(v int64) *planner.Literal               { return lit(v, planner.TypeBigInt) }
func f64(v float64) *planner.Literal             { return lit(v, planner.TypeDouble) }
func str(v string) *planner.Literal              { return lit(v, planner.TypeString) }
func boolean(v bool) *planner.Literal            { return lit(v, planner.TypeBoolean) }
func decLit(v string, p, s int) *planner.Literal { return lit(v, planner.DecimalType(p, s)) }

func call(fn planner.Func, t planner.Type, args ...planner.Expr) *planner.Call {
	return &planner.Call{Fn: fn, Args: args, T: t}
}

func pred(fn planner.Func, args ...planner.Expr) *planner.Call {
	return call(fn, planner.TypeBoolean, args...)
}

func cast(x planner.Expr, t planner.Type) *planner.Cast { return &planner.Cast{X: x, T: t} }
func tryCast(x planner.Expr, t planner.Type) *planner.Cast {
	return &planner.Cast{X: x, T: t, Try: true}
}

func caseOf(t planner.Type, els planner.Expr, whens ...planner.Expr) *planner.Case {
	c := &planner.Case{T: t, Else: els}
	for i := 0; i+1 < len(whens); i += 2 {
		c.Whens = append(c.Whens, planner.When{Cond: whens[i], Result: whens[i+1]})
	}
	return c
}

// record builds a record from JSON rows over a planner schema.
func record(t testing.TB, mem memory.Allocator, schema planner.Schema, rows string) arrow.Record {
	t.Helper()
	rec, _, err := array.RecordFromJSON(mem, exec.ArrowSchema(schema), strings.NewReader(rows), array.WithUseNumber())
	if err != nil {
		t.Fatalf("RecordFromJSON: %v", err)
	}
	return rec
}

// arrayOf builds an array of SQL type typ from JSON values.
func arrayOf(t testing.TB, mem memory.Allocator, typ planner.Type, values string) arrow.Array {
	t.Helper()
	dt := exec.ArrowType(typ)
	if typ.Kind == planner.Null {
		dt = arrow.Null
	}
	arr, _, err := array.FromJSON(mem, dt, strings.NewReader(values), array.WithUseNumber())
	if err != nil {
		t.Fatalf("FromJSON(%s, %s): %v", typ, values, err)
	}
	return arr
}

// sameValues reports whether two arrays hold the same values, ignoring differences in the
// timestamp zone annotation and NULL type layout.
func sameValues(a, b arrow.Array) bool {
	if a.Len() != b.Len() {
		return false
	}
	if a.DataType().ID() == arrow.NULL || b.DataType().ID() == arrow.NULL {
		return a.NullN() == a.Len() && b.NullN() == b.Len()
	}
	if fa, ok := a.(*array.Float64); ok {
		fb, ok := b.(*array.Float64)
		if !ok {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			x, y := fa.Value(i), fb.Value(i)
			if a.IsNull(i) != b.IsNull(i) || (a.IsValid(i) && x != y && !(math.IsNaN(x) && math.IsNaN(y))) {
				return false
			}
		}
		return true
	}
	if !arrow.TypeEqual(a.DataType(), b.DataType()) {
		if a.DataType().ID() != arrow.TIMESTAMP || b.DataType().ID() != arrow.TIMESTAMP {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) != b.IsNull(i) || (a.IsValid(i) && a.(*array.Timestamp).Value(i) != b.(*array.Timestamp).Value(i)) {
				return false
			}
		}
		return true
	}
	return array.Equal(a, b)
}

// evalCase is one expression over a group's input: want is the JSON array of expected
// values (typed by the expression's type), or err a substring of the expected error.
type evalCase struct {
	name string
	e    planner.Expr
	want string
	err  string
}

type evalGroup struct {
	schema planner.Schema
	rows   string
	env    *Env
	cases  []evalCase
}

// run checks every case on the whole input and (cases without errors) on the input sliced
// from row 1, so kernels meet arrays at an offset; BOOLEAN cases also run as a Predicate.
func (g evalGroup) run(t *testing.T) {
	for _, tc := range g.cases {
		name := tc.name
		if name == "" {
			name = tc.e.String()
		}
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := record(t, mem, g.schema, g.rows)
			defer rec.Release()
			// Inputs come from clean memory, results from dirty memory.
			ev, err := Compile(tc.e, dirtyAllocator{mem}, g.env)
			if err != nil {
				if tc.err != "" && strings.Contains(err.Error(), tc.err) {
					return
				}
				t.Fatalf("Compile(%s): %v", tc.e, err)
			}
			got, err := ev.Eval(rec)
			if tc.err != "" {
				if err == nil {
					got.Release()
					t.Fatalf("Eval(%s) succeeded, want error %q", tc.e, tc.err)
				}
				if !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Eval(%s) error %q, want %q", tc.e, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Eval(%s): %v", tc.e, err)
			}
			want := arrayOf(t, mem, tc.e.Type(), tc.want)
			defer want.Release()
			checkArray(t, tc.e, got, want)
			got.Release()

			// The same on the input sliced at row 1.
			if rec.NumRows() > 1 {
				sub := rec.NewSlice(1, rec.NumRows())
				defer sub.Release()
				got, err := ev.Eval(sub)
				if err != nil {
					t.Fatalf("Eval(%s) on a slice: %v", tc.e, err)
				}
				wantSub := array.NewSlice(want, 1, int64(want.Len()))
				defer wantSub.Release()
				checkArray(t, tc.e, got, wantSub)
				got.Release()
			}
			// And on no rows.
			empty := rec.NewSlice(0, 0)
			defer empty.Release()
			if got, err := ev.Eval(empty); err != nil || got.Len() != 0 {
				t.Fatalf("Eval(%s) on no rows = %v, %v", tc.e, got, err)
			} else {
				got.Release()
			}
			if tc.e.Type().Kind == planner.Boolean {
				checkPredicate(t, dirtyAllocator{mem}, tc.e, g.env, rec, want)
			}
		})
	}
}

func checkArray(t *testing.T, e planner.Expr, got, want arrow.Array) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%s: got %d rows, want %d", e, got.Len(), want.Len())
	}
	if !sameValues(got, want) {
		t.Fatalf("%s:\n got  %v\n want %v", e, got, want)
	}
}

// checkPredicate runs a BOOLEAN expression as a filter and compares with its TRUE rows.
func checkPredicate(t *testing.T, mem memory.Allocator, e planner.Expr, env *Env, rec arrow.Record, want arrow.Array) {
	t.Helper()
	p, err := CompilePredicate(e, mem, env)
	if err != nil {
		t.Fatalf("CompilePredicate(%s): %v", e, err)
	}
	sel, err := p.Select(rec, nil)
	if err != nil {
		t.Fatalf("Select(%s): %v", e, err)
	}
	var exp []int32
	for i := 0; i < want.Len(); i++ {
		if want.DataType().ID() == arrow.BOOL && want.IsValid(i) && want.(*array.Boolean).Value(i) {
			exp = append(exp, int32(i))
		}
	}
	if len(sel) != len(exp) {
		t.Fatalf("Select(%s) = %v, want %v", e, sel, exp)
	}
	for i := range sel {
		if sel[i] != exp[i] {
			t.Fatalf("Select(%s) = %v, want %v", e, sel, exp)
		}
	}
}

func arrowSchemaOf(s planner.Schema) *arrow.Schema { return exec.ArrowSchema(s) }

// sch builds a schema from name, type pairs.
func sch(pairs ...any) planner.Schema {
	var s planner.Schema
	for i := 0; i+1 < len(pairs); i += 2 {
		s = append(s, planner.Column{Name: pairs[i].(string), Type: pairs[i+1].(planner.Type)})
	}
	return s
}

// dirtyAllocator fills every allocation with garbage, as allocators that do not zero memory
// (C malloc) may hand it out, so tests catch kernels that rely on zeroed buffers.
// dirtyAllocator hands out garbage-filled buffers with room past their length, as a
// buffer pool's size classes do: a kernel that writes past a buffer's length (appending
// to Buf() up to its capacity) loses those bytes when the buffer grows.
type dirtyAllocator struct{ memory.Allocator }

func (d dirtyAllocator) Allocate(size int) []byte {
	b := d.Allocator.Allocate(1 << bits.Len(uint(size)))
	for i := range b {
		b[i] = 0xa5
	}
	return b[:size]
}

func (d dirtyAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := d.Allocate(size)
	copy(nb, b)
	d.Free(b)
	return nb
}

func (d dirtyAllocator) Free(b []byte) { d.Allocator.Free(b[:cap(b)]) }
