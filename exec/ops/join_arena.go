package ops

import "unsafe"

// rowArena hands out the stored rows of a join side that never removes one (a regular
// join without a TTL over insert-only input, as Nexmark's q9 stores every bid) or
// removes them about in the order they came (an interval join's, which expire by time,
// as q7's bids): rows in slabs and their encodings in large blocks without pointers.
// Each allocated apart, millions of rows made the collector visit millions of small
// objects; a slab or a block lives as long as any row in it.
type rowArena struct {
	rows  []joinRow // the unused rest of the current slab
	block []byte    // the current block of encodings; its unused capacity is the rest
}

const (
	arenaSlabRows  = 1024
	arenaTextBlock = 256 << 10
)

// row returns a zeroed row.
func (a *rowArena) row() *joinRow {
	if len(a.rows) == 0 {
		a.rows = make([]joinRow, arenaSlabRows)
	}
	r := &a.rows[0]
	a.rows = a.rows[1:]
	return r
}

// text returns a copy of b that lives in the arena.
func (a *rowArena) text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(a.block)-len(a.block) {
		a.block = make([]byte, 0, max(arenaTextBlock, len(b)))
	}
	at := len(a.block)
	a.block = append(a.block, b...)
	return unsafe.String(&a.block[at], len(b))
}
