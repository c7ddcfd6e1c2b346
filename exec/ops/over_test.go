package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// overInput is the input of the OVER tests: a key, a time and a value.
var overInput = planner.Schema{{Name: "k", Type: planner.TypeString}, {Name: "ts", Type: planner.TypeBigInt}, {Name: "v", Type: planner.TypeBigInt}}

// overHarness feeds an over operator and reads what it emitted since the last look.
type overHarness struct {
	t   *testing.T
	mem memory.Allocator
	n   *planner.OverAggregate
	op  *over
	out *watermarks
}

func newOverHarness(t *testing.T, mem memory.Allocator, n *planner.OverAggregate, ks *KeyedState) *overHarness {
	t.Helper()
	h := &overHarness{t: t, mem: mem, n: n, out: &watermarks{}}
	op, err := NewOver(mem, n, h.out, ks)
	if err != nil {
		t.Fatal(err)
	}
	h.op = op.(*over)
	t.Cleanup(func() { h.op.Close() })
	return h
}

func (h *overHarness) feed(rows string) {
	h.t.Helper()
	b := batch(h.t, h.mem, h.n.Input.Schema(), rows)
	defer b.Release()
	if err := h.op.Process(context.Background(), 0, b); err != nil {
		h.t.Fatal(err)
	}
}

func (h *overHarness) watermark(wm int64) {
	h.t.Helper()
	if err := h.op.ProcessWatermark(context.Background(), wm); err != nil {
		h.t.Fatal(err)
	}
}

func (h *overHarness) expect(want string) {
	h.t.Helper()
	if got := strings.Join(h.out.rows, " "); got != want {
		h.t.Errorf("emitted:\n%s\nwant:\n%s", got, want)
	}
	h.out.rows = nil
}

// frames returns the number of rows each partition keeps in its frame, by key.
func (h *overHarness) frames() map[string]int {
	out := map[string]int{}
	for _, k := range []string{"a", "b", "c"} {
		if p := h.op.parts[string(appendValueBytes(nil, value{s: k}))]; p != nil {
			out[k] = len(p.frame)
		}
	}
	return out
}

func overNode(rows bool, preceding int64) *planner.OverAggregate {
	return &planner.OverAggregate{Input: input{schema: overInput}, PartitionBy: []int{0}, TimeCol: 1, Rows: rows, Preceding: preceding,
		Aggs:  []planner.AggCall{{Fn: planner.AggSum, Arg: 2, T: planner.TypeBigInt}, {Fn: planner.AggMax, Arg: 2, T: planner.TypeBigInt}},
		Names: []string{"s", "m"}}
}

// ROWS BETWEEN 1 PRECEDING AND CURRENT ROW: rows wait for the watermark, then come out
// in time order with the sum and maximum of themselves and the row before; the frame
// keeps one row; a row at or before its key's last emitted time is late, while a new
// key's row behind the watermark is not (as in Flink); a restored operator goes on
// exactly as the original.
func TestOverRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ks := openStore(t)
	n := overNode(true, 1)
	h := newOverHarness(t, mem, n, ks)
	h.feed(`[{"k":"a","ts":3,"v":30},{"k":"a","ts":1,"v":10},{"k":"b","ts":2,"v":5},{"k":"a","ts":5,"v":1}]`)
	h.expect("")
	h.watermark(3)
	h.expect("+I[a, 1, 10, 10, 10] +I[b, 2, 5, 5, 5] +I[a, 3, 30, 40, 30] wm")
	if got := h.frames(); got["a"] != 1 || got["b"] != 1 {
		t.Errorf("frames keep %v rows, want 1 each", got)
	}
	h.feed(`[{"k":"a","ts":3,"v":99},{"k":"a","ts":4,"v":4},{"k":"c","ts":1,"v":7}]`)
	if h.op.LateRows() != 1 {
		t.Errorf("late rows %d, want 1 (a at 3)", h.op.LateRows())
	}
	handle := h.snapshot(1)
	h.watermark(10)
	h.expect("+I[c, 1, 7, 7, 7] +I[a, 4, 4, 34, 30] +I[a, 5, 1, 5, 4] wm")

	r := newOverHarness(t, mem, n, ks)
	if err := r.op.Restore(handle); err != nil {
		t.Fatal(err)
	}
	r.watermark(10)
	r.expect("+I[c, 1, 7, 7, 7] +I[a, 4, 4, 34, 30] +I[a, 5, 1, 5, 4] wm")
	r.feed(`[{"k":"a","ts":5,"v":8}]`)
	if r.op.LateRows() != 1 {
		t.Errorf("restored: late rows %d, want 1 (a at 5)", r.op.LateRows())
	}
}

func (h *overHarness) snapshot(id int64) []byte {
	h.t.Helper()
	handle, err := h.op.Snapshot(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return handle
}

// RANGE BETWEEN 10 PRECEDING AND CURRENT ROW: the rows of one time are peers, in each
// other's frames; rows older than the frame are retracted and forgotten.
func TestOverRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	h := newOverHarness(t, mem, overNode(false, 10), nil)
	h.feed(`[{"k":"a","ts":10,"v":1},{"k":"a","ts":15,"v":2},{"k":"a","ts":15,"v":3},{"k":"a","ts":25,"v":4},{"k":"a","ts":26,"v":5}]`)
	h.watermark(100)
	h.expect("+I[a, 10, 1, 1, 1] +I[a, 15, 2, 6, 3] +I[a, 15, 3, 6, 3] +I[a, 25, 4, 9, 4] +I[a, 26, 5, 9, 5] wm")
	if got := h.frames()["a"]; got != 2 {
		t.Errorf("the frame keeps %d rows, want 2 (those at 25 and 26)", got)
	}
}

// UNBOUNDED PRECEDING keeps no rows, only its accumulators.
func TestOverUnbounded(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	h := newOverHarness(t, mem, overNode(true, -1), nil)
	h.feed(`[{"k":"a","ts":2,"v":2},{"k":"a","ts":1,"v":1},{"k":"a","ts":2,"v":3}]`)
	h.watermark(5)
	h.expect("+I[a, 1, 1, 1, 1] +I[a, 2, 2, 3, 2] +I[a, 2, 3, 6, 3] wm")
	if got := h.frames()["a"]; got != 0 {
		t.Errorf("the frame keeps %d rows, want 0", got)
	}
}

var _ exec.Operator = (*over)(nil)
