package ops

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

var (
	joinLeft  = planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "a", Type: planner.TypeString}}
	joinRight = planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "b", Type: planner.TypeString}}
)

// joinHarness feeds a join operator and reads what it emitted since the last look.
type joinHarness struct {
	t   *testing.T
	mem memory.Allocator
	n   *planner.Join
	op  exec.Operator
	out *watermarks
}

func newJoinHarness(t *testing.T, mem memory.Allocator, n *planner.Join, opts JoinOptions) *joinHarness {
	h := &joinHarness{t: t, mem: mem, n: n, out: &watermarks{}}
	op, err := NewJoin(mem, nil, n, h.out, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.op = op
	t.Cleanup(func() { op.(exec.Closer).Close() })
	return h
}

func (h *joinHarness) feed(side int, rows string, kinds ...exec.RowKind) {
	h.t.Helper()
	schema := h.n.Left.Schema()
	if side == 1 {
		schema = h.n.Right.Schema()
	}
	b := batch(h.t, h.mem, schema, rows, kinds...)
	defer b.Release()
	if err := h.op.Process(context.Background(), side, b); err != nil {
		h.t.Fatal(err)
	}
}

func (h *joinHarness) watermark(wm int64) {
	h.t.Helper()
	if err := h.op.(exec.WatermarkHandler).ProcessWatermark(context.Background(), wm); err != nil {
		h.t.Fatal(err)
	}
}

// expect checks the rows emitted since the last call.
func (h *joinHarness) expect(want string) {
	h.t.Helper()
	if got := strings.Join(h.out.rows, " "); got != want {
		h.t.Errorf("emitted:\n%s\nwant:\n%s", got, want)
	}
	h.out.rows = nil
}

// A FULL join pads rows of either side while they match nothing, retracts the padded
// row when the first match arrives and pads again when the last match is retracted;
// equal rows are stored once each; a restored join continues from its checkpoint's rows.
func TestRegularFullJoin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	ks := &KeyedState{Store: store, Namespace: "j", LastKG: exec.MaxParallelism - 1}
	n := &planner.Join{Left: input{schema: joinLeft}, Right: input{schema: joinRight, updating: true}, Kind: "FULL", LeftKeys: []int{0}, RightKeys: []int{0}}
	h := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	h.feed(0, `[{"k":1,"a":"x"},{"k":1,"a":"x"},{"k":null,"a":"n"}]`)
	h.expect("+I[1, x, null, null] +I[1, x, null, null] +I[null, n, null, null]")
	h.feed(1, `[{"k":1,"b":"p"},{"k":2,"b":"q"}]`)
	h.expect("-D[1, x, null, null] +I[1, x, 1, p] -D[1, x, null, null] +I[1, x, 1, p] +I[null, null, 2, q]")
	handle, err := h.op.(exec.Snapshotter).Snapshot(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	h.feed(1, `[{"k":1,"b":"p"}]`, exec.UpdateBefore)
	h.expect("-U[1, x, 1, p] +I[1, x, null, null] -U[1, x, 1, p] +I[1, x, null, null]")

	// The restored join has the right row of key 1 again.
	r := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	if err := r.op.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	r.feed(0, `[{"k":1,"a":"x"},{"k":2,"a":"y"}]`, exec.Delete, exec.Insert)
	r.expect("-D[1, x, 1, p] -D[null, null, 2, q] +I[2, y, 2, q]")
	r.feed(1, `[{"k":1,"b":"p"}]`, exec.Delete)
	r.expect("-D[1, x, 1, p] +I[1, x, null, null]")
}

// An INNER join with a residual condition matches only the pairs it holds for, and a
// TTL forgets keys nobody touched for that long, retracting nothing.
func TestRegularJoinResidualAndTTL(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	joined := append(append(planner.Schema(nil), joinLeft...), joinRight...)
	ne := &planner.Call{Fn: planner.FnNe, T: planner.TypeBoolean, Args: []planner.Expr{
		&planner.ColumnRef{Index: 1, Name: "a", T: joined[1].Type}, &planner.ColumnRef{Index: 3, Name: "b", T: joined[3].Type}}}
	n := &planner.Join{Left: input{schema: joinLeft}, Right: input{schema: joinRight}, Kind: "INNER", LeftKeys: []int{0}, RightKeys: []int{0}, Residual: ne}
	clock := time.UnixMilli(0)
	h := newJoinHarness(t, mem, n, JoinOptions{TTL: time.Second, Now: func() time.Time { return clock }})
	h.feed(0, `[{"k":1,"a":"x"},{"k":1,"a":"y"}]`)
	h.feed(1, `[{"k":1,"b":"x"}]`)
	h.expect("+I[1, y, 1, x]")
	clock = clock.Add(2 * time.Second)
	if err := h.op.(exec.Flusher).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.feed(1, `[{"k":1,"b":"z"}]`)
	h.expect("")
}

// An interval join joins rows within the bounds as they arrive, and when the watermark
// passes a row's last chance, forgets it, emitting an outer row that never matched.
func TestIntervalJoin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	left := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "t", Type: planner.TypeBigInt}}
	right := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "u", Type: planner.TypeBigInt}}
	// left.t BETWEEN right.u - 10 AND right.u: -10 <= t - u <= 0.
	n := &planner.Join{Left: input{schema: left}, Right: input{schema: right}, Kind: "LEFT", LeftKeys: []int{0}, RightKeys: []int{0},
		Interval: &planner.Interval{Lower: -10, Upper: 0}, LeftTime: 1, RightTime: 1}
	h := newJoinHarness(t, mem, n, JoinOptions{})
	h.feed(0, `[{"k":1,"t":100},{"k":1,"t":200},{"k":2,"t":100}]`)
	h.feed(1, `[{"k":1,"u":105},{"k":1,"u":111},{"k":2,"u":99}]`)
	h.expect("+I[1, 100, 1, 105]")
	h.watermark(150) // the left rows at 100 can meet right rows up to 110: they expire
	h.expect("+I[2, 100, null, null] wm")
	stored := 0
	for k := range h.op.(*join).sides[0].keys.all() {
		stored += len(k.rows)
	}
	if stored != 1 {
		t.Errorf("%d left rows stored after the watermark expired two, want the one at 200", stored)
	}
	h.feed(1, `[{"k":1,"u":205}]`)
	h.expect("+I[1, 200, 1, 205]")
	h.watermark(exec.MaxWatermark)
	h.expect("wm")
	if got := h.op.(*join).sides[0].keys.len() + h.op.(*join).sides[1].keys.len(); got != 0 {
		t.Errorf("%d keys left in state after the final watermark", got)
	}
}

