package planner

import (
	"strings"
	"testing"
)

// TestFunctionTableShape checks what every row of the function table must satisfy; the
// examples themselves run in exec/expr (TestFunctionExamples).
func TestFunctionTableShape(t *testing.T) {
	names := map[string]Func{}
	for _, f := range Functions() {
		if f.Result == nil {
			t.Errorf("%s has no Result", f.Fn)
		}
		if len(f.Examples) == 0 {
			t.Errorf("%s has no examples", f.Fn)
		}
		if !f.Variadic && f.Min > len(f.Args) {
			t.Errorf("%s: Min %d is more than its %d Args", f.Fn, f.Min, len(f.Args))
		}
		if f.Variadic && len(f.Args) == 0 {
			t.Errorf("%s is variadic without an argument kind to repeat", f.Fn)
		}
		if f.Unit && (len(f.Units) == 0 || len(f.Args) == 0 || f.Args[0] != ArgString) {
			t.Errorf("%s takes a unit word but lists no units or no STRING first argument", f.Fn)
		}
		for _, n := range f.Names {
			if n != strings.ToUpper(n) {
				t.Errorf("%s: name %s is not upper case (calls are looked up upper-cased)", f.Fn, n)
			}
			if other, dup := names[n]; dup {
				t.Errorf("name %s belongs to both %s and %s", n, other, f.Fn)
			}
			if _, agg := aggIndex[n]; agg {
				t.Errorf("name %s is also an aggregate", n)
			}
			names[n] = f.Fn
		}
	}
	if got := FunctionNames(); len(got) != len(names)+len(aggIndex) {
		t.Errorf("FunctionNames lists %d names, want %d", len(got), len(names)+len(aggIndex))
	}
}
