package exec

import (
	"sync"
	"time"
)

// Alignment is a source's watermark alignment (Flink's scan.watermark.alignment.group
// and .max-drift): its tasks stop reading while their watermark is more than MaxDrift
// ahead of the least watermark of the group's tasks, across every source of the job
// in the same Group, so that one fast input does not make the operators that wait for
// the others' event time hold ever more state. The zero value aligns nothing.
type Alignment struct {
	Group    string
	MaxDrift time.Duration
}

// WatermarkAligned is an operator (a watermark assigner) whose watermark takes part in
// an alignment group; a source task running one holds its reader back while ahead.
type WatermarkAligned interface {
	WatermarkAlignment() Alignment
	CurrentWatermark() int64
}

// alignGroup is the shared part of one alignment group in one run of a graph.
type alignGroup struct {
	mu    sync.Mutex
	marks []int64 // by member: its watermark, MaxWatermark while idle or after it ended
	least int64
	moved chan struct{} // closed, and replaced, whenever least changes
}

// alignMember is one source task's place in its alignment group; only that task's
// goroutine uses it.
type alignMember struct {
	group *alignGroup
	index int
	drift int64 // milliseconds
	op    WatermarkAligned
	last  int64 // the watermark last reported
	away  bool  // idle or ended: not counted in the group's least watermark
}

// alignGroups creates the groups of one run of a graph, by name.
type alignGroups map[string]*alignGroup

// join makes op's task a member of its group, starting at op's current watermark.
func (gs alignGroups) join(op WatermarkAligned) *alignMember {
	a := op.WatermarkAlignment()
	g := gs[a.Group]
	if g == nil {
		g = &alignGroup{least: MaxWatermark, moved: make(chan struct{})}
		gs[a.Group] = g
	}
	wm := op.CurrentWatermark()
	m := &alignMember{group: g, index: len(g.marks), drift: a.MaxDrift.Milliseconds(), op: op, last: wm}
	g.marks = append(g.marks, MaxWatermark)
	g.set(m.index, wm)
	return m
}

// report passes the operator's watermark on to the group after a batch.
func (m *alignMember) report() {
	if m == nil {
		return
	}
	if wm := m.op.CurrentWatermark(); wm != m.last || m.away {
		m.last, m.away = wm, false
		m.group.set(m.index, wm)
	}
}

// leave stops counting the member in its group's least watermark, while its source is
// idle (its next report counts it again) or for good once it ended.
func (m *alignMember) leave() {
	if m == nil || m.away {
		return
	}
	m.away = true
	m.group.set(m.index, MaxWatermark)
}

// hold returns, while the member's watermark is more than its drift ahead of the
// group's least, a channel that is closed when that least next changes; else nil.
func (m *alignMember) hold() <-chan struct{} {
	if m == nil {
		return nil
	}
	g := m.group
	g.mu.Lock()
	defer g.mu.Unlock()
	// Differences as unsigned, since the least may be MinWatermark.
	if m.last > g.least && uint64(m.last-g.least) > uint64(m.drift) {
		return g.moved
	}
	return nil
}

func (g *alignGroup) set(i int, wm int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.marks[i] = wm
	least := int64(MaxWatermark)
	for _, w := range g.marks {
		least = min(least, w)
	}
	if least != g.least {
		g.least = least
		close(g.moved)
		g.moved = make(chan struct{})
	}
}
