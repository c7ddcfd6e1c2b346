package exec

import (
	"math/bits"
	"os"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// BufferPool is the allocator of Arrow buffers of a source or an operator that builds
// batches: the buffers of a batch come back to it when the batch's last holder releases
// it, and become the next batch's. A source reading flat out would otherwise hand the
// garbage collector a batch's worth of buffers a batch (some 200 bytes a row of a JSON
// file, 350 an event of the nexmark generator), whose collections cost a fifth of the
// reading or more; a buffer reused at once is also still in the cache. A buffer taken from the pool is zeroed, as the
// allocator's own are, since a builder leaves the values under NULLs unwritten, unless
// its user writes every byte of what it takes (NewBufferPool's zero).
//
// Buffers come in power-of-two classes, allocated from mem; a free list keeps at most
// poolKeep of each, and of a large class as many as make poolKeepBytes (two at least),
// and gives the others back to mem, as it does every buffer once the pool is closed: a
// job has a pool for each operator that builds batches, and what the pools keep idle
// counts in the collector's target.
type BufferPool struct {
	mem    memory.Allocator
	zero   bool
	mu     sync.Mutex
	free   [poolClasses][][]byte
	closed bool
}

var _ memory.Allocator = (*BufferPool)(nil)

const (
	poolMinShift  = 6  // the smallest class: 64 bytes
	poolClasses   = 20 // the largest: 32 MiB; larger buffers are not pooled
	poolKeep      = 64
	poolKeepBytes = 8 << 20
)

// PoisonFreed fills released buffers with garbage in tests, and in a streamsql process
// started with STREAMSQL_POISON_FREED=1 (as the end-to-end tests start theirs), so that
// a holder that reads a batch after releasing it (or keeps a string of it without
// copying it) reads garbage and fails its test rather than pass by luck.
var PoisonFreed = testing.Testing() || os.Getenv("STREAMSQL_POISON_FREED") == "1"

// Unpoisoned has released buffers go back to their pools as they are, as outside tests,
// for the length of a benchmark.
func Unpoisoned(b *testing.B) {
	was := PoisonFreed
	PoisonFreed = false
	b.Cleanup(func() { PoisonFreed = was })
}

// NewBufferPool returns a pool allocating from mem (memory.DefaultAllocator if nil),
// whose buffers are zeroed when zero is set.
func NewBufferPool(mem memory.Allocator, zero bool) *BufferPool {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &BufferPool{mem: mem, zero: zero}
}

// poolClass is the class of a buffer of size bytes.
func poolClass(size int) int {
	if size <= 1<<poolMinShift {
		return 0
	}
	return bits.Len(uint(size-1)) - poolMinShift
}

// poolKept is how many free buffers of class c a pool keeps.
func poolKept(c int) int {
	return min(poolKeep, max(2, poolKeepBytes>>(c+poolMinShift)))
}

func (p *BufferPool) Allocate(size int) []byte {
	c := poolClass(size)
	if c >= poolClasses {
		return p.mem.Allocate(size)
	}
	p.mu.Lock()
	if n := len(p.free[c]); n > 0 {
		b := p.free[c][n-1]
		p.free[c][n-1] = nil
		p.free[c] = p.free[c][:n-1]
		p.mu.Unlock()
		if p.zero {
			clear(b)
		}
		return b[:size]
	}
	p.mu.Unlock()
	return p.mem.Allocate(1 << (c + poolMinShift))[:size]
}

func (p *BufferPool) Free(b []byte) {
	b = b[:cap(b)]
	if PoisonFreed {
		for i := range b {
			b[i] = 0xa5
		}
	}
	c := poolClass(len(b))
	if c < poolClasses && len(b) == 1<<(c+poolMinShift) {
		p.mu.Lock()
		if !p.closed && len(p.free[c]) < poolKept(c) {
			p.free[c] = append(p.free[c], b)
			b = nil
		}
		p.mu.Unlock()
	}
	if b != nil {
		p.mem.Free(b)
	}
}

func (p *BufferPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Close gives the free buffers back to mem, and every buffer freed from now on.
func (p *BufferPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for c := range p.free {
		for _, b := range p.free[c] {
			p.mem.Free(b)
		}
		p.free[c] = nil
	}
}
