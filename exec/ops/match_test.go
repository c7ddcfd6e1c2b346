package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// matchNode plans query over t(k STRING, ts TIMESTAMP(3) with a watermark, v BIGINT)
// and returns its MatchRecognize node.
func matchNode(t *testing.T, query string) *planner.MatchRecognize {
	t.Helper()
	script, err := parser.Parse(`CREATE TABLE t (k STRING, ts TIMESTAMP(3), v BIGINT, WATERMARK FOR ts AS ts)
		WITH ('connector' = 'datagen');` + query)
	if err != nil {
		t.Fatal(err)
	}
	cat := planner.NewCatalog()
	table, err := planner.BindTable(script.Stmts[0].(*parser.CreateTableStmt))
	if err != nil {
		t.Fatal(err)
	}
	cat.AddTable(table)
	n, err := (&planner.Planner{Catalog: cat}).PlanQuery(script.Stmts[1].(*parser.QueryStmt).Query)
	if err != nil {
		t.Fatal(err)
	}
	for n != nil {
		if m, ok := n.(*planner.MatchRecognize); ok {
			return m
		}
		n = n.Children()[0]
	}
	t.Fatal("no MatchRecognize in the plan")
	return nil
}

type matchHarness struct {
	t   *testing.T
	mem memory.Allocator
	n   *planner.MatchRecognize
	op  *match
	out *watermarks
}

func newMatchHarness(t *testing.T, mem memory.Allocator, n *planner.MatchRecognize, ks *KeyedState) *matchHarness {
	t.Helper()
	h := &matchHarness{t: t, mem: mem, n: n, out: &watermarks{}}
	op, err := NewMatch(mem, nil, n, h.out, ks)
	if err != nil {
		t.Fatal(err)
	}
	h.op = op.(*match)
	t.Cleanup(func() { h.op.Close() })
	return h
}

func (h *matchHarness) feed(rows string) {
	h.t.Helper()
	b := batch(h.t, h.mem, h.n.Input.Schema(), rows)
	defer b.Release()
	if err := h.op.Process(context.Background(), 0, b); err != nil {
		h.t.Fatal(err)
	}
}

func (h *matchHarness) watermark(wm int64) {
	h.t.Helper()
	if err := h.op.ProcessWatermark(context.Background(), wm); err != nil {
		h.t.Fatal(err)
	}
}

func (h *matchHarness) expect(want string) {
	h.t.Helper()
	if got := strings.Join(h.out.rows, " "); got != want {
		h.t.Errorf("emitted:\n%s\nwant:\n%s", got, want)
	}
	h.out.rows = nil
}

// TestMatchRecognize: rows out of order are matched in time order once the watermark
// passes them; a row behind the watermark is late; a partial match (and a match that
// waits for an older one) survive a snapshot, and the restored operator goes on as the
// original. The checked allocator finds any batch left unreleased.
func TestMatchRecognize(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ks := openStore(t)
	n := matchNode(t, `SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts
		MEASURES FIRST(A.v) AS a, COUNT(B.v) AS nb, SUM(B.v) AS sb, C.v AS c
		PATTERN (A B+ C) DEFINE A AS A.v < 10, B AS B.v >= 10 AND B.v < 20, C AS C.v >= 20)`)
	h := newMatchHarness(t, mem, n, ks)
	h.feed(`[{"k":"x","ts":2,"v":11},{"k":"x","ts":1,"v":1},{"k":"y","ts":1,"v":2},{"k":"x","ts":3,"v":12},{"k":"y","ts":2,"v":15}]`)
	h.expect("")
	h.watermark(3)
	h.expect("wm")
	h.feed(`[{"k":"x","ts":3,"v":30},{"k":"x","ts":4,"v":25},{"k":"y","ts":5,"v":21}]`)
	if h.op.LateRows() != 1 {
		t.Errorf("late rows %d, want 1 (x at 3)", h.op.LateRows())
	}
	handle := h.snapshot(1)
	h.watermark(10)
	h.expect("+I[x, 1, 2, 23, 25] +I[y, 2, 1, 15, 21] wm")

	r := newMatchHarness(t, mem, n, ks)
	if err := r.op.Restore(handle); err != nil {
		t.Fatal(err)
	}
	r.watermark(10)
	r.expect("+I[x, 1, 2, 23, 25] +I[y, 2, 1, 15, 21] wm")
	for _, p := range r.op.parts {
		if len(p.rows)+len(p.threads)+len(p.done) != 0 {
			t.Errorf("a partition keeps %d rows, %d threads and %d matches after its match, want none", len(p.rows), len(p.threads), len(p.done))
		}
	}
}

func (h *matchHarness) snapshot(id int64) []byte {
	h.t.Helper()
	handle, err := h.op.Snapshot(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return handle
}
