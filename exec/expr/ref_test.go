package expr

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

// A row-at-a-time reference evaluator: a second, naive implementation of the semantics of
// arithmetic, comparisons, logic, CASE, COALESCE, NULLIF, IN, LIKE and string functions,
// used to check the vectorized kernels on random expressions over random data.

var errRefDivZero = errors.New("division by zero")
var errRefCast = errors.New("cannot cast")

type refRow []any // nil, int32, int64, float64, string, bool

func refEval(e planner.Expr, row refRow) (any, error) {
	switch e := e.(type) {
	case *planner.ColumnRef:
		return row[e.Index], nil
	case *planner.Literal:
		return e.Value, nil
	case *planner.Cast:
		v, err := refEval(e.X, row)
		if err != nil || v == nil {
			return nil, err
		}
		return refCast(v, e.T, e.Try)
	case *planner.Case:
		for _, w := range e.Whens {
			c, err := refEval(w.Cond, row)
			if err != nil {
				return nil, err
			}
			if c == true {
				return refEval(w.Result, row)
			}
		}
		if e.Else == nil {
			return nil, nil
		}
		return refEval(e.Else, row)
	case *planner.Call:
		return refCall(e, row)
	}
	panic(fmt.Sprintf("ref: %T", e))
}

func refCall(e *planner.Call, row refRow) (any, error) {
	switch e.Fn {
	case planner.FnAnd, planner.FnOr:
		or := e.Fn == planner.FnOr
		var acc any = !or
		for _, a := range e.Args {
			if acc == or {
				return acc, nil
			}
			v, err := refEval(a, row)
			if err != nil {
				return nil, err
			}
			switch {
			case v == or:
				acc = or
			case v == nil:
				acc = nil
			}
		}
		return acc, nil
	case planner.FnCoalesce:
		for _, a := range e.Args {
			v, err := refEval(a, row)
			if err != nil || v != nil {
				return v, err
			}
		}
		return nil, nil
	case planner.FnIn:
		x, err := refEval(e.Args[0], row)
		if err != nil {
			return nil, err
		}
		var acc any = false
		for _, it := range e.Args[1:] {
			v, err := refEval(it, row)
			if err != nil {
				return nil, err
			}
			if x == nil || v == nil {
				acc = nil
			} else if refEq(x, v) {
				return true, nil
			}
		}
		return acc, nil
	}
	args := make([]any, len(e.Args))
	anyNull := false
	for i, a := range e.Args {
		v, err := refEval(a, row)
		if err != nil {
			return nil, err
		}
		args[i] = v
		anyNull = anyNull || v == nil
	}
	switch e.Fn {
	case planner.FnIsNull:
		return args[0] == nil, nil
	case planner.FnIsNotNull:
		return args[0] != nil, nil
	case planner.FnIsTrue:
		return args[0] == true, nil
	case planner.FnIsNotTrue:
		return args[0] != true, nil
	case planner.FnIsFalse:
		return args[0] == false, nil
	case planner.FnIsNotFalse:
		return args[0] != false, nil
	case planner.FnNullIf:
		if args[0] == nil || (args[1] != nil && refEq(args[0], args[1])) {
			return nil, nil
		}
		return args[0], nil
	}
	if anyNull {
		return nil, nil
	}
	a := args[0]
	switch e.Fn {
	case planner.FnAdd, planner.FnSub, planner.FnMul, planner.FnDiv, planner.FnMod:
		return refArith(e.Fn, a, args[1])
	case planner.FnNeg:
		switch v := a.(type) {
		case int32:
			return -v, nil
		case int64:
			return -v, nil
		}
		return -a.(float64), nil
	case planner.FnAbs:
		switch v := a.(type) {
		case int32:
			if v < 0 {
				v = -v
			}
			return v, nil
		case int64:
			if v < 0 {
				v = -v
			}
			return v, nil
		}
		return math.Abs(a.(float64)), nil
	case planner.FnEq, planner.FnNe, planner.FnLt, planner.FnLe, planner.FnGt, planner.FnGe:
		if f, ok := a.(float64); ok && (math.IsNaN(f) || math.IsNaN(args[1].(float64))) {
			return e.Fn == planner.FnNe, nil
		}
		c := refCompare(a, args[1])
		return map[planner.Func]bool{planner.FnEq: c == 0, planner.FnNe: c != 0, planner.FnLt: c < 0,
			planner.FnLe: c <= 0, planner.FnGt: c > 0, planner.FnGe: c >= 0}[e.Fn], nil
	case planner.FnNot:
		return !a.(bool), nil
	case planner.FnLike:
		return refLike(a.(string), args[1].(string)), nil
	case planner.FnConcat:
		var b strings.Builder
		for _, v := range args {
			b.WriteString(v.(string))
		}
		return b.String(), nil
	case planner.FnUpper:
		return strings.ToUpper(a.(string)), nil
	case planner.FnLower:
		return strings.ToLower(a.(string)), nil
	case planner.FnCharLength:
		return int32(utf8.RuneCountInString(a.(string))), nil
	case planner.FnSubstring:
		length := int32(math.MaxInt32)
		if len(args) > 2 {
			length = args[2].(int32)
		}
		return refSubstring(a.(string), args[1].(int32), length), nil
	case planner.FnTrim:
		return strings.Trim(a.(string), args[1].(string)), nil
	case planner.FnReplace:
		return strings.ReplaceAll(a.(string), args[1].(string), args[2].(string)), nil
	case planner.FnPosition:
		h := []rune(args[1].(string))
		n := []rune(a.(string))
		for i := 0; i+len(n) <= len(h); i++ {
			if string(h[i:i+len(n)]) == string(n) {
				return int32(i + 1), nil
			}
		}
		return int32(0), nil
	}
	panic("ref: " + string(e.Fn))
}

