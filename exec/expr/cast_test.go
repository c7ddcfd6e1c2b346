package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/planner"
)

func TestCastFromString(t *testing.T) {
	s, bs, tss := col(0, "s", tStr), col(1, "bs", tStr), col(2, "tss", tStr)
	env := &Env{Location: time.FixedZone("+08", 8*3600)}
	evalGroup{
		env:    env,
		schema: sch("s", tStr, "bs", tStr, "tss", tStr),
		rows: `[{"s":" 12 ","bs":"true","tss":"2019-01-17 09:43:19"},
			{"s":"-5","bs":"FALSE","tss":"2019-01-17 09:43:19.5"},
			{"s":"1.9","bs":"yes","tss":"2019-01-17"},
			{"s":null,"bs":"0","tss":null},
			{"s":"+7","bs":"maybe","tss":"bad"}]`,
		cases: []evalCase{
			{e: cast(s, tInt), want: `[12,-5,1,null,7]`},
			{e: cast(s, tBig), want: `[12,-5,1,null,7]`},
			{e: cast(s, tDbl), want: `[12,-5,1.9,null,7]`},
			{e: cast(s, decT(5, 2)), want: `["12.00","-5.00","1.90",null,"7.00"]`},
			{e: cast(s, planner.Type{Kind: planner.String, Length: 2}), want: `[" 12 ","-5","1.9",null,"+7"]`},
			{e: cast(str("abc"), tInt), err: "cannot cast 'abc' to INT"},
			{e: tryCast(str("abc"), tInt), want: `[null,null,null,null,null]`},
			{e: cast(str("2147483648"), tInt), err: "cannot cast '2147483648' to INT"},
			{e: tryCast(str("2147483648"), tInt), want: `[null,null,null,null,null]`},
			{e: cast(str("-9223372036854775808"), tBig), want: `[-9223372036854775808,-9223372036854775808,-9223372036854775808,-9223372036854775808,-9223372036854775808]`},
			{e: cast(str("9223372036854775808"), tBig), err: "cannot cast '9223372036854775808' to BIGINT"},
			{e: cast(str(""), tBig), err: "cannot cast '' to BIGINT"},
			{e: cast(str("1e3"), tDbl), want: `[1000,1000,1000,1000,1000]`},
			{e: cast(str("abc"), tDbl), err: "cannot cast 'abc' to DOUBLE"},
			{e: cast(str("1.005"), decT(5, 2)), want: `["1.01","1.01","1.01","1.01","1.01"]`},
			{e: cast(str("-1.005"), decT(5, 2)), want: `["-1.01","-1.01","-1.01","-1.01","-1.01"]`},
			{e: cast(str("1.5e2"), decT(5, 1)), want: `["150.0","150.0","150.0","150.0","150.0"]`},
			{e: cast(str("123456"), decT(5, 2)), err: "cannot cast '123456' to DECIMAL(5, 2)"},
			{e: tryCast(str("123456"), decT(5, 2)), want: `[null,null,null,null,null]`},
			{e: cast(bs, tBool), err: "cannot cast 'maybe' to BOOLEAN"},
			{e: tryCast(bs, tBool), want: `[true,false,true,false,null]`},
			{e: cast(tss, tTS), err: "cannot cast 'bad' to TIMESTAMP(3)"},
			{e: tryCast(tss, tTS), want: `["2019-01-17 09:43:19","2019-01-17 09:43:19.500","2019-01-17 00:00:00",null,null]`},
			{e: tryCast(tss, tLTZ), want: `["2019-01-17 01:43:19","2019-01-17 01:43:19.500","2019-01-16 16:00:00",null,null]`},
			{e: tryCast(tss, tDate), want: `["2019-01-17","2019-01-17","2019-01-17",null,null]`},
			{e: cast(str("2024-02-29"), tDate), want: `["2024-02-29","2024-02-29","2024-02-29","2024-02-29","2024-02-29"]`},
			{e: cast(str("2023-02-29"), tDate), err: "cannot cast '2023-02-29' to DATE"},
			{e: cast(null(planner.TypeNull), tInt), want: `[null,null,null,null,null]`},
			{e: cast(null(tStr), tDbl), want: `[null,null,null,null,null]`},
		},
	}.run(t)
}

