package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/planner"
)

// cmpOps and the results of comparing -1, 0, 1 (as a three-way sign) under each.
var cmpOps = []struct {
	fn   planner.Func
	want [3]bool
}{
	{planner.FnEq, [3]bool{false, true, false}},
	{planner.FnNe, [3]bool{true, false, true}},
	{planner.FnLt, [3]bool{true, false, false}},
	{planner.FnLe, [3]bool{true, true, false}},
	{planner.FnGt, [3]bool{false, false, true}},
	{planner.FnGe, [3]bool{false, true, true}},
}

// TestCompareAllTypes compares a column with a literal (both orders) and with another
// column, for every type, from the order of three sample values and a NULL.
func TestCompareAllTypes(t *testing.T) {
	types := []struct {
		t       planner.Type
		json    [3]string // ascending
		literal planner.Expr
	}{
		{tInt, [3]string{"-5", "0", "7"}, i32(0)},
		{tBig, [3]string{"-5000000000", "0", "7"}, i64(0)},
		{tDbl, [3]string{"-0.5", "0.25", "1e10"}, f64(0.25)},
		{decT(6, 2), [3]string{`"-1.50"`, `"0.25"`, `"100.00"`}, decLit("0.25", 6, 2)},
		{tStr, [3]string{`"Zebra"`, `"apple"`, `"é"`}, str("apple")},
		{tTS, [3]string{`"1969-12-31 23:59:59.999"`, `"2024-01-01 00:00:00"`, `"2024-01-01 00:00:00.001"`}, lit(int64(1704067200000), tTS)},
		{tLTZ, [3]string{`"1969-12-31 23:59:59.999"`, `"2024-01-01 00:00:00"`, `"2024-01-01 00:00:00.001"`}, lit(int64(1704067200000), tLTZ)},
		{tDate, [3]string{`"1969-12-31"`, `"2024-01-01"`, `"2024-01-02"`}, lit(int32(19723), tDate)},
		{tIv, [3]string{"-1", "1000", "86400000"}, lit(int64(1000), tIv)},
	}
	for _, ty := range types {
		t.Run(ty.t.String(), func(t *testing.T) {
			// Rows: low, mid, high, null; column c2 holds mid in every row but the last.
			rows := fmt.Sprintf(`[{"c":%s,"c2":%s},{"c":%s,"c2":%s},{"c":%s,"c2":%s},{"c":null,"c2":null}]`,
				ty.json[0], ty.json[1], ty.json[1], ty.json[1], ty.json[2], ty.json[1])
			c, c2 := col(0, "c", ty.t), col(1, "c2", ty.t)
			var cases []evalCase
			for _, op := range cmpOps {
				want := func(flipped bool) string {
					var parts []string
					for sign := -1; sign <= 1; sign++ {
						s := sign
						if flipped {
							s = -sign
						}
						parts = append(parts, fmt.Sprint(op.want[s+1]))
					}
					return "[" + strings.Join(parts, ",") + ",null]"
				}
				cases = append(cases,
					evalCase{e: pred(op.fn, c, ty.literal), want: want(false)},
					evalCase{e: pred(op.fn, ty.literal, c), want: want(true)},
					evalCase{e: pred(op.fn, c, c2), want: want(false)},
					evalCase{e: pred(op.fn, c2, c), want: want(true)},
					evalCase{e: pred(op.fn, c, null(ty.t)), want: `[null,null,null,null]`},
				)
			}
			evalGroup{schema: sch("c", ty.t, "c2", ty.t), rows: rows, cases: cases}.run(t)
		})
	}
}

func TestCompareSpecials(t *testing.T) {
	b, b2 := col(0, "b", tBool), col(1, "b2", tBool)
	d := col(2, "d", tDbl)
	s := col(3, "s", tStr)
	evalGroup{
		schema: sch("b", tBool, "b2", tBool, "d", tDbl, "s", tStr),
		rows: `[{"b":false,"b2":true,"d":"NaN","s":"abc"},
			{"b":true,"b2":true,"d":1,"s":"abd"},
			{"b":true,"b2":false,"d":-0.0,"s":"ab"},
			{"b":null,"b2":false,"d":null,"s":""}]`,
		cases: []evalCase{
			{e: pred(planner.FnLt, b, b2), want: `[true,false,false,null]`},
			{e: pred(planner.FnEq, b, b2), want: `[false,true,false,null]`},
			{e: pred(planner.FnGe, b, boolean(true)), want: `[false,true,true,null]`},
			{e: pred(planner.FnGt, boolean(true), b), want: `[true,false,false,null]`},
			// NaN compares false except <>, as Java's primitive comparisons; -0.0 = 0.0.
			{e: pred(planner.FnEq, d, d), want: `[false,true,true,null]`},
			{e: pred(planner.FnNe, d, f64(1)), want: `[true,false,true,null]`},
			{e: pred(planner.FnGe, d, f64(0)), want: `[false,true,true,null]`},
			// Strings compare by bytes: "ab" < "abc" < "abd"; "" is the least.
			{e: pred(planner.FnLt, s, str("abc")), want: `[false,false,true,true]`},
			{e: pred(planner.FnGe, s, str("ab")), want: `[true,true,true,false]`},
		},
	}.run(t)
}