func refArith(fn planner.Func, a, b any) (any, error) {
	switch x := a.(type) {
	case int32:
		y := b.(int32)
		if (fn == planner.FnDiv || fn == planner.FnMod) && y == 0 {
			return nil, errRefDivZero
		}
		switch fn {
		case planner.FnAdd:
			return x + y, nil
		case planner.FnSub:
			return x - y, nil
		case planner.FnMul:
			return x * y, nil
		case planner.FnDiv:
			return x / y, nil
		}
		return x % y, nil
	case int64:
		y := b.(int64)
		if (fn == planner.FnDiv || fn == planner.FnMod) && y == 0 {
			return nil, errRefDivZero
		}
		switch fn {
		case planner.FnAdd:
			return x + y, nil
		case planner.FnSub:
			return x - y, nil
		case planner.FnMul:
			return x * y, nil
		case planner.FnDiv:
			return x / y, nil
		}
		return x % y, nil
	}
	x, y := a.(float64), b.(float64)
	switch fn {
	case planner.FnAdd:
		return x + y, nil
	case planner.FnSub:
		return x - y, nil
	case planner.FnMul:
		return x * y, nil
	case planner.FnDiv:
		return x / y, nil
	}
	return math.Mod(x, y), nil
}

func refCompare(a, b any) int {
	switch x := a.(type) {
	case int32:
		return cmpInts(int64(x), int64(b.(int32)))
	case int64:
		return cmpInts(x, b.(int64))
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		return cmpInts(int64(b2i(x)), int64(b2i(b.(bool))))
	}
	panic("ref compare")
}

// refEq is SQL =, false for NaN as Java's ==.
func refEq(a, b any) bool {
	if f, ok := a.(float64); ok {
		return f == b.(float64)
	}
	return refCompare(a, b) == 0
}

