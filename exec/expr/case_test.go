package expr

import (
	"testing"

	"github.com/streamsql/streamsql/planner"
)

func TestConditional(t *testing.T) {
	a, b := col(0, "a", tInt), col(1, "b", tInt)
	s := col(2, "s", tStr)
	m := col(3, "m", decT(6, 2))
	div := call(planner.FnDiv, tInt, a, b)
	evalGroup{
		schema: sch("a", tInt, "b", tInt, "s", tStr, "m", decT(6, 2)),
		rows: `[{"a":1,"b":2,"s":"x","m":"1.50"},{"a":0,"b":0,"s":null,"m":null},
			{"a":null,"b":3,"s":"zz","m":"-2.00"},{"a":4,"b":null,"s":"","m":"0.01"}]`,
		cases: []evalCase{
			// The division runs only on rows whose WHEN is TRUE: b = 0 on row 1 does not fail.
			{e: caseOf(tInt, i32(-1), pred(planner.FnNe, b, i32(0)), div), want: `[0,-1,null,-1]`},
			{e: caseOf(tInt, nil, pred(planner.FnEq, b, i32(0)), i32(0), pred(planner.FnGt, b, i32(0)), div), want: `[0,0,null,null]`},
			{e: caseOf(tStr, nil, pred(planner.FnGt, a, i32(1)), str("big"), pred(planner.FnEq, a, i32(1)), str("one")), want: `["one",null,null,"big"]`},
			{e: caseOf(tStr, str("other"), pred(planner.FnIsNull, s), str("none"), pred(planner.FnGt, a, i32(0)), s), want: `["x","none","other",""]`},
			{e: caseOf(tStr, s, pred(planner.FnIsNotNull, a), call(planner.FnUpper, tStr, s)), want: `["X",null,"zz",""]`},
			{e: caseOf(decT(6, 2), decLit("0.00", 6, 2), pred(planner.FnGt, a, i32(0)), m), want: `["1.50","0.00","0.00","0.01"]`},
			{e: caseOf(tBool, null(tBool), pred(planner.FnIsNotNull, b), pred(planner.FnGt, a, b)), want: `[false,false,null,null]`},
			{e: caseOf(tInt, i32(9), boolean(false), i32(1)), want: `[9,9,9,9]`},
			{e: caseOf(tInt, nil, boolean(true), a), want: `[1,0,null,4]`},
			{name: "nested", e: caseOf(tInt, i32(0), pred(planner.FnIsNotNull, a),
				caseOf(tInt, a, pred(planner.FnNe, b, i32(0)), div)), want: `[0,0,0,4]`},
			{name: "reached failure", e: caseOf(tInt, i32(0), pred(planner.FnIsNotNull, a), div), err: "division by zero"},

			{e: call(planner.FnCoalesce, tInt, a, b, i32(99)), want: `[1,0,3,4]`},
			{e: call(planner.FnCoalesce, tInt, b, a), want: `[2,0,3,4]`},
			{e: call(planner.FnCoalesce, tInt, a, call(planner.FnDiv, tInt, i32(10), b)), want: `[1,0,3,4]`},
			{e: call(planner.FnCoalesce, tInt, null(tInt), null(tInt)), want: `[null,null,null,null]`},
			{e: call(planner.FnCoalesce, tStr, s, str("-")), want: `["x","-","zz",""]`},
			{e: call(planner.FnCoalesce, decT(6, 2), m, decLit("9.99", 6, 2)), want: `["1.50","9.99","-2.00","0.01"]`},
			{e: call(planner.FnCoalesce, tBool, pred(planner.FnGt, a, i32(0)), boolean(true)), want: `[true,false,true,true]`},

			{e: call(planner.FnNullIf, tInt, a, b), want: `[1,null,null,4]`},
			{e: call(planner.FnNullIf, tInt, a, i32(1)), want: `[null,0,null,4]`},
			{e: call(planner.FnNullIf, tStr, s, str("")), want: `["x",null,"zz",null]`},
			{e: call(planner.FnNullIf, tInt, i32(3), b), want: `[3,3,null,3]`},

			// AND and OR short-circuit: the division meets b = 0 only where it decides.
			{e: pred(planner.FnAnd, pred(planner.FnNe, b, i32(0)), pred(planner.FnGe, div, i32(0))), want: `[true,false,null,null]`},
			{e: pred(planner.FnOr, pred(planner.FnEq, b, i32(0)), pred(planner.FnGt, div, i32(0))), want: `[false,true,null,null]`},
			{e: pred(planner.FnAnd, pred(planner.FnGe, div, i32(0)), pred(planner.FnNe, b, i32(0))), err: "division by zero"},
		},
	}.run(t)
}

