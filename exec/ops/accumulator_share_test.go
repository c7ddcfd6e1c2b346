package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// TestDistinctShareMatchesOwnSets: DISTINCT calls over one column that share their set
// give each call the results, the saved state, the merges and the resets of calls with
// sets of their own, over inserts and retractions. Five calls make a share of four and
// one call alone.
func TestDistinctShareMatchesOwnSets(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := planner.Schema{{Name: "x", Type: planner.TypeBigInt}, {Name: "f0", Type: planner.TypeBoolean},
		{Name: "f1", Type: planner.TypeBoolean}, {Name: "f2", Type: planner.TypeBoolean}}
	calls := []planner.AggCall{
		{Fn: planner.AggCount, Arg: 0, Distinct: true, T: planner.TypeBigInt},
		{Fn: planner.AggCount, Arg: 0, Distinct: true, T: planner.TypeBigInt, Filter: 2},
		{Fn: planner.AggCount, Arg: 0, Distinct: true, T: planner.TypeBigInt, Filter: 3},
		{Fn: planner.AggCount, Arg: 0, Distinct: true, T: planner.TypeBigInt, Filter: 4},
		{Fn: planner.AggSum, Arg: 0, Distinct: true, T: planner.TypeBigInt, Filter: 2},
	}
	const groups = 4
	newAccs := func(shared bool) *aggregate {
		a := &aggregate{calls: calls}
		for _, c := range calls {
			a.accs = append(a.accs, newAccumulator(c, in, true))
		}
		if shared {
			shareDistinct(a.accs, calls)
		}
		for _, acc := range a.accs {
			acc.grow(groups)
		}
		return a
	}
	shared, own := newAccs(true), newAccs(false)
	if d := shared.accs[0].(*distinctInts); d.share == nil || len(d.share.members) != shareSlots || shared.accs[4].(*distinctInts).share != nil {
		t.Fatal("the first four calls do not share one set, or the fifth does not keep its own")
	}
	compare := func(when string, a, b *aggregate) {
		t.Helper()
		for g := int32(0); g < groups; g++ {
			for i := range calls {
				if x, y := fmt.Sprint(a.accs[i].result(g)), fmt.Sprint(b.accs[i].result(g)); x != y {
					t.Fatalf("%s: call %d of group %d: %s, want %s", when, i, g, x, y)
				}
			}
		}
	}
	type row struct {
		x     int64
		g     int32
		flags [3]bool
	}
	r := rand.New(rand.NewPCG(3, 7))
	var live []row
	feed := func(batch int, aggs ...*aggregate) {
		xs, fs := array.NewInt64Builder(mem), [3]*array.BooleanBuilder{array.NewBooleanBuilder(mem), array.NewBooleanBuilder(mem), array.NewBooleanBuilder(mem)}
		var gs []int32
		var signs []int8
		for range 200 {
			rw, sign := row{x: r.Int64N(3000), g: r.Int32N(groups), flags: [3]bool{r.IntN(2) == 0, r.IntN(3) == 0, r.IntN(4) == 0}}, int8(1)
			switch {
			case r.IntN(20) == 0: // retract a row that is not there, which changes nothing
				sign = -1
			case len(live) > 0 && r.IntN(3) == 0: // retract a row that is there
				k := r.IntN(len(live))
				rw, sign = live[k], -1
				live[k] = live[len(live)-1]
				live = live[:len(live)-1]
			default:
				live = append(live, rw)
			}
			xs.Append(rw.x)
			for j, f := range fs {
				f.Append(rw.flags[j])
			}
			gs, signs = append(gs, rw.g), append(signs, sign)
		}
		cols := []arrow.Array{xs.NewArray(), fs[0].NewArray(), fs[1].NewArray(), fs[2].NewArray()}
		rec := array.NewRecord(exec.ArrowSchema(in), cols, int64(len(gs)))
		for _, c := range cols {
			c.Release()
		}
		xs.Release()
		for _, f := range fs {
			f.Release()
		}
		defer rec.Release()
		for _, a := range aggs {
			before := slices.Clone(gs)
			if err := a.updateAccs(rec, gs, signs); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gs, before) {
				t.Fatal("updating the accumulators changed the rows' groups")
			}
		}
		for _, a := range aggs[1:] {
			compare(fmt.Sprintf("batch %d", batch), aggs[0], a)
		}
	}
	busy := newAccs(true)
	for range 10 { // a share holding other rows, to load the state into later
		feed(-1, busy)
	}
	live = nil
	for b := range 20 {
		feed(b, shared, own)
	}
	// Each call's saved state, loaded into sets of their own and into a share, is the
	// state of the call's own set. They are saved as a snapshot saves them, group by
	// group: the share encodes all its calls' sets of a group at the first call's save,
	// and a change voids that encoding.
	shared.accs[1].save(nil, 0)
	feed(20, shared, own)
	saved := make([][][]byte, len(calls))
	for i := range calls {
		saved[i] = make([][]byte, groups)
	}
	for g := int32(0); g < groups; g++ {
		for i := range calls {
			saved[i][g] = shared.accs[i].save(nil, g)
		}
	}
	var loadedOwn, loadedShared *aggregate
	for _, name := range []string{"own", "shared", "busy"} {
		loaded := busy
		if name != "busy" {
			loaded = newAccs(name == "shared")
		}
		switch name {
		case "own":
			loadedOwn = loaded
		case "shared":
			loadedShared = loaded
		}
		for i := range calls {
			for g := int32(0); g < groups; g++ {
				dec := &decoder{buf: saved[i][g]}
				loaded.accs[i].load(dec, g)
				if dec.err != nil || len(dec.buf) != 0 {
					t.Fatalf("call %d group %d: loading the saved state: %v, %d bytes left", i, g, dec.err, len(dec.buf))
				}
			}
		}
		compare("loaded into "+name, loaded, own)
	}
	feed(21, busy, loadedOwn)           // what the busy share held before is gone
	feed(22, own, shared, loadedShared) // the loaded sets are the sets saved
	live = nil
	for _, a := range []*aggregate{shared, own} {
		for _, acc := range a.accs {
			acc.merge(0, 1)
			acc.reset(2)
		}
	}
	compare("after a merge and a reset", shared, own)
	feed(23, shared, own) // the merged and reset groups go on counting alike
}