func TestCastFromNumeric(t *testing.T) {
	i, x, d := col(0, "i", tInt), col(1, "x", tBig), col(2, "d", tDbl)
	b, m := col(3, "b", tBool), col(4, "m", decT(10, 2))
	evalGroup{
		schema: sch("i", tInt, "x", tBig, "d", tDbl, "b", tBool, "m", decT(10, 2)),
		rows: `[{"i":12,"x":3000000000,"d":35.8,"b":true,"m":"12.25"},
			{"i":-5,"x":-5,"d":100.0,"b":false,"m":"-12.25"},
			{"i":0,"x":0,"d":1e20,"b":null,"m":"0.05"},
			{"i":null,"x":null,"d":null,"b":true,"m":null},
			{"i":2147483647,"x":7,"d":-1e-5,"b":false,"m":"99999999.99"}]`,
		cases: []evalCase{
			{e: cast(i, tBig), want: `[12,-5,0,null,2147483647]`},
			{e: cast(i, tDbl), want: `[12,-5,0,null,2147483647]`},
			{e: cast(i, tStr), want: `["12","-5","0",null,"2147483647"]`},
			{e: cast(i, tBool), want: `[true,true,false,null,true]`},
			{e: cast(i, decT(12, 2)), want: `["12.00","-5.00","0.00",null,"2147483647.00"]`},
			{e: cast(x, decT(19, 0)), want: `["3000000000","-5","0",null,"7"]`},
			{e: cast(x, decT(38, 0)), want: `["3000000000","-5","0",null,"7"]`},
			{e: cast(i64(math.MinInt64), decT(19, 0)), want: `["-9223372036854775808","-9223372036854775808","-9223372036854775808","-9223372036854775808","-9223372036854775808"]`},
			// A number too large for the DECIMAL is NULL, for CAST as for TRY_CAST (Flink).
			{e: cast(i, decT(3, 1)), want: `["12.0","-5.0","0.0",null,null]`},
			{e: tryCast(i, decT(3, 1)), want: `["12.0","-5.0","0.0",null,null]`},
			{e: cast(x, tInt), err: "cannot cast 3000000000 to INT"},
			{e: tryCast(x, tInt), want: `[null,-5,0,null,7]`},
			{e: cast(x, tDbl), want: `[3e9,-5,0,null,7]`},
			{e: cast(x, tStr), want: `["3000000000","-5","0",null,"7"]`},
			{e: cast(d, tStr), want: `["35.8","100.0","1.0E20",null,"-1.0E-5"]`},
			{e: cast(d, tInt), err: "cannot cast 1.0E20 to INT"},
			{e: tryCast(d, tInt), want: `[35,100,null,null,0]`},
			{e: tryCast(d, tBig), want: `[35,100,null,null,0]`},
			{e: tryCast(d, decT(10, 2)), want: `["35.80","100.00",null,null,"0.00"]`},
			{e: cast(f64(2.675), decT(5, 2)), want: `["2.68","2.68","2.68","2.68","2.68"]`},
			{e: cast(d, tBool), want: `[true,true,true,null,true]`},
			{e: cast(m, tStr), want: `["12.25","-12.25","0.05",null,"99999999.99"]`},
			{e: cast(m, tDbl), want: `[12.25,-12.25,0.05,null,99999999.99]`},
			{e: cast(m, tInt), want: `[12,-12,0,null,99999999]`},
			{e: cast(m, tBig), want: `[12,-12,0,null,99999999]`},
			{e: cast(m, decT(10, 1)), want: `["12.3","-12.3","0.1",null,"100000000.0"]`},
			{e: cast(m, decT(4, 1)), want: `["12.3","-12.3","0.1",null,null]`},
			{e: tryCast(m, decT(4, 1)), want: `["12.3","-12.3","0.1",null,null]`},
			{e: cast(m, decT(20, 4)), want: `["12.2500","-12.2500","0.0500",null,"99999999.9900"]`},
			{e: cast(m, tBool), want: `[true,true,true,null,true]`},
			{e: cast(b, tInt), want: `[1,0,null,1,0]`},
			{e: cast(b, tBig), want: `[1,0,null,1,0]`},
			{e: cast(b, tDbl), want: `[1,0,null,1,0]`},
			{e: cast(b, tStr), want: `["TRUE","FALSE",null,"TRUE","FALSE"]`},
			{e: cast(b, decT(3, 1)), want: `["1.0","0.0",null,"1.0","0.0"]`},
		},
	}.run(t)
}

