package expr

import (
	"testing"

	"github.com/streamsql/streamsql/planner"
)

var (
	tInt  = planner.TypeInt
	tBig  = planner.TypeBigInt
	tDbl  = planner.TypeDouble
	tStr  = planner.TypeString
	tBool = planner.TypeBoolean
	tTS   = planner.TypeTS
	tLTZ  = planner.TypeTSLTZ
	tDate = planner.TypeDate
	tIv   = planner.TypeInterval
	tMo   = planner.TypeMonths
)

func decT(p, s int) planner.Type { return planner.DecimalType(p, s) }

func TestIntegerArithmetic(t *testing.T) {
	a, b := col(0, "a", tInt), col(1, "b", tInt)
	x, y := col(2, "x", tBig), col(3, "y", tBig)
	evalGroup{
		schema: sch("a", tInt, "b", tInt, "x", tBig, "y", tBig),
		rows: `[{"a":7,"b":2,"x":7,"y":-2},
			{"a":-7,"b":2,"x":-7,"y":2},
			{"a":2147483647,"b":1,"x":9223372036854775807,"y":1},
			{"a":null,"b":0,"x":null,"y":0},
			{"a":5,"b":null,"x":5,"y":null}]`,
		cases: []evalCase{
			{e: call(planner.FnAdd, tInt, a, b), want: `[9,-5,-2147483648,null,null]`},
			{e: call(planner.FnSub, tInt, a, b), want: `[5,-9,2147483646,null,null]`},
			{e: call(planner.FnMul, tInt, a, b), want: `[14,-14,2147483647,null,null]`},
			{e: call(planner.FnDiv, tInt, a, b), want: `[3,-3,2147483647,null,null]`},
			{e: call(planner.FnMod, tInt, a, b), want: `[1,-1,0,null,null]`},
			{e: call(planner.FnAdd, tInt, a, i32(1)), want: `[8,-6,-2147483648,null,6]`},
			{e: call(planner.FnSub, tInt, i32(10), a), want: `[3,17,-2147483637,null,5]`},
			{e: call(planner.FnDiv, tInt, i32(100), a), want: `[14,-14,0,null,20]`},
			{e: call(planner.FnMod, tInt, i32(100), a), want: `[2,2,100,null,0]`},
			{e: call(planner.FnDiv, tInt, a, i32(-2)), want: `[-3,3,-1073741823,null,-2]`},
			{e: call(planner.FnAdd, tInt, call(planner.FnMul, tInt, a, i32(2)), i32(1)), want: `[15,-13,-1,null,11]`},
			{e: call(planner.FnNeg, tInt, a), want: `[-7,7,-2147483647,null,-5]`},
			{e: call(planner.FnAdd, tInt, i32(1), i32(2)), want: `[3,3,3,3,3]`},
			{e: call(planner.FnAdd, tInt, i32(1), null(tInt)), want: `[null,null,null,null,null]`},
			{name: "div by zero column", e: call(planner.FnDiv, tInt, i32(100), b), err: "division by zero"},
			{name: "div by zero literal", e: call(planner.FnDiv, tInt, a, i32(0)), err: "division by zero"},
			{name: "mod by zero", e: call(planner.FnMod, tInt, a, i32(0)), err: "division by zero"},
			{name: "constant div by zero", e: call(planner.FnDiv, tInt, i32(1), i32(0)), err: "division by zero"},
			{e: call(planner.FnAdd, tBig, x, y), want: `[5,-5,-9223372036854775808,null,null]`},
			{e: call(planner.FnSub, tBig, x, y), want: `[9,-9,9223372036854775806,null,null]`},
			{e: call(planner.FnMul, tBig, x, y), want: `[-14,-14,9223372036854775807,null,null]`},
			{e: call(planner.FnDiv, tBig, x, y), want: `[-3,-3,9223372036854775807,null,null]`},
			{e: call(planner.FnMod, tBig, x, y), want: `[1,-1,0,null,null]`},
			{e: call(planner.FnMul, tBig, x, i64(-1)), want: `[-7,7,-9223372036854775807,null,-5]`},
			{name: "bigint div by zero", e: call(planner.FnDiv, tBig, x, y), want: `[-3,-3,9223372036854775807,null,null]`},
			{name: "bigint mod by zero", e: call(planner.FnMod, tBig, i64(1), y), err: "division by zero"},
			{e: call(planner.FnNeg, tBig, x), want: `[-7,7,-9223372036854775807,null,-5]`},
		},
	}.run(t)
}

