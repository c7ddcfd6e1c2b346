package expr

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/planner"
)

func TestLike(t *testing.T) {
	s, p := col(0, "s", tStr), col(1, "p", tStr)
	like := func(args ...planner.Expr) planner.Expr { return pred(planner.FnLike, args...) }
	evalGroup{
		schema: sch("s", tStr, "p", tStr),
		rows: `[{"s":"hello","p":"h%"},{"s":"help","p":"%p"},{"s":"shell","p":"_hell"},
			{"s":null,"p":"%"},{"s":"h_llo","p":null},{"s":"hé","p":"h_"},{"s":"50%","p":"5%%"}]`,
		cases: []evalCase{
			{e: like(s, str("hel%")), want: `[true,true,false,null,false,false,false]`},
			{e: like(s, str("%llo")), want: `[true,false,false,null,true,false,false]`},
			{e: like(s, str("%ell%")), want: `[true,false,true,null,false,false,false]`},
			{e: like(s, str("hello")), want: `[true,false,false,null,false,false,false]`},
			{e: like(s, str("h_l%")), want: `[true,true,false,null,true,false,false]`},
			{e: like(s, str("h_")), want: `[false,false,false,null,false,true,false]`},
			{e: like(s, str("%")), want: `[true,true,true,null,true,true,true]`},
			{e: like(s, str("%l%o")), want: `[true,false,false,null,true,false,false]`},
			{e: like(s, str("%%l_")), want: `[true,true,true,null,true,false,false]`},
			{e: like(s, str("")), want: `[false,false,false,null,false,false,false]`},
			{e: like(s, str("h\\_%"), str("\\")), want: `[false,false,false,null,true,false,false]`},
			{e: like(s, str("50!%"), str("!")), want: `[false,false,false,null,false,false,true]`},
			{e: like(s, str("a\\b"), str("\\")), err: "invalid escape sequence"},
			{e: like(s, str("ab"), str("xy")), err: "invalid LIKE escape"},
			{e: like(s, null(tStr)), want: `[null,null,null,null,null,null,null]`},
			{e: like(s, p), want: `[true,true,true,null,null,true,true]`},
			{e: like(str("hello"), p), want: `[true,false,false,true,null,false,false]`},
		},
	}.run(t)
}

func TestStringFunctions(t *testing.T) {
	s, t2 := col(0, "s", tStr), col(1, "t", tStr)
	n := col(2, "n", tInt)
	fn := func(f planner.Func, rt planner.Type, args ...planner.Expr) planner.Expr { return call(f, rt, args...) }
	evalGroup{
		schema: sch("s", tStr, "t", tStr, "n", tInt),
		rows: `[{"s":"Hello","t":"World","n":2},{"s":"wörld","t":"x","n":-2},{"s":"","t":"y","n":0},
			{"s":null,"t":"z","n":1},{"s":"  pad  ","t":null,"n":null}]`,
		cases: []evalCase{
			{e: fn(planner.FnConcat, tStr, s, t2), want: `["HelloWorld","wörldx","y",null,null]`},
			{e: fn(planner.FnConcat, tStr, s, str("!"), t2), want: `["Hello!World","wörld!x","!y",null,null]`},
			{e: fn(planner.FnConcat, tStr, str("<"), s), want: `["<Hello","<wörld","<",null,"<  pad  "]`},
			{e: fn(planner.FnConcat, tStr, s, null(tStr)), want: `[null,null,null,null,null]`},
			{e: fn(planner.FnUpper, tStr, s), want: `["HELLO","WÖRLD","",null,"  PAD  "]`},
			{e: fn(planner.FnLower, tStr, s), want: `["hello","wörld","",null,"  pad  "]`},
			{e: fn(planner.FnUpper, tStr, t2), want: `["WORLD","X","Y","Z",null]`},
			{e: fn(planner.FnLower, tStr, str("ÀÉÎ")), want: `["àéî","àéî","àéî","àéî","àéî"]`},
			{e: fn(planner.FnSubstring, tStr, s, i32(2)), want: `["ello","örld","",null," pad  "]`},
			{e: fn(planner.FnSubstring, tStr, s, i32(2), i32(2)), want: `["el","ör","",null," p"]`},
			{e: fn(planner.FnSubstring, tStr, s, i32(0), i32(2)), want: `["He","wö","",null,"  "]`},
			{e: fn(planner.FnSubstring, tStr, s, i32(-3)), want: `["llo","rld","",null,"d  "]`},
			{e: fn(planner.FnSubstring, tStr, s, i32(-10), i32(2)), want: `["","","",null,""]`},
			{e: fn(planner.FnSubstring, tStr, s, i32(10)), want: `["","","",null,""]`},
			{e: fn(planner.FnSubstring, tStr, s, i32(1), i32(-1)), want: `[null,null,null,null,null]`},
			{e: fn(planner.FnSubstring, tStr, s, n), want: `["ello","ld","",null,null]`},
			{e: fn(planner.FnSubstring, tStr, s, i32(1), n), want: `["He",null,"",null,null]`},
			{e: fn(planner.FnCharLength, tInt, s), want: `[5,5,0,null,7]`},
			{e: fn(planner.FnTrim, tStr, s), want: `["Hello","wörld","",null,"pad"]`},
			{e: fn(planner.FnLTrim, tStr, s), want: `["Hello","wörld","",null,"pad  "]`},
			{e: fn(planner.FnRTrim, tStr, s), want: `["Hello","wörld","",null,"  pad"]`},
			{e: fn(planner.FnTrim, tStr, s, str("Hd ")), want: `["ello","wörl","",null,"pa"]`},
			{e: fn(planner.FnLTrim, tStr, s, str("wH")), want: `["ello","örld","",null,"  pad  "]`},
			{e: fn(planner.FnReplace, tStr, s, str("l"), str("L")), want: `["HeLLo","wörLd","",null,"  pad  "]`},
			{e: fn(planner.FnReplace, tStr, s, str("l"), str("")), want: `["Heo","wörd","",null,"  pad  "]`},
			{e: fn(planner.FnReplace, tStr, s, str(""), str("-")), want: `["-H-e-l-l-o-","-w-ö-r-l-d-","-",null,"- - -p-a-d- - -"]`},
			{e: fn(planner.FnPosition, tInt, str("l"), s), want: `[3,4,0,null,0]`},
			{e: fn(planner.FnPosition, tInt, str(""), s), want: `[1,1,1,null,1]`},
			{e: fn(planner.FnPosition, tInt, t2, str("xyzWorld")), want: `[4,1,2,3,null]`},
		},
	}.run(t)
}

// TestASCIICase checks the eight-bytes-at-a-time case mapping on every ASCII byte.
func TestASCIICase(t *testing.T) {
	src := make([]byte, 0, 131)
	for b := 0; b < 128; b++ {
		src = append(src, byte(b))
	}
	src = append(src, "xYz"...)
	for _, upper := range []bool{true, false} {
		lo, hi, want := byte('A'), byte('Z'), strings.ToLower(string(src))
		if upper {
			lo, hi, want = 'a', 'z', strings.ToUpper(string(src))
		}
		for start := 0; start < 8; start++ {
			dst := make([]byte, len(src)-start)
			if !mapASCIICase(dst, src[start:], lo, hi) || string(dst) != want[start:] {
				t.Fatalf("upper=%v start=%d: %q, want %q", upper, start, dst, want[start:])
			}
		}
	}
	if mapASCIICase(make([]byte, 9), []byte("abcdefgh\xc3"), 'a', 'z') {
		t.Fatal("non-ASCII input reported as ASCII")
	}
}