func TestLogic(t *testing.T) {
	p, q := col(0, "p", tBool), col(1, "q", tBool)
	// Every combination of TRUE, FALSE and NULL.
	rows := `[{"p":true,"q":true},{"p":true,"q":false},{"p":true,"q":null},
		{"p":false,"q":true},{"p":false,"q":false},{"p":false,"q":null},
		{"p":null,"q":true},{"p":null,"q":false},{"p":null,"q":null}]`
	evalGroup{
		schema: sch("p", tBool, "q", tBool),
		rows:   rows,
		cases: []evalCase{
			{e: pred(planner.FnAnd, p, q), want: `[true,false,null,false,false,false,null,false,null]`},
			{e: pred(planner.FnOr, p, q), want: `[true,true,true,true,false,null,true,null,null]`},
			{e: pred(planner.FnNot, p), want: `[false,false,false,true,true,true,null,null,null]`},
			{e: pred(planner.FnAnd, p, boolean(true)), want: `[true,true,true,false,false,false,null,null,null]`},
			{e: pred(planner.FnAnd, p, boolean(false)), want: `[false,false,false,false,false,false,false,false,false]`},
			{e: pred(planner.FnAnd, null(tBool), q), want: `[null,false,null,null,false,null,null,false,null]`},
			{e: pred(planner.FnOr, q, null(tBool)), want: `[true,null,null,true,null,null,true,null,null]`},
			{e: pred(planner.FnOr, p, boolean(true)), want: `[true,true,true,true,true,true,true,true,true]`},
			{e: pred(planner.FnOr, boolean(false), q), want: `[true,false,null,true,false,null,true,false,null]`},
			{e: pred(planner.FnAnd, p, q, pred(planner.FnNot, q)), want: `[false,false,null,false,false,false,false,false,null]`},
			{e: pred(planner.FnOr, p, q, pred(planner.FnIsNull, q)), want: `[true,true,true,true,false,true,true,null,true]`},
			{e: pred(planner.FnIsNull, p), want: `[false,false,false,false,false,false,true,true,true]`},
			{e: pred(planner.FnIsNotNull, p), want: `[true,true,true,true,true,true,false,false,false]`},
			{e: pred(planner.FnIsTrue, p), want: `[true,true,true,false,false,false,false,false,false]`},
			{e: pred(planner.FnIsNotTrue, p), want: `[false,false,false,true,true,true,true,true,true]`},
			{e: pred(planner.FnIsFalse, p), want: `[false,false,false,true,true,true,false,false,false]`},
			{e: pred(planner.FnIsNotFalse, p), want: `[true,true,true,false,false,false,true,true,true]`},
			{e: pred(planner.FnIsNull, null(tInt)), want: `[true,true,true,true,true,true,true,true,true]`},
			{e: pred(planner.FnIsNotNull, i32(1)), want: `[true,true,true,true,true,true,true,true,true]`},
			{e: pred(planner.FnNot, pred(planner.FnAnd, p, q)), want: `[false,true,null,true,true,true,null,true,null]`},
		},
	}.run(t)
}

func TestIsNullOtherTypes(t *testing.T) {
	s, x := col(0, "s", tStr), col(1, "x", tBig)
	evalGroup{
		schema: sch("s", tStr, "x", tBig),
		rows:   `[{"s":"a","x":null},{"s":null,"x":2},{"s":"","x":3}]`,
		cases: []evalCase{
			{e: pred(planner.FnIsNull, s), want: `[false,true,false]`},
			{e: pred(planner.FnIsNotNull, x), want: `[false,true,true]`},
			{e: pred(planner.FnIsNull, call(planner.FnAdd, tBig, x, i64(1))), want: `[true,false,false]`},
		},
	}.run(t)
}

func TestIn(t *testing.T) {
	x, y, s := col(0, "x", tInt), col(1, "y", tInt), col(2, "s", tStr)
	many := []planner.Expr{x}
	for i := int32(0); i < 12; i++ {
		many = append(many, i32(i*5))
	}
	evalGroup{
		schema: sch("x", tInt, "y", tInt, "s", tStr),
		rows:   `[{"x":1,"y":1,"s":"a"},{"x":2,"y":3,"s":"b"},{"x":null,"y":4,"s":null},{"x":5,"y":null,"s":"z"}]`,
		cases: []evalCase{
			{e: pred(planner.FnIn, x, i32(1), i32(5)), want: `[true,false,null,true]`},
			{e: pred(planner.FnIn, x, i32(1), null(tInt)), want: `[true,null,null,null]`},
			{e: pred(planner.FnIn, x, i32(7)), want: `[false,false,null,false]`},
			{e: pred(planner.FnIn, many...), want: `[false,false,null,true]`},
			{e: pred(planner.FnIn, s, str("a"), str("z")), want: `[true,false,null,true]`},
			{e: pred(planner.FnIn, s, str("q"), null(tStr)), want: `[null,null,null,null]`},
			{e: pred(planner.FnIn, x, y, i32(5)), want: `[true,false,null,true]`},
			{e: pred(planner.FnIn, x, y), want: `[true,false,null,null]`},
			{e: pred(planner.FnIn, i32(3), y, i32(9)), want: `[false,true,false,null]`},
			{e: pred(planner.FnIn, f64(1.5), f64(1.5)), want: `[true,true,true,true]`},
			{e: pred(planner.FnIn, call(planner.FnAdd, tInt, x, i32(1)), i32(2), i32(3)), want: `[true,true,null,false]`},
		},
	}.run(t)
}
