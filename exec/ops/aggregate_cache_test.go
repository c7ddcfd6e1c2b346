package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// TestAggregateLargerThanCache: an aggregate whose groups do not fit its cache moves
// the least used ones to its scratch file and back, and emits exactly what one holding
// every group in memory emits, through checkpoints and a restore (itself larger than
// the cache), for integer and string keys, inserts and retractions.
func TestAggregateLargerThanCache(t *testing.T) {
	for _, keyType := range []planner.Type{planner.TypeBigInt, planner.TypeString} {
		t.Run(keyType.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			dir := t.TempDir()
			ctx := context.Background()
			schema := planner.Schema{{Name: "k", Type: keyType}, {Name: "v", Type: planner.TypeBigInt}}
			node := &planner.Aggregate{
				Input: input{schema: schema, updating: true}, Keys: []int{0},
				Aggs: []planner.AggCall{
					{Fn: planner.AggCount, Arg: -1, T: planner.TypeBigInt},
					{Fn: planner.AggSum, Arg: 1, T: planner.TypeBigInt},
					{Fn: planner.AggMax, Arg: 1, T: planner.TypeBigInt},
				},
				Names: []string{"k", "n", "s", "mx"},
			}
			// The same random changelog for both: inserts of 2000 keys, and retractions
			// of rows inserted before.
			r := rand.New(rand.NewPCG(1, 2))
			type row struct{ k, v int }
			var live []row
			var steps []exec.Batch
			for step := 0; step < 60; step++ {
				var js []string
				var kinds []exec.RowKind
				for i := 0; i < 100; i++ {
					x := row{r.IntN(2000), r.IntN(100)}
					kind := exec.Insert
					if len(live) > 0 && r.IntN(4) == 0 {
						j := r.IntN(len(live))
						x, kind = live[j], exec.Delete
						live = append(live[:j], live[j+1:]...)
					} else {
						live = append(live, x)
					}
					k := fmt.Sprint(x.k)
					if keyType.Kind == planner.String {
						k = fmt.Sprintf("%q", fmt.Sprint("key-", x.k))
					}
					js = append(js, fmt.Sprintf(`{"k":%s,"v":%d}`, k, x.v))
					kinds = append(kinds, kind)
				}
				steps = append(steps, batch(t, mem, schema, "["+strings.Join(js, ",")+"]", kinds...))
			}
			defer func() {
				for _, b := range steps {
					b.Release()
				}
			}()
			// run feeds steps [from, to), checkpointing (id = step) every 10 steps.
			run := func(op exec.Operator, from, to int) string {
				out := op.(*aggregate).out.(*collect)
				for i := from; i < to; i++ {
					if err := op.Process(ctx, 0, steps[i]); err != nil {
						t.Fatal(err)
					}
					if err := op.(exec.Flusher).Flush(ctx); err != nil {
						t.Fatal(err)
					}
					if i%10 == 9 {
						if _, err := op.(exec.Snapshotter).Snapshot(ctx, int64(i+1)); err != nil {
							t.Fatal(err)
						}
					}
				}
				return strings.Join(out.rows, " ")
			}
			open := func(name string, cache Cache) (exec.Operator, *state.Store) {
				store, err := state.Open(filepath.Join(dir, name+".db"))
				if err != nil {
					t.Fatal(err)
				}
				ks := &KeyedState{Store: store, Namespace: "agg", LastKG: exec.MaxParallelism - 1}
				op := NewAggregate(mem, node, &collect{}, ks, cache)
				t.Cleanup(func() { op.(exec.Closer).Close(); store.Close() })
				return op, store
			}
			small := Cache{MaxGroups: 50, SpillPath: filepath.Join(dir, "spill.db")}
			inMemory, memStore := open("memory", Cache{})
			cached, cacheStore := open("cached", small)
			if want, got := run(inMemory, 0, 40), run(cached, 0, 40); got != want {
				t.Fatalf("with a cache of 50 groups the changes differ:\n%.600s\nwant:\n%.600s", got, want)
			}
			if !cached.(*aggregate).spill.any || cached.(*aggregate).liveGroups() > 50 {
				t.Fatalf("the cache was not used: %d groups in memory", cached.(*aggregate).liveGroups())
			}
			// Restore both from checkpoint 40 and go on: the same again.
			handle := []byte(`{"Namespace":"agg","Checkpoint":40}`)
			restore := func(store *state.Store, cache Cache) exec.Operator {
				ks := &KeyedState{Store: store, Namespace: "agg", LastKG: exec.MaxParallelism - 1}
				op := NewAggregate(mem, node, &collect{}, ks, cache)
				t.Cleanup(func() { op.(exec.Closer).Close() })
				if err := op.(exec.Restorer).Restore(handle); err != nil {
					t.Fatal(err)
				}
				return op
			}
			small.SpillPath = filepath.Join(dir, "spill-restored.db")
			want := run(restore(memStore, Cache{}), 40, 60)
			if got := run(restore(cacheStore, small), 40, 60); got != want {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("restored with a cache, the changes differ at %d:\n%.300s\nwant:\n%.300s", i, got[max(0, i-100):], want[max(0, i-100):])
			}
		})
	}
}
