package ops

import (
	"encoding/binary"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/planner"
)

// shareSlots is how many DISTINCT calls one distinctShare serves.
const shareSlots = 4

// distinctShare is one set of an integer column's values for several DISTINCT calls
// over it that differ in their FILTER (q16 counts the distinct bidders of all bids and
// of three price ranges), as Flink shares a distinct view: each value keeps a count for
// every call, so that a row is looked up once for all of them instead of once a call.
// Each call's accumulator (a distinctInts) still saves, loads and merges its own set,
// in distinctInts' format.
type distinctShare struct {
	members []*distinctInts // by slot
	filters []int           // by slot: the column of the call's FILTER, or -1
	gs      [][]int32       // by slot: the groups of a batch's rows that reach it
	bufs    [][]int32       // by slot: scratch for the groups its FILTER lets through
	seen    []map[int64][shareSlots]int64
	// saved is the members' encoded sets of one group, made in one pass over its set
	// when the first member saves it: each member passing over the whole set, twice,
	// was nearly half of q16's CPU at a checkpoint a second.
	saved savedSets
}

// savedSets is the encoding of each member's set of group g, while valid: a change to
// the share voids it.
type savedSets struct {
	g     int32
	valid bool
	n     [shareSlots]uint64
	enc   [shareSlots][]byte
}

// shareDistinct makes the distinctInts accumulators of calls over the same column, up
// to shareSlots at a time, share their sets.
func shareDistinct(accs []accumulator, calls []planner.AggCall) {
	byArg := map[int]*distinctShare{}
	for i, acc := range accs {
		d, ok := acc.(*distinctInts)
		if !ok {
			continue
		}
		s := byArg[calls[i].Arg]
		if s == nil || len(s.members) == shareSlots {
			s = &distinctShare{}
			byArg[calls[i].Arg] = s
		}
		d.share, d.slot = s, len(s.members)
		s.members = append(s.members, d)
		s.filters = append(s.filters, calls[i].FilterCol())
		s.gs, s.bufs = append(s.gs, nil), append(s.bufs, nil)
	}
	for _, s := range byArg {
		if len(s.members) == 1 { // nothing to share
			s.members[0].share = nil
		}
	}
}

// update folds a batch into every member's set, the column read once.
func (s *distinctShare) update(rec arrow.Record, col arrow.Array, groups []int32, signs []int8) error {
	read, err := reader(col)
	if err != nil {
		return err
	}
	for j, f := range s.filters {
		s.gs[j] = groups
		if f >= 0 {
			s.bufs[j] = filterGroups(growTo(s.bufs[j][:0], len(groups)), groups, rec.Column(f))
			s.gs[j] = s.bufs[j]
		}
	}
	for i, g := range groups {
		if g < 0 {
			continue
		}
		var mask uint8
		for j, gs := range s.gs {
			if gs[i] >= 0 {
				mask |= 1 << j
			}
		}
		if mask == 0 {
			continue
		}
		v := read(i)
		if v.null {
			continue
		}
		sign := int64(1)
		if signs != nil {
			sign = int64(signs[i])
		}
		s.add(g, v, sign, mask)
	}
	return nil
}

// add counts v by sign in group g for the members in mask, telling a member's inner
// accumulator when v enters or leaves its set.
func (s *distinctShare) add(g int32, v value, sign int64, mask uint8) {
	s.saved.valid = false
	m := s.seen[g]
	if m == nil {
		m = map[int64][shareSlots]int64{}
		s.seen[g] = m
	}
	counts := m[v.i]
	for j, d := range s.members {
		if mask&(1<<j) == 0 {
			continue
		}
		before, after := counts[j], counts[j]+sign
		counts[j] = max(after, 0)
		if before <= 0 && after > 0 {
			d.inner.(rowAdder).add(g, v, 1)
		} else if before > 0 && after <= 0 {
			d.inner.(rowAdder).add(g, v, -1)
		}
	}
	if counts == [shareSlots]int64{} {
		delete(m, v.i)
	} else {
		m[v.i] = counts
	}
}

// clearSlot empties member j's set in group g.
func (s *distinctShare) clearSlot(g int32, j int) {
	s.saved.valid = false
	m := s.seen[g]
	for x, counts := range m {
		counts[j] = 0
		if counts == [shareSlots]int64{} {
			delete(m, x)
		} else {
			m[x] = counts
		}
	}
	if len(m) == 0 {
		s.seen[g] = nil
	}
}

// The methods of a distinctInts whose set is shared.

func (d *distinctInts) sharedMerge(dst, src int32) {
	for x, counts := range d.share.seen[src] {
		if n := counts[d.slot]; n > 0 {
			d.share.add(dst, value{i: x}, n, 1<<d.slot)
		}
	}
}

func (d *distinctInts) sharedSave(dst []byte, g int32) []byte {
	s := d.share
	if !s.saved.valid || s.saved.g != g {
		s.encodeSets(g)
	}
	dst = binary.AppendUvarint(dst, s.saved.n[d.slot])
	return append(dst, s.saved.enc[d.slot]...)
}

// encodeSets encodes every member's set of group g, for sharedSave.
func (s *distinctShare) encodeSets(g int32) {
	sv := &s.saved
	sv.g, sv.valid = g, true
	for j := range s.members {
		sv.n[j], sv.enc[j] = 0, sv.enc[j][:0]
	}
	for x, counts := range s.seen[g] {
		for j := range s.members {
			if c := counts[j]; c > 0 {
				sv.n[j]++
				sv.enc[j] = binary.AppendVarint(appendValueBytes(sv.enc[j], value{i: x}), c)
			}
		}
	}
}

func (d *distinctInts) sharedLoad(dec *decoder, g int32) {
	s := d.share
	s.clearSlot(g, d.slot)
	for v, n := range dec.counts() {
		if n <= 0 {
			continue
		}
		if s.seen[g] == nil {
			s.seen[g] = map[int64][shareSlots]int64{}
		}
		counts := s.seen[g][v.i]
		counts[d.slot] = n
		s.seen[g][v.i] = counts
	}
}
