package ops

import (
	"testing"

	"github.com/streamsql/streamsql/planner"
)

// groupKeys gives back the keys it was given, NULLs and changes included, whether it
// keeps them as integers or as values.
func TestGroupKeys(t *testing.T) {
	for _, c := range []struct {
		schema planner.Schema
		ints   bool
		keys   [][]value
	}{
		{planner.Schema{{Name: "a", Type: planner.TypeBigInt}, {Name: "t", Type: planner.TypeTS}}, true,
			[][]value{{{i: 7}, {i: 1000}}, {{null: true}, {i: -5}}, {{i: 0}, {null: true}}}},
		{planner.Schema{{Name: "s", Type: planner.TypeString}, {Name: "t", Type: planner.TypeTS}}, false,
			[][]value{{{s: "x"}, {i: 1000}}, {{null: true}, {i: -5}}, {{s: ""}, {null: true}}}},
	} {
		k := newGroupKeys([]int{0, 1}, c.schema)
		if k.ints != c.ints {
			t.Fatalf("%s: kept as integers %v, want %v", c.schema, k.ints, c.ints)
		}
		for g, key := range c.keys {
			k.grow()
			k.set(int32(g), key)
		}
		k.setInt(1, 1, 42)
		c.keys[1][1].i = 42
		for g, want := range c.keys {
			got := k.key(int32(g))
			for col := range want {
				if got[col] != want[col] || k.value(int32(g), col) != want[col] {
					t.Errorf("%s: group %d column %d is %+v and %+v, want %+v", c.schema, g, col, got[col], k.value(int32(g), col), want[col])
				}
			}
			if !want[1].null && k.int(int32(g), 1) != want[1].i {
				t.Errorf("%s: group %d's integer is %d, want %d", c.schema, g, k.int(int32(g), 1), want[1].i)
			}
		}
	}
}