func TestDoubleArithmetic(t *testing.T) {
	d, e := col(0, "d", tDbl), col(1, "e", tDbl)
	evalGroup{
		schema: sch("d", tDbl, "e", tDbl),
		rows:   `[{"d":1.5,"e":2},{"d":-7.5,"e":2},{"d":1,"e":0},{"d":null,"e":1},{"d":0,"e":0}]`,
		cases: []evalCase{
			{e: call(planner.FnAdd, tDbl, d, e), want: `[3.5,-5.5,1,null,0]`},
			{e: call(planner.FnSub, tDbl, d, e), want: `[-0.5,-9.5,1,null,0]`},
			{e: call(planner.FnMul, tDbl, d, e), want: `[3,-15,0,null,0]`},
			{e: call(planner.FnDiv, tDbl, d, e), want: `[0.75,-3.75,"+Inf",null,"NaN"]`},
			{e: call(planner.FnMod, tDbl, d, e), want: `[1.5,-1.5,"NaN",null,"NaN"]`},
			{e: call(planner.FnAdd, tDbl, call(planner.FnMul, tDbl, d, f64(2)), f64(0.5)), want: `[3.5,-14.5,2.5,null,0.5]`},
			{e: call(planner.FnDiv, tDbl, f64(3), e), want: `[1.5,1.5,"+Inf",3,"+Inf"]`},
			{e: call(planner.FnSub, tDbl, f64(1), d), want: `[-0.5,8.5,0,null,1]`},
			{e: call(planner.FnNeg, tDbl, d), want: `[-1.5,7.5,-1,null,-0]`},
		},
	}.run(t)
}

func TestDecimalArithmetic(t *testing.T) {
	m, n := col(0, "m", decT(10, 2)), col(1, "n", decT(10, 2))
	big := col(2, "big", decT(38, 10))
	evalGroup{
		schema: sch("m", decT(10, 2), "n", decT(10, 2), "big", decT(38, 10)),
		rows: `[{"m":"12.50","n":"3.00","big":"12345678901234567890.1234567890"},
			{"m":"-10.00","n":"3.00","big":"-0.0000000001"},
			{"m":"0.05","n":"-0.02","big":"9999999999999999999999999999.9999999999"},
			{"m":null,"n":"0.00","big":null}]`,
		cases: []evalCase{
			{e: call(planner.FnAdd, decT(11, 2), m, n), want: `["15.50","-7.00","0.03",null]`},
			{e: call(planner.FnSub, decT(11, 2), m, n), want: `["9.50","-13.00","0.07",null]`},
			{e: call(planner.FnMul, decT(21, 4), m, n), want: `["37.5000","-30.0000","-0.0010",null]`},
			{e: call(planner.FnMul, decT(21, 2), m, n), want: `["37.50","-30.00","0.00",null]`},
			{e: call(planner.FnDiv, decT(23, 6), m, n), want: `["4.166667","-3.333333","-2.500000",null]`},
			{e: call(planner.FnDiv, decT(10, 2), m, n), want: `["4.17","-3.33","-2.50",null]`},
			{e: call(planner.FnMod, decT(10, 2), m, n), want: `["0.50","-1.00","0.01",null]`},
			{e: call(planner.FnAdd, decT(12, 3), m, decLit("1.005", 4, 3)), want: `["13.505","-8.995","1.055",null]`},
			{e: call(planner.FnNeg, decT(10, 2), m), want: `["-12.50","10.00","-0.05",null]`},
			{e: call(planner.FnDiv, decT(10, 2), m, decLit("0.00", 3, 2)), err: "division by zero"},
			{e: call(planner.FnMul, decT(10, 2), m, decLit("100000000", 10, 0)), err: "DECIMAL(10, 2) overflow"},
			{e: call(planner.FnAdd, decT(38, 10), big, big), err: "DECIMAL(38, 10) overflow"},
			{e: call(planner.FnSub, decT(38, 10), big, big), want: `["0E-10","0E-10","0E-10",null]`},
			{e: call(planner.FnMul, decT(38, 10), big, decLit("2", 1, 0)), err: "overflow"},
			{e: call(planner.FnMul, decT(38, 6), big, decLit("0.5", 2, 1)), want: `["6172839450617283945.061728","0.000000","5000000000000000000000000000.000000",null]`},
			{e: call(planner.FnDiv, decT(38, 10), big, decLit("3", 1, 0)), want: `["4115226300411522630.0411522630","0.0000000000","3333333333333333333333333333.3333333333",null]`},
			{e: pred(planner.FnGt, m, n), want: `[true,false,true,null]`},
			{e: pred(planner.FnLe, m, decLit("0.05", 10, 2)), want: `[false,true,true,null]`},
		},
	}.run(t)
}