func TestCastTemporal(t *testing.T) {
	ts, lz, dt := col(0, "ts", tTS), col(1, "lz", tLTZ), col(2, "dt", tDate)
	iv, mo := col(3, "iv", tIv), col(4, "mo", tMo)
	env := &Env{Location: time.FixedZone("+08", 8*3600)}
	evalGroup{
		env:    env,
		schema: sch("ts", tTS, "lz", tLTZ, "dt", tDate, "iv", tIv, "mo", tMo),
		rows: `[{"ts":"2019-01-17 09:43:19","lz":"2019-01-17 01:43:19","dt":"2024-02-29","iv":3723004,"mo":{"months":14}},
			{"ts":"1969-12-31 23:59:59.999","lz":"1970-01-01 00:00:00","dt":"1969-12-31","iv":-90061001,"mo":{"months":-3}},
			{"ts":null,"lz":null,"dt":null,"iv":null,"mo":null}]`,
		cases: []evalCase{
			{e: cast(ts, tStr), want: `["2019-01-17 09:43:19.000","1969-12-31 23:59:59.999",null]`},
			{e: cast(cast(ts, planner.Type{Kind: planner.Timestamp}), tStr), want: `["2019-01-17 09:43:19","1969-12-31 23:59:59",null]`},
			{e: cast(lz, tStr), want: `["2019-01-17 09:43:19.000","1970-01-01 08:00:00.000",null]`},
			{e: cast(dt, tStr), want: `["2024-02-29","1969-12-31",null]`},
			{e: cast(ts, tDate), want: `["2019-01-17","1969-12-31",null]`},
			{e: cast(dt, tTS), want: `["2024-02-29 00:00:00","1969-12-31 00:00:00",null]`},
			{e: cast(ts, tLTZ), want: `["2019-01-17 01:43:19","1969-12-31 15:59:59.999",null]`},
			{e: cast(lz, tTS), want: `["2019-01-17 09:43:19","1970-01-01 08:00:00",null]`},
			{e: cast(lz, tDate), want: `["2019-01-17","1970-01-01",null]`},
			{e: cast(dt, tLTZ), want: `["2024-02-28 16:00:00","1969-12-30 16:00:00",null]`},
			{e: cast(iv, tStr), want: `["+0 01:02:03.004","-1 01:01:01.001",null]`},
			{e: cast(mo, tStr), want: `["+1-02","-0-03",null]`},
			{e: cast(cast(ts, tStr), tTS), want: `["2019-01-17 09:43:19","1969-12-31 23:59:59.999",null]`},
			{e: cast(i32(1), tTS), err: "cannot cast INT to TIMESTAMP(3)"},
		},
	}.run(t)
}

// TestCastToStringOutgrowsItsBuffer casts doubles whose texts outgrow the kernel's first
// guess at their size, so that the string buffer grows while it is written.
func TestCastToStringOutgrowsItsBuffer(t *testing.T) {
	var rows, want []string
	for i := range 300 {
		d := float64(i) + 1.0/3
		rows = append(rows, fmt.Sprintf(`{"d":%v}`, d))
		want = append(want, strconv.Quote(strconv.FormatFloat(d, 'f', -1, 64)))
	}
	evalGroup{
		schema: sch("d", tDbl),
		rows:   "[" + strings.Join(rows, ",") + "]",
		cases:  []evalCase{{e: cast(col(0, "d", tDbl), tStr), want: "[" + strings.Join(want, ",") + "]"}},
	}.run(t)
}