// An interval join that keeps one side (a regular inner join whose other side's time is
// bounded by a window's end) expires only the other side's rows; a late row of that side
// still meets the kept rows, as in a regular join. The kept rows survive a restore and
// the final watermark.
func TestIntervalJoinKeepingOneSide(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	left := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "t", Type: planner.TypeBigInt}}
	right := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "e", Type: planner.TypeBigInt}}
	// left.t BETWEEN right.e - 10 AND right.e, the right rows kept.
	n := &planner.Join{Left: input{schema: left}, Right: input{schema: right}, Kind: "INNER", LeftKeys: []int{0}, RightKeys: []int{0},
		Interval: &planner.Interval{Lower: -10, Upper: 0, Kept: [2]bool{false, true}}, LeftTime: 1, RightTime: 1}
	stored := func(h *joinHarness, side int) int {
		n := 0
		for k := range h.op.(*join).sides[side].keys.all() {
			n += len(k.rows)
		}
		return n
	}
	ks := &KeyedState{Store: store, Namespace: "kept", LastKG: exec.MaxParallelism - 1}
	h := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	h.feed(0, `[{"k":1,"t":100},{"k":1,"t":200}]`)
	h.feed(1, `[{"k":1,"e":105}]`)
	h.expect("+I[1, 100, 1, 105]")
	h.watermark(150) // the left row at 100 can meet right rows up to 110: it expires
	h.expect("wm")
	if l, r := stored(h, 0), stored(h, 1); l != 1 || r != 1 {
		t.Errorf("%d left and %d right rows stored, want the left one at 200 and the right one", l, r)
	}
	h.feed(0, `[{"k":1,"t":96}]`) // late, yet it meets the kept row; nothing to come can match it
	h.expect("+I[1, 96, 1, 105]")
	if l := stored(h, 0); l != 1 {
		t.Errorf("%d left rows stored after a late one, want 1", l)
	}
	handle, err := h.op.(exec.Snapshotter).Snapshot(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	r := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	if err := r.op.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	r.feed(1, `[{"k":1,"e":205}]`)
	r.expect("+I[1, 200, 1, 205]")
	r.feed(0, `[{"k":1,"t":99}]`)
	r.expect("+I[1, 99, 1, 105]")
	r.watermark(exec.MaxWatermark)
	r.expect("wm")
	if l, rr := stored(r, 0), stored(r, 1); l != 0 || rr != 2 {
		t.Errorf("after the final watermark %d left and %d right rows stored, want 0 and 2", l, rr)
	}

	// Bounded below only (left.t >= right.e - 10), the other bound is no overflow.
	n.Interval = &planner.Interval{Lower: -10, Upper: math.MaxInt64, Kept: [2]bool{false, true}}
	u := newJoinHarness(t, mem, n, JoinOptions{})
	u.feed(1, `[{"k":1,"e":105}]`)
	u.feed(0, `[{"k":1,"t":94},{"k":1,"t":95},{"k":1,"t":9000000000000000000}]`)
	u.expect("+I[1, 95, 1, 105] +I[1, 9000000000000000000, 1, 105]")
	u.feed(1, `[{"k":1,"e":106}]`)
	u.expect("+I[1, 9000000000000000000, 1, 106]")
}

