package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

var (
	lookupLeft  = planner.Schema{{Name: "id", Type: planner.TypeBigInt}, {Name: "cid", Type: planner.TypeBigInt}}
	lookupTable = &planner.Table{Name: "customers", Columns: []planner.TableColumn{
		{Name: "cid", Type: planner.TypeBigInt}, {Name: "name", Type: planner.TypeString}}}
)

// fakeTable is a Lookuper over fixed rows that notes every call's keys and fails
// while fail is above zero.
type fakeTable struct {
	mem   memory.Allocator
	rows  map[int64][]string // cid -> names
	calls [][]int64
	fail  int
	whole bool
}

func (f *fakeTable) Lookup(_ context.Context, keys arrow.Record) (arrow.Record, error) {
	if f.fail > 0 {
		f.fail--
		return nil, errors.New("server down")
	}
	var asked []int64
	if keys != nil {
		asked = slices.Clone(keys.Column(0).(*array.Int64).Int64Values())
	} else {
		for k := range f.rows {
			asked = append(asked, k)
		}
		slices.Sort(asked)
	}
	f.calls = append(f.calls, asked)
	b := array.NewRecordBuilder(f.mem, exec.ArrowSchema(lookupTable.PhysicalSchema()))
	defer b.Release()
	for _, k := range asked {
		for _, name := range f.rows[k] {
			b.Field(0).(*array.Int64Builder).Append(k)
			b.Field(1).(*array.StringBuilder).Append(name)
		}
	}
	return b.NewRecord(), nil
}

func (f *fakeTable) Close() error { return nil }

type wholeTable struct{ *fakeTable }

func (wholeTable) Reload() time.Duration { return time.Minute }

type lookupHarness struct {
	t   *testing.T
	mem memory.Allocator
	op  exec.Operator
	out *collect
	now time.Time
}

func newLookupHarness(t *testing.T, mem memory.Allocator, n *planner.LookupJoin, opts LookupOptions) *lookupHarness {
	h := &lookupHarness{t: t, mem: mem, out: &collect{}, now: time.Unix(1000, 0)}
	opts.Now = func() time.Time { return h.now }
	opts.Backoff = func(int) time.Duration { return time.Millisecond }
	op, err := NewLookupJoin(mem, nil, n, h.out, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.op = op
	t.Cleanup(func() { op.(exec.Closer).Close() })
	return h
}

func (h *lookupHarness) feed(rows string) error {
	h.t.Helper()
	b := batch(h.t, h.mem, lookupLeft, rows)
	defer b.Release()
	return h.op.Process(context.Background(), 0, b)
}

func (h *lookupHarness) expect(want string) {
	h.t.Helper()
	if got := strings.Join(h.out.rows, " "); got != want {
		h.t.Errorf("emitted:\n%s\nwant:\n%s", got, want)
	}
	h.out.rows = nil
}

func lookupNode(kind string, residual planner.Expr) *planner.LookupJoin {
	return &planner.LookupJoin{Input: input{schema: lookupLeft}, Table: lookupTable, Kind: kind,
		LeftKeys: []planner.Expr{&planner.ColumnRef{Index: 1, Name: "cid", T: planner.TypeBigInt}}, RightKeys: []int{0}, Residual: residual}
}

// One lookup per batch asks for its distinct keys without NULLs; a key with several
// rows joins each; an INNER join drops rows without a match.
func TestLookupJoinOneLookupPerBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := &fakeTable{mem: mem, rows: map[int64][]string{1: {"a"}, 2: {"b", "b2"}}}
	h := newLookupHarness(t, mem, lookupNode("INNER", nil), LookupOptions{Source: src})
	if err := h.feed(`[{"id":1,"cid":1},{"id":2,"cid":2},{"id":3,"cid":1},{"id":4,"cid":9},{"id":5,"cid":null}]`); err != nil {
		t.Fatal(err)
	}
	h.expect("+I[1, 1, 1, a] +I[2, 2, 2, b] +I[2, 2, 2, b2] +I[3, 1, 1, a]")
	if fmt.Sprint(src.calls) != "[[1 2 9]]" {
		t.Errorf("lookups %v, want one of [1 2 9]", src.calls)
	}
	// Without a cache, the next batch looks its keys up again.
	if err := h.feed(`[{"id":6,"cid":1}]`); err != nil {
		t.Fatal(err)
	}
	h.expect("+I[6, 1, 1, a]")
	if len(src.calls) != 2 {
		t.Errorf("lookups %v, want a second one", src.calls)
	}
}

// LEFT pads the rows without a match, also those whose matches the residual
// condition drops, in the input's order.
func TestLookupJoinLeftResidual(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := &fakeTable{mem: mem, rows: map[int64][]string{1: {"a"}, 2: {"b", "bb"}}}
	// name <> 'b': the residual reads the table's column (index 3 of the joined row).
	ne := &planner.Call{Fn: planner.FnNe, Args: []planner.Expr{&planner.ColumnRef{Index: 3, Name: "name", T: planner.TypeString},
		&planner.Literal{Value: "b", T: planner.Type{Kind: planner.String, NotNull: true}}}, T: planner.TypeBoolean}
	h := newLookupHarness(t, mem, lookupNode("LEFT", ne), LookupOptions{Source: src})
	if err := h.feed(`[{"id":1,"cid":2},{"id":2,"cid":9},{"id":3,"cid":1},{"id":4,"cid":null}]`); err != nil {
		t.Fatal(err)
	}
	h.expect("+I[1, 2, 2, bb] +I[2, 9, null, null] +I[3, 1, 1, a] +I[4, null, null, null]")
}