func cmpInts(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func refCast(v any, t planner.Type, try bool) (any, error) {
	fail := func() (any, error) {
		if try {
			return nil, nil
		}
		return nil, errRefCast
	}
	switch t.Kind {
	case planner.Int:
		switch x := v.(type) {
		case int64:
			if x < math.MinInt32 || x > math.MaxInt32 {
				return fail()
			}
			return int32(x), nil
		case string:
			n, err := fmt.Sscan(strings.TrimSpace(x), new(int32))
			_ = n
			var r int32
			if _, err2 := fmt.Sscanf(strings.TrimSpace(x), "%d", &r); err != nil || err2 != nil || fmt.Sprint(r) != strings.TrimPrefix(strings.TrimSpace(x), "+") {
				return fail()
			}
			return r, nil
		}
	case planner.BigInt:
		return int64(v.(int32)), nil
	case planner.Double:
		switch x := v.(type) {
		case int32:
			return float64(x), nil
		case int64:
			return float64(x), nil
		}
	case planner.String:
		switch x := v.(type) {
		case int32, int64:
			return fmt.Sprint(x), nil
		}
	}
	panic(fmt.Sprintf("ref cast %T to %s", v, t))
}

func refSubstring(s string, pos, length int32) any {
	if length < 0 {
		return nil
	}
	r := []rune(s)
	n := int32(len(r))
	var start int32
	switch {
	case pos > 0:
		start = pos - 1
	case pos < 0:
		start = n + pos
	}
	if start < 0 || start >= n {
		return ""
	}
	end := n
	if int64(start)+int64(length) < int64(n) {
		end = start + length
	}
	return string(r[start:end])
}

// refLike matches by recursion over runes.
func refLike(s, p string) bool {
	sr, pr := []rune(s), []rune(p)
	var m func(i, j int) bool
	m = func(i, j int) bool {
		if j == len(pr) {
			return i == len(sr)
		}
		switch pr[j] {
		case '%':
			for k := i; k <= len(sr); k++ {
				if m(k, j+1) {
					return true
				}
			}
			return false
		case '_':
			return i < len(sr) && m(i+1, j+1)
		}
		return i < len(sr) && sr[i] == pr[j] && m(i+1, j+1)
	}
	return m(0, 0)
}

// exprGen builds random well-typed expressions over the reference schema.
type exprGen struct{ r *rand.Rand }

var refSchema = sch("a", tInt, "b", tInt, "x", tBig, "y", tBig, "d", tDbl, "s", tStr, "u", tStr, "p", tBool)

func (g *exprGen) pick(n int) int { return g.r.Intn(n) }

func (g *exprGen) colOf(t planner.Type) planner.Expr {
	var idx []int
	for i, c := range refSchema {
		if c.Type == t {
			idx = append(idx, i)
		}
	}
	i := idx[g.pick(len(idx))]
	return col(i, refSchema[i].Name, t)
}

func (g *exprGen) literal(t planner.Type) planner.Expr {
	if g.pick(12) == 0 {
		return null(t)
	}
	switch t.Kind {
	case planner.Int:
		return i32(int32(g.pick(7) - 3))
	case planner.BigInt:
		return i64(int64(g.pick(7) - 3))
	case planner.Double:
		return f64(float64(g.pick(9)-4) / 2)
	case planner.String:
		return str([]string{"", "a", "ab", "é", "B", "abc", " a "}[g.pick(7)])
	}
	return boolean(g.pick(2) == 0)
}

func (g *exprGen) gen(t planner.Type, depth int) planner.Expr {
	if depth <= 0 || g.pick(4) == 0 {
		if g.pick(3) == 0 {
			return g.literal(t)
		}
		return g.colOf(t)
	}
	d := depth - 1
	switch g.pick(5) {
	case 0:
		return caseOf(t, g.maybe(t, d), g.gen(tBool, d), g.gen(t, d), g.gen(tBool, d), g.gen(t, d))
	case 1:
		return call(planner.FnCoalesce, t, g.gen(t, d), g.gen(t, d), g.gen(t, d))
	case 2:
		if t.Kind != planner.Boolean {
			return call(planner.FnNullIf, t, g.gen(t, d), g.gen(t, d))
		}
	}
	switch t.Kind {
	case planner.Int, planner.BigInt, planner.Double:
		switch g.pick(6) {
		case 0:
			return call(planner.FnNeg, t, g.gen(t, d))
		case 1:
			return call(planner.FnAbs, t, g.gen(t, d))
		case 2:
			switch t.Kind {
			case planner.Int:
				if g.pick(2) == 0 {
					return call([]planner.Func{planner.FnCharLength}[0], t, g.gen(tStr, d))
				}
				return cast(g.gen(tBig, d), tInt)
			case planner.BigInt:
				return cast(g.gen(tInt, d), tBig)
			}
			return cast(g.gen(tInt, d), tDbl)
		case 3:
			if t.Kind == planner.Int {
				return call(planner.FnPosition, t, g.gen(tStr, d), g.gen(tStr, d))
			}
		}
		fns := []planner.Func{planner.FnAdd, planner.FnSub, planner.FnMul, planner.FnDiv, planner.FnMod}
		return call(fns[g.pick(len(fns))], t, g.gen(t, d), g.gen(t, d))
	case planner.String:
		switch g.pick(8) {
		case 0:
			return call(planner.FnUpper, t, g.gen(t, d))
		case 1:
			return call(planner.FnLower, t, g.gen(t, d))
		case 2:
			args := []planner.Expr{g.gen(t, d), g.gen(tInt, d)}
			if g.pick(2) == 0 {
				args = append(args, g.gen(tInt, d))
			}
			return call(planner.FnSubstring, t, args...)
		case 3:
			return call(planner.FnConcat, t, g.gen(t, d), g.gen(t, d))
		case 4:
			return call(planner.FnTrim, t, g.gen(t, d), g.gen(t, d))
		case 5:
			return call(planner.FnReplace, t, g.gen(t, d), g.gen(t, d), g.gen(t, d))
		case 6:
			return cast(g.gen(tInt, d), tStr)
		}
		return g.colOf(t)
	}
	switch g.pick(7) {
	case 0, 1:
		ct := []planner.Type{tInt, tBig, tDbl, tStr, tBool}[g.pick(5)]
		fns := []planner.Func{planner.FnEq, planner.FnNe, planner.FnLt, planner.FnLe, planner.FnGt, planner.FnGe}
		return pred(fns[g.pick(len(fns))], g.gen(ct, d), g.gen(ct, d))
	case 2:
		fn := planner.FnAnd
		if g.pick(2) == 0 {
			fn = planner.FnOr
		}
		args := []planner.Expr{g.gen(tBool, d), g.gen(tBool, d)}
		if g.pick(3) == 0 {
			args = append(args, g.gen(tBool, d))
		}
		return pred(fn, args...)
	case 3:
		fns := []planner.Func{planner.FnNot, planner.FnIsNull, planner.FnIsNotNull, planner.FnIsTrue,
			planner.FnIsNotTrue, planner.FnIsFalse, planner.FnIsNotFalse}
		fn := fns[g.pick(len(fns))]
		if fn == planner.FnIsNull || fn == planner.FnIsNotNull {
			return pred(fn, g.gen([]planner.Type{tInt, tDbl, tStr}[g.pick(3)], d))
		}
		return pred(fn, g.gen(tBool, d))
	case 4:
		ct := []planner.Type{tInt, tBig, tStr}[g.pick(3)]
		args := []planner.Expr{g.gen(ct, d)}
		for k := 0; k < 1+g.pick(4); k++ {
			if g.pick(3) == 0 {
				args = append(args, g.gen(ct, d))
			} else {
				args = append(args, g.literal(ct))
			}
		}
		return pred(planner.FnIn, args...)
	case 5:
		pats := []string{"a%", "%b", "%a%", "_", "a_c", "%", "é%", "a%c%"}
		return pred(planner.FnLike, g.gen(tStr, d), str(pats[g.pick(len(pats))]))
	}
	return g.colOf(tBool)
}

func (g *exprGen) maybe(t planner.Type, d int) planner.Expr {
	if g.pick(3) == 0 {
		return nil
	}
	return g.gen(t, d)
}

// refData builds a random record and its rows.
func refData(r *rand.Rand, mem memory.Allocator, n int) (arrow.Record, []refRow) {
	bld := array.NewRecordBuilder(mem, arrowSchemaOf(refSchema))
	defer bld.Release()
	rows := make([]refRow, n)
	strs := []string{"", "a", "ab", "abc", "B", "é", "aéc", " a ", "cab", "ba"}
	for i := range rows {
		row := make(refRow, len(refSchema))
		for c := range refSchema {
			if r.Intn(5) == 0 {
				bld.Field(c).AppendNull()
				continue
			}
			switch c {
			case 0, 1:
				v := int32(r.Intn(7) - 3)
				if r.Intn(20) == 0 {
					v = math.MaxInt32
				}
				bld.Field(c).(*array.Int32Builder).Append(v)
				row[c] = v
			case 2, 3:
				v := int64(r.Intn(7) - 3)
				if r.Intn(20) == 0 {
					v = 1 << 40
				}
				bld.Field(c).(*array.Int64Builder).Append(v)
				row[c] = v
			case 4:
				v := float64(r.Intn(9)-4) / 2
				bld.Field(c).(*array.Float64Builder).Append(v)
				row[c] = v
			case 5, 6:
				v := strs[r.Intn(len(strs))]
				bld.Field(c).(*array.StringBuilder).Append(v)
				row[c] = v
			case 7:
				v := r.Intn(2) == 0
				bld.Field(c).(*array.BooleanBuilder).Append(v)
				row[c] = v
			}
		}
		rows[i] = row
	}
	return bld.NewRecord(), rows
}

// valueAt reads row i of an array as a reference value.
func valueAt(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	}
	return fmt.Sprintf("unexpected %T", a)
}

