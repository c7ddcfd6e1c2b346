package expr

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

// TestPredicate checks the direct selection paths, which write indices without a BOOLEAN
// array, on whole records and on slices.
func TestPredicate(t *testing.T) {
	a, b := col(0, "a", tInt), col(1, "b", tInt)
	x, d := col(2, "x", tBig), col(3, "d", tDbl)
	s, f := col(4, "s", tStr), col(5, "f", tBool)
	rows := `[{"a":1,"b":1,"x":10,"d":30.5,"s":"apple","f":true},
		{"a":2,"b":0,"x":null,"d":29,"s":"banana","f":false},
		{"a":null,"b":3,"x":30,"d":null,"s":null,"f":null},
		{"a":4,"b":null,"x":40,"d":31,"s":"cherry","f":true},
		{"a":5,"b":5,"x":50,"d":"NaN","s":"apple","f":true},
		{"a":-6,"b":-7,"x":-60,"d":-1,"s":"","f":false}]`
	cases := []struct {
		e    planner.Expr
		want []int32
	}{
		{pred(planner.FnGt, d, f64(30)), []int32{0, 3}},
		{pred(planner.FnLt, f64(30), d), []int32{0, 3}},
		{pred(planner.FnEq, a, i32(4)), []int32{3}},
		{pred(planner.FnNe, a, i32(4)), []int32{0, 1, 4, 5}},
		{pred(planner.FnLe, a, i32(2)), []int32{0, 1, 5}},
		{pred(planner.FnGe, x, i64(30)), []int32{2, 3, 4}},
		{pred(planner.FnEq, a, b), []int32{0, 4}},
		{pred(planner.FnGt, a, b), []int32{1, 5}},
		{pred(planner.FnEq, s, str("apple")), []int32{0, 4}},
		{pred(planner.FnLt, s, str("b")), []int32{0, 4, 5}},
		{pred(planner.FnGt, str("b"), s), []int32{0, 4, 5}},
		{pred(planner.FnIsNull, a), []int32{2}},
		{pred(planner.FnIsNotNull, x), []int32{0, 2, 3, 4, 5}},
		{f, []int32{0, 3, 4}},
		{pred(planner.FnNot, f), []int32{1, 5}},
		{pred(planner.FnEq, a, null(tInt)), nil},
		{boolean(true), []int32{0, 1, 2, 3, 4, 5}},
		{null(tBool), nil},
		{pred(planner.FnAnd, pred(planner.FnGt, a, i32(0)), pred(planner.FnLt, x, i64(45)), f), []int32{0, 3}},
		{pred(planner.FnAnd, pred(planner.FnIsNotNull, s), pred(planner.FnOr, f, pred(planner.FnEq, s, str("")))), []int32{0, 3, 4, 5}},
		// The division runs only on rows passing b <> 0, so b = 0 does not fail.
		{pred(planner.FnAnd, pred(planner.FnNe, b, i32(0)), pred(planner.FnGt, call(planner.FnDiv, tInt, i32(10), b), i32(1))), []int32{0, 2, 4}},
		{pred(planner.FnAnd, pred(planner.FnGt, call(planner.FnMul, tInt, a, i32(2)), i32(3)), pred(planner.FnLike, s, str("%e%"))), []int32{3, 4}},
		{pred(planner.FnIn, a, i32(1), i32(5), i32(9)), []int32{0, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.e.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := record(t, mem, sch("a", tInt, "b", tInt, "x", tBig, "d", tDbl, "s", tStr, "f", tBool), rows)
			defer rec.Release()
			p, err := CompilePredicate(tc.e, mem, nil)
			if err != nil {
				t.Fatal(err)
			}
			sel := make([]int32, 0, 2) // too small: Select grows it
			for round := 0; round < 2; round++ {
				if sel, err = p.Select(rec, sel); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(sel) != fmt.Sprint(tc.want) && len(sel)+len(tc.want) > 0 {
					t.Fatalf("Select = %v, want %v", sel, tc.want)
				}
			}
			sub := rec.NewSlice(1, rec.NumRows())
			defer sub.Release()
			if sel, err = p.Select(sub, sel); err != nil {
				t.Fatal(err)
			}
			var want []int32
			for _, r := range tc.want {
				if r > 0 {
					want = append(want, r-1)
				}
			}
			if fmt.Sprint(sel) != fmt.Sprint(want) && len(sel)+len(want) > 0 {
				t.Fatalf("Select on slice = %v, want %v", sel, want)
			}
		})
	}
}

func TestPredicateErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	if _, err := CompilePredicate(i32(1), mem, nil); err == nil {
		t.Fatal("CompilePredicate of an INT succeeded")
	}
	rec := record(t, mem, sch("a", tInt), `[{"a":0}]`)
	defer rec.Release()
	p, err := CompilePredicate(pred(planner.FnGt, call(planner.FnDiv, tInt, i32(1), col(0, "a", tInt)), i32(0)), mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Select(rec, nil); err == nil || err.Error() != "division by zero" {
		t.Fatalf("Select error = %v, want division by zero", err)
	}
	// A column of the wrong type is an error, not a panic.
	p, err = CompilePredicate(pred(planner.FnGt, col(0, "a", tBig), i64(0)), mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Select(rec, nil); err == nil {
		t.Fatal("Select over a column of the wrong type succeeded")
	}
	if _, err := p.Select(rec, nil); err == nil {
		t.Fatal("Select over a column of the wrong type succeeded")
	}
}

// TestPredicateBatchValue filters a column against CURRENT_TIMESTAMP - INTERVAL, a value
// computed once per batch.
func TestPredicateBatchValue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	env := &Env{Now: func() time.Time { return now }}
	rec := record(t, mem, sch("ts", tLTZ), `[{"ts":"2024-01-01 10:59:59"},{"ts":"2024-01-01 11:00:01"},{"ts":null},{"ts":"2024-01-01 11:30:00"}]`)
	defer rec.Release()
	hourAgo := call(planner.FnSub, tLTZ, call(planner.FnCurrentTS, tLTZ), lit(int64(3600000), tIv))
	for _, e := range []planner.Expr{
		pred(planner.FnGt, col(0, "ts", tLTZ), hourAgo),
		pred(planner.FnLt, hourAgo, col(0, "ts", tLTZ)),
	} {
		p, err := CompilePredicate(e, mem, env)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.(*predicate).s.(*colConstSel[int64]); !ok {
			t.Errorf("%s: selector %T, want the direct one", e, p.(*predicate).s)
		}
		sel, err := p.Select(rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(sel) != "[1 3]" {
			t.Errorf("Select(%s) = %v, want [1 3]", e, sel)
		}
	}
}
