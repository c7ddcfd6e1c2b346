package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

func TestDebug(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rows := []refRow{{int32(3), int32(-1), int64(2), int64(3), 0.5, "cab", "", true}, {int32(1), nil, int64(3), int64(-1), 1.0, "é", "B", nil}, {int32(-3), int32(-3), int64(1), int64(1099511627776), 1.5, "é", "aéc", false}, {int32(1), int32(-2), int64(-1), nil, 1.5, "abc", nil, true}, {int32(0), int32(-2), int64(0), int64(-1), 2.0, "", "é", nil}, {int32(-2), int32(-3), int64(0), nil, -1.5, nil, "é", true}, {int32(2), int32(2), nil, int64(0), 1.5, "", " a ", false}, {nil, int32(3), int64(-2), int64(2), -2.0, nil, "a", false}, {int32(2), int32(1), int64(-1), nil, -1.0, "ba", "cab", nil}}
	var js []string
	for _, r := range rows {
		var f []string
		for i, v := range r {
			val := "null"
			if v != nil {
				if s, ok := v.(string); ok {
					val = fmt.Sprintf("%q", s)
				} else {
					val = fmt.Sprint(v)
				}
			}
			f = append(f, fmt.Sprintf("%q:%s", refSchema[i].Name, val))
		}
		js = append(js, "{"+strings.Join(f, ",")+"}")
	}
	rec := record(t, mem, refSchema, "["+strings.Join(js, ",")+"]")
	p, a, b, s, u := col(7, "p", tBool), col(0, "a", tInt), col(1, "b", tInt), col(5, "s", tStr), col(6, "u", tStr)
	inner := caseOf(tBool, p, p, boolean(true), p, p)
	first := caseOf(tStr, nil, inner, caseOf(tStr, u, p, s, p, s), pred(planner.FnIn, i32(-2), i32(2)), call(planner.FnNullIf, tStr, s, str("a")))
	second := call(planner.FnSubstring, tStr, call(planner.FnLower, tStr, u), caseOf(tInt, a, p, b, p, b), cast(i32(1), tInt))
	for _, e := range []planner.Expr{inner, first, second, call(planner.FnCoalesce, tStr, first, second),
		call(planner.FnCoalesce, tStr, first, second, call(planner.FnUpper, tStr, call(planner.FnNullIf, tStr, u, s)))} {
		ev, err := Compile(e, mem, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ev.Eval(rec)
		t.Log(e, got, err)
	}
}