// A semi join passes a left row once on its first match and deletes it when its last
// match is retracted; an anti join passes a row while it has no match, deleting it when
// the first arrives. Left rows keep their own row kinds; equal rows are counted; the
// matches survive a snapshot and restore.
func TestSemiAndAntiJoin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	for _, kind := range []string{"SEMI", "ANTI"} {
		t.Run(kind, func(t *testing.T) {
			ks := &KeyedState{Store: store, Namespace: kind, LastKG: exec.MaxParallelism - 1}
			n := &planner.Join{Left: input{schema: joinLeft, updating: true}, Right: input{schema: joinRight, updating: true}, Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}}
			semi := kind == "SEMI"
			pick := func(s, a string) string {
				if semi {
					return s
				}
				return a
			}
			h := newJoinHarness(t, mem, n, JoinOptions{State: ks})
			h.feed(0, `[{"k":1,"a":"x"},{"k":1,"a":"x"},{"k":null,"a":"n"},{"k":2,"a":"y"}]`)
			h.expect(pick("", "+I[1, x] +I[1, x] +I[null, n] +I[2, y]"))
			h.feed(1, `[{"k":1,"b":"p"},{"k":1,"b":"q"},{"k":null,"b":"r"}]`)
			h.expect(pick("+I[1, x] +I[1, x]", "-D[1, x] -D[1, x]"))
			h.feed(1, `[{"k":1,"b":"p"}]`, exec.UpdateBefore) // one match of two left
			h.expect("")
			handle, err := h.op.(exec.Snapshotter).Snapshot(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			h.feed(1, `[{"k":1,"b":"q"}]`, exec.Delete) // the last match
			h.expect(pick("-D[1, x] -D[1, x]", "+I[1, x] +I[1, x]"))

			// Restored, key 1 has its match q again: a left row of key 1 passes (SEMI) or
			// not (ANTI) with its own kind, and so does its retraction.
			r := newJoinHarness(t, mem, n, JoinOptions{State: ks})
			if err := r.op.(exec.Restorer).Restore(handle); err != nil {
				t.Fatal(err)
			}
			r.feed(0, `[{"k":1,"a":"z"},{"k":2,"a":"y"}]`, exec.UpdateAfter, exec.Delete)
			r.expect(pick("+U[1, z]", "-D[2, y]"))
			r.feed(1, `[{"k":1,"b":"q"}]`, exec.Delete)
			r.expect(pick("-D[1, x] -D[1, x] -D[1, z]", "+I[1, x] +I[1, x] +I[1, z]"))
			r.feed(1, `[{"k":2,"b":"s"}]`) // key 2's left row is gone
			r.expect("")
		})
	}
}

