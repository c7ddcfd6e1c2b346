package ops

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The expiry heap pops rows earliest expiry first, whatever order they came in, as it
// grows and shrinks across its chunks.
func TestRowHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h rowHeap
	last, pushed, popped, most := int64(-1), 0, 0, 0
	for round := range 30 {
		for range rng.IntN(3 * heapChunk) {
			h.push(&joinRow{expire: last + 1 + rng.Int64N(50)})
			pushed++
		}
		most = max(most, h.len())
		for range rng.IntN(h.len() + 1) {
			r := h.pop()
			popped++
			if r.expire < last {
				t.Fatalf("round %d: popped %d after %d", round, r.expire, last)
			}
			last = r.expire
		}
		if len(h.chunks) > h.len()/heapChunk+2 {
			t.Fatalf("round %d: %d chunks for %d rows", round, len(h.chunks), h.len())
		}
	}
	for h.len() > 0 {
		if r := h.pop(); r.expire < last {
			t.Fatalf("popped %d after %d", r.expire, last)
		} else {
			last = r.expire
		}
		popped++
	}
	if popped != pushed || most <= 2*heapChunk {
		t.Fatalf("popped %d of %d rows; at most %d rows at a time", popped, pushed, most)
	}
}

// TestRowSizesAreExact: a checkpoint sizes each key group by rowKeySize and
// rowValueSize, which must be the lengths the rows' keys and values are written with.
func TestRowSizesAreExact(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 1 << 20, -1 << 40, math.MaxInt64, math.MinInt64} {
		for _, enc := range []string{"", "k", strings.Repeat("x", 127), strings.Repeat("y", 128)} {
			r := &joinRow{enc: enc + "row", count: v, assoc: -v, time: v / 3, expire: v ^ 5, id: uint64(v),
				key: &joinKey{enc: enc, kg: 7, access: v}}
			key := appendRowKey(nil, 1, r)
			head := binary.AppendVarint(nil, r.count)
			head = binary.AppendVarint(head, r.assoc)
			head = binary.AppendVarint(head, r.time)
			head = binary.AppendVarint(head, r.expire)
			head = binary.AppendVarint(head, r.key.access)
			if rowKeySize(r) != len(key) || rowValueSize(r) != len(head)+len(r.enc) {
				t.Errorf("v %d, key %d bytes: sizes %d and %d, written %d and %d", v, len(enc),
					rowKeySize(r), rowValueSize(r), len(key), len(head)+len(r.enc))
			}
		}
	}
}