// A PARTIAL cache answers the keys it holds, until they expire after write or access;
// it keeps at most MaxRows keys (least recently used out), and keys without rows only
// with CacheMissingKey.
func TestLookupJoinPartialCache(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := &fakeTable{mem: mem, rows: map[int64][]string{1: {"a"}, 2: {"b"}, 3: {"c"}}}
	h := newLookupHarness(t, mem, lookupNode("INNER", nil), LookupOptions{Source: src, Partial: true, MaxRows: 2,
		ExpireAfterWrite: time.Minute, CacheMissingKey: false})
	step := func(rows, want, calls string) {
		t.Helper()
		if err := h.feed(rows); err != nil {
			t.Fatal(err)
		}
		h.expect(want)
		if got := fmt.Sprint(src.calls); got != calls {
			t.Errorf("lookups %s, want %s", got, calls)
		}
	}
	step(`[{"id":1,"cid":1},{"id":2,"cid":2}]`, "+I[1, 1, 1, a] +I[2, 2, 2, b]", "[[1 2]]")
	step(`[{"id":3,"cid":2},{"id":4,"cid":1}]`, "+I[3, 2, 2, b] +I[4, 1, 1, a]", "[[1 2]]")         // both cached
	step(`[{"id":5,"cid":3}]`, "+I[5, 3, 3, c]", "[[1 2] [3]]")                                     // 3 evicts 2, the least recently used
	step(`[{"id":6,"cid":1},{"id":7,"cid":2}]`, "+I[6, 1, 1, a] +I[7, 2, 2, b]", "[[1 2] [3] [2]]") // 1 stayed
	step(`[{"id":8,"cid":9}]`, "", "[[1 2] [3] [2] [9]]")
	step(`[{"id":9,"cid":9}]`, "", "[[1 2] [3] [2] [9] [9]]") // a missing key is not cached
	h.now = h.now.Add(time.Minute)
	src.rows[2] = []string{"b'"}
	step(`[{"id":10,"cid":2}]`, "+I[10, 2, 2, b']", "[[1 2] [3] [2] [9] [9] [2]]") // expired after write

	stats := h.op.(LookupCounter).LookupStats()
	if stats.Lookups.Load() != 6 || stats.Hits.Load() != 3 {
		t.Errorf("lookups %d, hits %d; want 6 and 3", stats.Lookups.Load(), stats.Hits.Load())
	}
}

// Expiry after access: a key used within the limit stays; one idle that long is read
// again. A missing key is cached by default.
func TestLookupJoinExpireAfterAccess(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := &fakeTable{mem: mem, rows: map[int64][]string{1: {"a"}}}
	h := newLookupHarness(t, mem, lookupNode("INNER", nil), LookupOptions{Source: src, Partial: true,
		ExpireAfterAccess: 10 * time.Second, CacheMissingKey: true})
	for i, step := range []time.Duration{0, 9 * time.Second, 9 * time.Second, 10 * time.Second} {
		h.now = h.now.Add(step)
		if err := h.feed(`[{"id":1,"cid":1},{"id":2,"cid":5}]`); err != nil {
			t.Fatal(err)
		}
		h.expect("+I[1, 1, 1, a]")
		if want := []int{1, 1, 1, 2}[i]; len(src.calls) != want {
			t.Errorf("step %d: %d lookups, want %d", i, len(src.calls), want)
		}
	}
}

// A failed lookup is tried again MaxRetries times; then the operator fails.
func TestLookupJoinRetries(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := &fakeTable{mem: mem, rows: map[int64][]string{1: {"a"}}, fail: 2}
	h := newLookupHarness(t, mem, lookupNode("INNER", nil), LookupOptions{Source: src, MaxRetries: 2})
	if err := h.feed(`[{"id":1,"cid":1}]`); err != nil {
		t.Fatalf("two failures, two retries: %v", err)
	}
	h.expect("+I[1, 1, 1, a]")
	src.fail = 3
	err := h.feed(`[{"id":2,"cid":1}]`)
	if err == nil || !strings.Contains(err.Error(), "failed, attempts: 3: server down") {
		t.Fatalf("got %v, want the third failure", err)
	}
}

// A table read whole is read once, then again after its reload interval.
func TestLookupJoinWholeTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := wholeTable{&fakeTable{mem: mem, rows: map[int64][]string{1: {"a"}, 2: {"b"}}}}
	h := newLookupHarness(t, mem, lookupNode("LEFT", nil), LookupOptions{Source: src})
	for i, rows := range []string{`[{"id":1,"cid":1},{"id":2,"cid":3}]`, `[{"id":3,"cid":2}]`} {
		if err := h.feed(rows); err != nil {
			t.Fatal(err)
		}
		h.expect([]string{"+I[1, 1, 1, a] +I[2, 3, null, null]", "+I[3, 2, 2, b]"}[i])
	}
	src.rows[3] = []string{"c"}
	h.now = h.now.Add(time.Minute)
	if err := h.feed(`[{"id":4,"cid":3}]`); err != nil {
		t.Fatal(err)
	}
	h.expect("+I[4, 3, 3, c]")
	if len(src.calls) != 2 {
		t.Errorf("read %d times, want twice", len(src.calls))
	}
}
