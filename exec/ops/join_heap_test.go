package ops

import (
	"math/rand/v2"
	"testing"
)

// The expiry heap pops rows earliest expiry first, whatever order they came in.
func TestRowHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h rowHeap
	last := int64(-1)
	for round := range 50 {
		for range rng.IntN(100) {
			h.push(&joinRow{expire: last + 1 + rng.Int64N(50)})
		}
		for range rng.IntN(len(h) + 1) {
			r := h.pop()
			if r.expire < last {
				t.Fatalf("round %d: popped %d after %d", round, r.expire, last)
			}
			last = r.expire
		}
	}
	for len(h) > 0 {
		if r := h.pop(); r.expire < last {
			t.Fatalf("popped %d after %d", r.expire, last)
		} else {
			last = r.expire
		}
	}
}
