package ops

import (
	"context"
	"path/filepath"
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
// equal rows are counted; a restored join continues from its checkpoint's rows.
func TestRegularFullJoin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ks := &KeyedState{Store: store, Namespace: "j", LastKG: exec.MaxParallelism - 1}
	n := &planner.Join{Left: input{schema: joinLeft}, Right: input{schema: joinRight, updating: true}, Kind: "FULL", LeftKeys: []int{0}, RightKeys: []int{0}}
	h := newJoinHarness(t, mem, n, JoinOptions{State: ks})
	h.feed(0, `[{"k":1,"a":"x"},{"k":1,"a":"x"},{"k":null,"a":"n"}]`)
	h.expect("+I[1, x, null, null] +I[1, x, null, null] +I[null, n, null, null]")
	h.feed(1, `[{"k":1,"b":"p"},{"k":2,"b":"q"}]`)
	h.expect("-D[1, x, null, null] -D[1, x, null, null] +I[1, x, 1, p] +I[1, x, 1, p] +I[null, null, 2, q]")
	handle, err := h.op.(exec.Snapshotter).Snapshot(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	h.feed(1, `[{"k":1,"b":"p"}]`, exec.UpdateBefore)
	h.expect("-U[1, x, 1, p] -U[1, x, 1, p] +I[1, x, null, null] +I[1, x, null, null]")

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
	defer mem.AssertSize(t, 0)
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
	defer mem.AssertSize(t, 0)
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
	h.feed(1, `[{"k":1,"u":205}]`)
	h.expect("+I[1, 200, 1, 205]")
	h.watermark(exec.MaxWatermark)
	h.expect("wm")
	if got := len(h.op.(*join).sides[0].keys) + len(h.op.(*join).sides[1].keys); got != 0 {
		t.Errorf("%d keys left in state after the final watermark", got)
	}
}