func TestMath(t *testing.T) {
	d, i, x := col(0, "d", tDbl), col(1, "i", tInt), col(2, "x", tBig)
	m := col(3, "m", decT(8, 3))
	evalGroup{
		schema: sch("d", tDbl, "i", tInt, "x", tBig, "m", decT(8, 3)),
		rows: `[{"d":2.5,"i":15,"x":-9223372036854775808,"m":"2.345"},
			{"d":-2.5,"i":-15,"x":-3,"m":"-2.345"},
			{"d":2.675,"i":14,"x":0,"m":"0.005"},
			{"d":null,"i":null,"x":null,"m":null},
			{"d":-0.49,"i":-2147483648,"x":7,"m":"-0.999"},
			{"d":1e300,"i":25,"x":1,"m":"1.000"}]`,
		cases: []evalCase{
			{e: call(planner.FnRound, tDbl, d), want: `[3,-3,3,null,-0,1e300]`},
			{e: call(planner.FnRound, tDbl, d, i32(2)), want: `[2.5,-2.5,2.68,null,-0.49,1e300]`},
			{e: call(planner.FnRound, tDbl, d, i32(1)), want: `[2.5,-2.5,2.7,null,-0.5,1e300]`},
			{e: call(planner.FnRound, tInt, i, i32(-1)), want: `[20,-20,10,null,2147483646,30]`},
			{e: call(planner.FnRound, tInt, i), want: `[15,-15,14,null,-2147483648,25]`},
			{e: call(planner.FnRound, decT(8, 2), m, i32(2)), want: `["2.35","-2.35","0.01",null,"-1.00","1.00"]`},
			{e: call(planner.FnRound, decT(8, 0), m), want: `["2","-2","0",null,"-1","1"]`},
			{e: call(planner.FnFloor, tDbl, d), want: `[2,-3,2,null,-1,1e300]`},
			{e: call(planner.FnCeil, tDbl, d), want: `[3,-2,3,null,-0,1e300]`},
			{e: call(planner.FnFloor, decT(6, 0), m), want: `["2","-3","0",null,"-1","1"]`},
			{e: call(planner.FnCeil, decT(6, 0), m), want: `["3","-2","1",null,"0","1"]`},
			{e: call(planner.FnFloor, tInt, i), want: `[15,-15,14,null,-2147483648,25]`},
			{e: call(planner.FnAbs, tInt, i), want: `[15,15,14,null,-2147483648,25]`},
			{e: call(planner.FnAbs, tBig, x), want: `[-9223372036854775808,3,0,null,7,1]`},
			{e: call(planner.FnAbs, tDbl, d), want: `[2.5,2.5,2.675,null,0.49,1e300]`},
			{e: call(planner.FnAbs, decT(8, 3), m), want: `["2.345","2.345","0.005",null,"0.999","1.000"]`},
			{e: call(planner.FnPower, tDbl, d, f64(2)), want: `[6.25,6.25,7.155624999999999,null,0.24009999999999998,"+Inf"]`},
			{e: call(planner.FnPower, tDbl, f64(2), f64(10)), want: `[1024,1024,1024,1024,1024,1024]`},
			{e: call(planner.FnSqrt, tDbl, d), want: `[1.5811388300841898,"NaN",1.6355427233796125,null,"NaN",1e150]`},
		},
	}.run(t)
}