func sameRef(a, b any) bool {
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && (x == y || (math.IsNaN(x) && math.IsNaN(y)))
	}
	return a == b
}

// TestReference compares Eval and Select against the reference evaluator on random
// expressions over random data with NULLs, on whole records and on slices of them.
var (
	refSeed  = flag.Int64("ref.seed", 1, "seed of TestReference")
	refExprs = flag.Int("ref.n", 3000, "expressions TestReference checks")
)

func TestReference(t *testing.T) {
	exprs := *refExprs
	if testing.Short() {
		exprs /= 10
	}
	r := rand.New(rand.NewSource(*refSeed))
	g := &exprGen{r: r}
	// Inputs come from a clean allocator; evaluation allocates dirty memory.
	inMem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer inMem.AssertSize(t, 0)
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	mem := dirtyAllocator{checked}
	types := []planner.Type{tInt, tBig, tDbl, tStr, tBool, tBool}
	matched, failing := 0, 0
	for k := 0; k < exprs; k++ {
		n := 1 + r.Intn(70)
		if r.Intn(8) == 0 {
			n = 1 + r.Intn(600)
		}
		rec, rows := refData(r, inMem, n)
		e := g.gen(types[r.Intn(len(types))], 1+r.Intn(5))
		off := 0
		if n > 2 && r.Intn(2) == 0 { // evaluate a slice of the record
			off = 1 + r.Intn(n/2)
			sub := rec.NewSlice(int64(off), int64(n))
			rec.Release()
			rec, rows = sub, rows[off:]
		}
		var want []any
		var refErr error
		for _, row := range rows {
			v, err := refEval(e, row)
			if err != nil {
				refErr = err
				break
			}
			want = append(want, v)
		}
		ev, err := Compile(e, mem, nil)
		if err != nil {
			t.Fatalf("Compile(%s): %v", e, err)
		}
		got, err := ev.Eval(rec)
		switch {
		case refErr != nil && err == nil:
			got.Release()
			t.Fatalf("%s: Eval succeeded, reference failed with %v", e, refErr)
		case refErr == nil && err != nil:
			t.Fatalf("%s: Eval failed with %v, reference succeeded", e, err)
		case err != nil:
			failing++
		default:
			for i := range want {
				if v := valueAt(got, i); !sameRef(v, want[i]) {
					t.Fatalf("%s row %d (%v): got %#v, want %#v\nrows %v\ngot %v\noff %d rec %v", e, i, rows[i], v, want[i], rows, got, off, rec.Columns())
				}
			}
			got.Release()
			matched++
			if e.Type().Kind == planner.Boolean {
				checkRefPredicate(t, mem, e, rec, want)
			}
		}
		rec.Release()
	}
	t.Logf("%d expressions matched the reference, %d failed in both", matched, failing)
}

func checkRefPredicate(t *testing.T, mem memory.Allocator, e planner.Expr, rec arrow.Record, want []any) {
	t.Helper()
	p, err := CompilePredicate(e, mem, nil)
	if err != nil {
		t.Fatalf("CompilePredicate(%s): %v", e, err)
	}
	sel, err := p.Select(rec, nil)
	if err != nil {
		t.Fatalf("Select(%s): %v", e, err)
	}
	var exp []int32
	for i, v := range want {
		if v == true {
			exp = append(exp, int32(i))
		}
	}
	if fmt.Sprint(sel) != fmt.Sprint(exp) && !(len(sel) == 0 && len(exp) == 0) {
		t.Fatalf("Select(%s) = %v, want %v", e, sel, exp)
	}
}
