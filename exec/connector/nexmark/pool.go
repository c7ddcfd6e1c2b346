package nexmark

import (
	"math/bits"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// pool is the allocator of a reader's Arrow buffers: the buffers of a batch come back
// to it when the batch's last holder releases it, and become the next batch's. A
// source running flat out would otherwise allocate some 350 bytes an event, and the
// garbage collector's work on that, paid on every core, cost about as much CPU as
// generating the events; a buffer reused at once is also still in the cache. Its buffers are not zeroed: the
// reader writes every byte of what it hands out.
//
// Buffers come in power-of-two classes, allocated from mem; a free list keeps at most
// poolKeep of each, and gives the others back to mem, as it does every buffer once the
// reader is closed.
type pool struct {
	mem    memory.Allocator
	mu     sync.Mutex
	free   [poolClasses][][]byte
	closed bool
}

var _ memory.Allocator = (*pool)(nil)

const (
	poolMinShift = 6  // the smallest class: 64 bytes
	poolClasses  = 20 // the largest: 32 MiB; larger buffers are not pooled
	poolKeep     = 64
)

// poisonFreed fills released buffers with garbage in tests, so that a holder that
// reads a batch after releasing it (or keeps a string of it without Retain) reads
// garbage and fails its test rather than pass by luck.
var poisonFreed = testing.Testing()

// class is the class of a buffer of size bytes.
func class(size int) int {
	if size <= 1<<poolMinShift {
		return 0
	}
	return bits.Len(uint(size-1)) - poolMinShift
}

func (p *pool) Allocate(size int) []byte {
	c := class(size)
	if c >= poolClasses {
		return p.mem.Allocate(size)
	}
	p.mu.Lock()
	if n := len(p.free[c]); n > 0 {
		b := p.free[c][n-1]
		p.free[c][n-1] = nil
		p.free[c] = p.free[c][:n-1]
		p.mu.Unlock()
		return b[:size]
	}
	p.mu.Unlock()
	return p.mem.Allocate(1 << (c + poolMinShift))[:size]
}

func (p *pool) Free(b []byte) {
	b = b[:cap(b)]
	if poisonFreed {
		for i := range b {
			b[i] = 0xa5
		}
	}
	c := class(len(b))
	if c < poolClasses && len(b) == 1<<(c+poolMinShift) {
		p.mu.Lock()
		if !p.closed && len(p.free[c]) < poolKeep {
			p.free[c] = append(p.free[c], b)
			b = nil
		}
		p.mu.Unlock()
	}
	if b != nil {
		p.mem.Free(b)
	}
}

// close gives the free buffers back to mem, and every buffer freed from now on.
func (p *pool) close() {
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

func (p *pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}
