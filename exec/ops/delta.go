package ops

import (
	"encoding/binary"
	"slices"
	"sync"

	"github.com/streamsql/streamsql/state"
)

// spareDelta keeps a written checkpoint's encoding for the next one to reuse: a
// checkpoint of millions of rows otherwise pages in and zeroes as much fresh memory
// (a ninth of q7's CPU at a checkpoint every 10 s). The write runs on another
// goroutine, so the hand-over is locked.
type spareDelta struct {
	mu sync.Mutex
	e  state.EncodedDelta
}

func (s *spareDelta) take() state.EncodedDelta {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.e
	s.e = state.EncodedDelta{}
	e.Reset()
	return e
}

func (s *spareDelta) give(e state.EncodedDelta) {
	s.mu.Lock()
	s.e = e
	s.mu.Unlock()
}

// persist is persistDelta's write of d, which gives d's encoding back to s once it is
// written.
func (s *spareDelta) persist(st *KeyedState, id int64, d state.Delta, watermark int64) func() ([]byte, error) {
	write := persistDelta(st, id, d, watermark)
	return func() ([]byte, error) {
		h, err := write()
		if err == nil {
			s.give(d.Encoded)
		}
		return h, err
	}
}

// deltaScratch is a snapshot's changes encoded one after another, a key and, for a
// put, its value, to be copied into a delta's key groups sized exactly. Its buffer is
// kept from one checkpoint to the next: one grown afresh took a copy and a zeroing of
// itself at each doubling (q16's large groups), and allocating a value per change took
// an allocation each (q18's millions of partitions).
type deltaScratch struct {
	buf     []byte
	changes []scratchChange
}

// scratchChange is where a change's key starts and ends in buf, and where its value
// ends; a deletion has no value.
type scratchChange struct {
	start, key, end int
	put             bool
}

// begin empties s for a snapshot.
func (s *deltaScratch) begin() { s.buf, s.changes = s.buf[:0], s.changes[:0] }

// add records the change whose key is buf[start:key] and, for a put, whose value runs
// from there to the end of buf.
func (s *deltaScratch) add(start, key int, put bool) {
	s.changes = append(s.changes, scratchChange{start, key, len(s.buf), put})
}

// writeTo copies the changes into e, in order, each key group sized first, and returns
// the bytes of the puts' keys and values.
func (s *deltaScratch) writeTo(e *state.EncodedDelta) (written int64) {
	var sizes []int
	for _, c := range s.changes {
		kg := int(binary.BigEndian.Uint16(s.buf[c.start:]))
		if kg >= len(sizes) {
			sizes = slices.Grow(sizes, kg+1-len(sizes))[:kg+1]
		}
		sizes[kg] += state.ChangeSize(c.key-c.start, c.end-c.key)
	}
	for kg, n := range sizes {
		if n > 0 {
			e.Grow(kg, n)
		}
	}
	for _, c := range s.changes {
		if key := s.buf[c.start:c.key]; c.put {
			e.Put(key, s.buf[c.key:c.end], "")
			written += int64(c.end - c.start)
		} else {
			e.Delete(key)
		}
	}
	if 4*len(s.buf) < cap(s.buf) {
		s.buf = nil // as EncodedDelta.Reset: the room kept follows the recent checkpoints
	}
	return written
}
