package expr

import (
	"testing"
	"time"
	_ "time/tzdata" // the zone database, whatever the machine has
	_ "time/tzdata" // zones for the tests, whatever the machine has

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

func TestTime(t *testing.T) {
	ts, lz, dt := col(0, "ts", tTS), col(1, "lz", tLTZ), col(2, "dt", tDate)
	s, s2, s3 := col(3, "s", tStr), col(4, "s2", tStr), col(5, "s3", tStr)
	e := col(6, "e", tBig)
	env := &Env{Location: time.FixedZone("+08", 8*3600)}
	ex := func(unit string, x planner.Expr) planner.Expr { return call(planner.FnExtract, tBig, str(unit), x) }
	months := func(n int32) planner.Expr { return lit(n, tMo) }
	millis := func(n int64) planner.Expr { return lit(n, tIv) }
	evalGroup{
		env:    env,
		schema: sch("ts", tTS, "lz", tLTZ, "dt", tDate, "s", tStr, "s2", tStr, "s3", tStr, "e", tBig),
		rows: `[{"ts":"2024-01-31 10:15:30.250","lz":"2024-01-31 18:00:00","dt":"2024-02-29","s":"2024-01-31 10:15:30","s2":"31/01/2024 10:15","s3":"20240131101530250","e":1706696130},
			{"ts":"2023-03-31 23:59:59.999","lz":"2023-12-31 16:30:00","dt":"2023-01-31","s":" 2024-1-5 ","s2":"1/2/2023 7:05","s3":"2024013110153","e":0},
			{"ts":null,"lz":"1970-01-01 00:00:00","dt":null,"s":"bad","s2":"31/02/2024 10:00","s3":"x","e":-1},
			{"ts":"1969-12-31 23:00:00","lz":null,"dt":"1970-01-01","s":null,"s2":null,"s3":null,"e":null}]`,
		cases: []evalCase{
			{e: call(planner.FnAdd, tTS, ts, millis(3600000)), want: `["2024-01-31 11:15:30.250","2023-04-01 00:59:59.999",null,"1970-01-01 00:00:00"]`},
			{e: call(planner.FnSub, tTS, ts, millis(86400000)), want: `["2024-01-30 10:15:30.250","2023-03-30 23:59:59.999",null,"1969-12-30 23:00:00"]`},
			{e: call(planner.FnAdd, tTS, ts, months(1)), want: `["2024-02-29 10:15:30.250","2023-04-30 23:59:59.999",null,"1970-01-31 23:00:00"]`},
			{e: call(planner.FnSub, tTS, ts, months(13)), want: `["2022-12-31 10:15:30.250","2022-02-28 23:59:59.999",null,"1968-11-30 23:00:00"]`},
			{e: call(planner.FnAdd, tLTZ, lz, months(1)), want: `["2024-02-29 18:00:00","2024-01-31 16:30:00","1970-02-01 00:00:00",null]`},
			{e: call(planner.FnAdd, tLTZ, lz, millis(1)), want: `["2024-01-31 18:00:00.001","2023-12-31 16:30:00.001","1970-01-01 00:00:00.001",null]`},
			{e: call(planner.FnAdd, tDate, dt, months(1)), want: `["2024-03-29","2023-02-28",null,"1970-02-01"]`},
			{e: call(planner.FnAdd, tDate, dt, months(12)), want: `["2025-02-28","2024-01-31",null,"1971-01-01"]`},
			{e: call(planner.FnAdd, tDate, dt, millis(86400000)), want: `["2024-03-01","2023-02-01",null,"1970-01-02"]`},

			{e: ex("YEAR", ts), want: `[2024,2023,null,1969]`},
			{e: ex("QUARTER", ts), want: `[1,1,null,4]`},
			{e: ex("MONTH", ts), want: `[1,3,null,12]`},
			{e: ex("WEEK", ts), want: `[5,13,null,1]`},
			{e: ex("DAY", ts), want: `[31,31,null,31]`},
			{e: ex("HOUR", ts), want: `[10,23,null,23]`},
			{e: ex("MINUTE", ts), want: `[15,59,null,0]`},
			{e: ex("SECOND", ts), want: `[30,59,null,0]`},
			{e: ex("MILLISECOND", ts), want: `[250,999,null,0]`},
			{e: ex("DOW", ts), want: `[4,6,null,4]`},
			{e: ex("DOY", ts), want: `[31,90,null,365]`},
			{e: ex("EPOCH", ts), want: `[1706696130,1680307199,null,-3600]`},
			{e: ex("HOUR", lz), want: `[2,0,8,null]`},
			{e: ex("DAY", lz), want: `[1,1,1,null]`},
			{e: ex("EPOCH", lz), want: `[1706724000,1704040200,0,null]`},
			{e: ex("DOW", dt), want: `[5,3,null,5]`},
			{e: ex("YEAR", dt), want: `[2024,2023,null,1970]`},
			{e: ex("DOY", dt), want: `[60,31,null,1]`},
			{e: ex("FORTNIGHT", dt), err: "unsupported EXTRACT unit"},

			{e: call(planner.FnDateFormat, tStr, ts, str("yyyy/MM/dd HH:mm:ss.SSS")), want: `["2024/01/31 10:15:30.250","2023/03/31 23:59:59.999",null,"1969/12/31 23:00:00.000"]`},
			{e: call(planner.FnDateFormat, tStr, ts, str("EEE, d MMM yy hh:mm a")), want: `["Wed, 31 Jan 24 10:15 AM","Fri, 31 Mar 23 11:59 PM",null,"Wed, 31 Dec 69 11:00 PM"]`},
			{e: call(planner.FnDateFormat, tStr, ts, str("'T'HH'h'''")), want: `["T10h'","T23h'",null,"T23h'"]`},
			{e: call(planner.FnDateFormat, tStr, lz, str("yyyy-MM-dd HH:mm")), want: `["2024-02-01 02:00","2024-01-01 00:30","1970-01-01 08:00",null]`},
			{e: call(planner.FnDateFormat, tStr, dt, str("MMMM d, yyyy")), want: `["February 29, 2024","January 31, 2023",null,"January 1, 1970"]`},
			{e: call(planner.FnDateFormat, tStr, ts, str("yyyy zzz")), err: "unsupported letter 'z'"},
			{e: call(planner.FnDateFormat, tStr, ts, s), want: `["2024-01-31 10:15:30"," 2024-1-5 ",null,null]`},

			{e: call(planner.FnToTimestamp, tTS, s), want: `["2024-01-31 10:15:30","2024-01-05 00:00:00",null,null]`},
			{e: call(planner.FnToTimestamp, tTS, s2, str("dd/MM/yyyy HH:mm")), want: `["2024-01-31 10:15:00","2023-02-01 07:05:00",null,null]`},
			{e: call(planner.FnToTimestamp, tTS, s3, str("yyyyMMddHHmmssSSS")), want: `["2024-01-31 10:15:30.250",null,null,null]`},
			{e: call(planner.FnToTimestamp, tTS, str("2024-02-30 00:00:00")), want: `[null,null,null,null]`},
			{e: call(planner.FnToTimestamp, tTS, str("2024-02-29 12:34:56.7")), want: `["2024-02-29 12:34:56.700","2024-02-29 12:34:56.700","2024-02-29 12:34:56.700","2024-02-29 12:34:56.700"]`},
			{e: call(planner.FnToTimestamp, tTS, str("12/31/99 11:30 PM"), str("MM/dd/yy hh:mm a")), want: `["2099-12-31 23:30:00","2099-12-31 23:30:00","2099-12-31 23:30:00","2099-12-31 23:30:00"]`},
			{e: call(planner.FnToTimestamp, tTS, s2, s), want: `[null,null,null,null]`},

			{e: call(planner.FnToTimestampLTZ, tLTZ, e, i32(0)), want: `["2024-01-31 10:15:30","1970-01-01 00:00:00","1969-12-31 23:59:59",null]`},
			{e: call(planner.FnToTimestampLTZ, tLTZ, e, i32(3)), want: `["1970-01-20 18:04:56.130","1970-01-01 00:00:00","1969-12-31 23:59:59.999",null]`},
			{e: call(planner.FnToTimestampLTZ, tLTZ, e, i32(6)), err: "precision"},
		},
	}.run(t)
}

func TestCurrentTimestamp(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	calls := 0
	now := time.Date(2024, 5, 6, 7, 8, 9, 10e6, time.UTC)
	env := &Env{Now: func() time.Time { calls++; return now.Add(time.Duration(calls) * time.Millisecond) }}
	rec := record(t, mem, sch("a", tInt), `[{"a":1},{"a":2},{"a":3}]`)
	defer rec.Release()
	cur := call(planner.FnCurrentTS, tLTZ)
	// Two uses in one expression read the clock once.
	e := pred(planner.FnEq, cur, call(planner.FnAdd, tLTZ, cur, lit(int64(0), tIv)))
	ev, err := Compile(caseOf(tLTZ, nil, e, cur), mem, env)
	if err != nil {
		t.Fatal(err)
	}
	for call := 1; call <= 2; call++ {
		got, err := ev.Eval(rec)
		if err != nil {
			t.Fatal(err)
		}
		ts := got.(interface{ Value(int) arrow.Timestamp })
		for i := 0; i < got.Len(); i++ {
			if want := now.UnixMilli() + int64(call); int64(ts.Value(i)) != want {
				t.Errorf("Eval %d row %d = %d, want %d", call, i, ts.Value(i), want)
			}
		}
		got.Release()
		if calls != call {
			t.Errorf("after Eval %d the clock was read %d times", call, calls)
		}
	}
}

// TestTimeZoneDST converts through a zone with daylight saving time.
func TestTimeZoneDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	ts, lz := col(0, "ts", tTS), col(1, "lz", tLTZ)
	evalGroup{
		env:    &Env{Location: ny},
		schema: sch("ts", tTS, "lz", tLTZ),
		rows:   `[{"ts":"2024-07-01 12:00:00","lz":"2024-07-01 16:00:00"},{"ts":"2024-01-01 12:00:00","lz":"2024-01-01 17:00:00"}]`,
		cases: []evalCase{
			{e: cast(ts, tLTZ), want: `["2024-07-01 16:00:00","2024-01-01 17:00:00"]`},
			{e: cast(lz, tTS), want: `["2024-07-01 12:00:00","2024-01-01 12:00:00"]`},
			{e: cast(lz, tStr), want: `["2024-07-01 12:00:00.000","2024-01-01 12:00:00.000"]`},
			{e: call(planner.FnExtract, tBig, str("HOUR"), lz), want: `[12,12]`},
			{e: call(planner.FnAdd, tLTZ, lz, lit(int32(6), tMo)), want: `["2025-01-01 17:00:00","2024-07-01 16:00:00"]`},
		},
	}.run(t)
}