// The right side of a scalar subquery's join may hold one row: a second fails.
func TestScalarJoinSecondRow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	n := &planner.Join{Left: input{schema: joinLeft}, Right: input{schema: joinRight, updating: true}, Kind: "LEFT", Scalar: "(SELECT k, b FROM t)"}
	h := newJoinHarness(t, mem, n, JoinOptions{})
	h.feed(0, `[{"k":1,"a":"x"}]`)
	h.expect("+I[1, x, null, null]")
	h.feed(1, `[{"k":7,"b":"p"}]`)
	h.expect("-D[1, x, null, null] +I[1, x, 7, p]")
	h.feed(1, `[{"k":7,"b":"p"},{"k":8,"b":"q"}]`, exec.UpdateBefore, exec.UpdateAfter) // an update is one row
	h.expect("-U[1, x, 7, p] +I[1, x, null, null] -D[1, x, null, null] +U[1, x, 8, q]")
	b := batch(t, mem, joinRight, `[{"k":9,"b":"r"}]`)
	defer b.Release()
	err := h.op.Process(context.Background(), 1, b)
	if err == nil || !strings.Contains(err.Error(), "scalar subquery produced 2 rows") {
		t.Fatalf("a second row: got %v", err)
	}
}

// TestJoinForgetsKeysNoCheckpointHeld: rows that come and go between two checkpoints
// (as a window's do) leave the list of changed rows, so it does not grow with what
// passes between checkpoints, and the next checkpoint writes nothing for them; a row a
// checkpoint held is deleted by the next one.
func TestJoinForgetsKeysNoCheckpointHeld(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	ks := &KeyedState{Store: store, Namespace: "j", LastKG: exec.MaxParallelism - 1}
	left := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "t", Type: planner.TypeBigInt}}
	right := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "u", Type: planner.TypeBigInt}}
	n := &planner.Join{Left: input{schema: left}, Right: input{schema: right}, Kind: "INNER", LeftKeys: []int{0}, RightKeys: []int{0},
		Interval: &planner.Interval{Lower: -10, Upper: 0}, LeftTime: 1, RightTime: 1}
	h := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	ctx := context.Background()
	h.feed(0, `[{"k":0,"t":100}]`)
	first, err := h.op.(exec.Snapshotter).Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var rows strings.Builder
	for i := 1; i <= 5000; i++ {
		if rows.Len() > 0 {
			rows.WriteByte(',')
		}
		fmt.Fprintf(&rows, `{"k":%d,"t":%d}`, i, 200+i)
		if i%100 == 0 {
			h.feed(0, "["+rows.String()+"]")
			rows.Reset()
			h.watermark(int64(200 + i + 20)) // each batch's keys expire
		}
	}
	j := h.op.(*join)
	if len(j.dirty) > 2100 {
		t.Errorf("%d changed rows listed after 5,000 came and went", len(j.dirty))
	}
	handle, err := h.op.(exec.Snapshotter).Snapshot(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, keys := j.LastSnapshot(); keys != 1 {
		t.Errorf("checkpoint 2 wrote %d entries, want key 0's row's deletion only", keys)
	}
	r := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	if err := r.op.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	if got := r.op.(*join).sides[0].keys.len(); got != 0 {
		t.Errorf("restored from checkpoint 2, %d keys, want none", got)
	}
	// Restored from checkpoint 1, key 0 is one a checkpoint holds: when it expires, the
	// next checkpoint deletes it.
	r1 := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	if err := r1.op.(exec.Restorer).Restore(first); err != nil {
		t.Fatal(err)
	}
	r1.watermark(1000)
	if _, err := r1.op.(exec.Snapshotter).Snapshot(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, keys := r1.op.(*join).LastSnapshot(); keys != 1 {
		t.Errorf("after a restore, checkpoint 3 wrote %d keys, want key 0's deletion", keys)
	}
}

// A join restores the state earlier versions wrote, an entry per key holding all its
// rows (equal rows folded), and its next checkpoint replaces those entries with an
// entry per row, from which it restores alike.
func TestJoinRestoresPerKeyState(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	store := testStore(t)
	ks := &KeyedState{Store: store, Namespace: "j", LastKG: exec.MaxParallelism - 1}
	n := &planner.Join{Left: input{schema: joinLeft}, Right: input{schema: joinRight, updating: true}, Kind: "FULL", LeftKeys: []int{0}, RightKeys: []int{0}}

	// The state of TestRegularFullJoin's first checkpoint, as the earlier format wrote it.
	perKey := func(side byte, k int64, rows ...[]value) state.KV { // each row: count, assoc, then its values
		enc := string(appendValueBytes(nil, value{i: k}))
		key := []byte{0, 0, side} // key group 0: this one task reads them all
		v := binary.AppendUvarint(binary.AppendVarint(nil, 0), uint64(len(rows)))
		for _, r := range rows {
			v = binary.AppendVarint(binary.AppendVarint(v, r[0].i), r[1].i)
			v = binary.AppendVarint(binary.AppendVarint(v, 0), 0)
			for _, x := range r[2:] {
				v = appendValueBytes(v, x)
			}
		}
		return state.KV{Key: append(key, enc...), Value: v}
	}
	old := state.Delta{Puts: []state.KV{
		perKey(0, 1, []value{{i: 2}, {i: 1}, {i: 1}, {s: "x"}}),
		perKey(1, 1, []value{{i: 1}, {i: 2}, {i: 1}, {s: "p"}}),
		perKey(1, 2, []value{{i: 1}, {i: 0}, {i: 2}, {s: "q"}}),
	}}
	if _, err := store.WriteDelta("j", 1, old); err != nil {
		t.Fatal(err)
	}
	handle, err := json.Marshal(stateHandle{Namespace: "j", Checkpoint: 1, Watermark: exec.MinWatermark})
	if err != nil {
		t.Fatal(err)
	}
	h := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	if err := h.op.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	h.feed(1, `[{"k":1,"b":"p"}]`, exec.UpdateBefore)
	h.expect("-U[1, x, 1, p] -U[1, x, 1, p] +I[1, x, null, null] +I[1, x, null, null]")
	if handle, err = h.op.(exec.Snapshotter).Snapshot(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if _, entries := h.op.(exec.SnapshotMeter).LastSnapshot(); entries != 5 {
		t.Errorf("the checkpoint wrote %d entries, want 5: 3 keys deleted, 2 rows put", entries)
	}
	err = store.Read("j", 2, 0, exec.MaxParallelism-1, func(key, _ []byte) error {
		if key[2] < rowEntry {
			t.Errorf("an entry of the earlier format is left: %q", key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	r := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	if err := r.op.(exec.Restorer).Restore(handle); err != nil {
		t.Fatal(err)
	}
	r.feed(1, `[{"k":1,"b":"p"}]`)
	r.expect("-D[1, x, null, null] -D[1, x, null, null] +I[1, x, 1, p] +I[1, x, 1, p]")
	r.feed(0, `[{"k":2,"a":"y"}]`)
	r.expect("-D[null, null, 2, q] +I[2, y, 2, q]")
}
