package exec

import (
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestBufferPool reuses a freed buffer zeroed, gives back what it keeps when closed,
// and passes buffers too large to pool straight through.
func TestBufferPool(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := NewBufferPool(mem, true)
	b := p.Allocate(100)
	if len(b) != 100 || cap(b) != 128 {
		t.Fatalf("len %d cap %d, want 100 and the class of 128", len(b), cap(b))
	}
	for i := range b {
		b[i] = 0xff
	}
	first := &b[0]
	p.Free(b)
	b = p.Allocate(120)
	if &b[0] != first {
		t.Fatal("a freed buffer of the class was not reused")
	}
	for i, c := range b[:cap(b)] {
		if c != 0 {
			t.Fatalf("byte %d of a reused buffer is %#x, not zero", i, c)
		}
	}
	b = p.Reallocate(1000, b)
	if len(b) != 1000 {
		t.Fatalf("reallocated len %d", len(b))
	}
	big := p.Allocate(64 << 20)
	p.Free(big)
	p.Free(b)
	p.Close()
	p.Free(p.Allocate(10)) // after Close a freed buffer goes back to mem
}

// TestBufferPoolKeepsFewLargeBuffers: of a large class the pool keeps what makes
// poolKeepBytes, and gives the rest back.
func TestBufferPoolKeepsFewLargeBuffers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := NewBufferPool(mem, false)
	var bufs [][]byte
	for range 10 {
		bufs = append(bufs, p.Allocate(3<<20)) // the class of 4 MiB
	}
	for _, b := range bufs {
		p.Free(b)
	}
	if got := mem.CurrentAlloc(); got != 2*4<<20 {
		t.Errorf("the pool keeps %d bytes of 4 MiB buffers, want two", got)
	}
	for range 100 {
		p.Free(p.Allocate(100))
	}
	p.Close()
}
