package ops

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// emitControl changes when a window aggregate emits (Flink's table.exec.emit options):
// with an allowed lateness a fired window keeps its state that long, and a late row
// within it updates the window's row (-U, +U); with early firing, open windows emit
// their partial rows every delay and update them as they change. The aggregate then
// remembers the row it last emitted for each group, in its checkpoints too.
type emitControl struct {
	lateness   int64 // ms
	earlyDelay time.Duration
	lastEarly  time.Time
	shown      map[int32][]value // the results each group last emitted
	changed    []int32           // groups changed since they last emitted, each once
	isChanged  map[int32]bool
}

func newEmitControl(e planner.EmitControl) *emitControl {
	return &emitControl{lateness: e.AllowLateness, earlyDelay: time.Duration(e.EarlyFireDelay) * time.Millisecond,
		lastEarly: time.Now(), shown: map[int32][]value{}, isChanged: map[int32]bool{}}
}

// change notes that group g's results may differ from those it last emitted.
func (e *emitControl) change(g int32) {
	if !e.isChanged[g] {
		e.isChanged[g] = true
		e.changed = append(e.changed, g)
	}
}

// forget drops what is known of a group whose slot is freed.
func (e *emitControl) forget(g int32) {
	delete(e.shown, g)
	if e.isChanged[g] {
		delete(e.isChanged, g)
		e.changed = slices.DeleteFunc(e.changed, func(x int32) bool { return x == g })
	}
}

// fired reports whether group g's window has fired: its end is behind the watermark.
func (a *aggregate) fired(g int32) bool { return a.windowEnd(g) <= a.watermark }

// flushWindows emits the late updates of fired windows, and when early firing is due,
// the partial rows of open windows.
func (a *aggregate) flushWindows(ctx context.Context) error {
	e := a.emitCtl
	if e.earlyDelay > 0 && time.Since(e.lastEarly) >= e.earlyDelay {
		e.lastEarly = time.Now()
		return a.emitChanged(ctx, func(int32) bool { return true })
	}
	return a.emitChanged(ctx, a.fired)
}

// watermarkWindows emits the rows of the windows the watermark fired, and forgets the
// windows whose allowed lateness it passed.
func (a *aggregate) watermarkWindows(ctx context.Context, wm int64) error {
	if err := a.emitChanged(ctx, a.fired); err != nil {
		return err
	}
	for end, groups := range a.byEnd {
		if end+a.emitCtl.lateness <= wm {
			for _, g := range groups {
				a.drop(g)
			}
			delete(a.byEnd, end)
		}
	}
	return nil
}

// emitChanged emits, for each changed group that is due, its row as an insert if it
// never emitted one, or as an update of the one it did, oldest window first.
func (a *aggregate) emitChanged(ctx context.Context, due func(g int32) bool) error {
	e := a.emitCtl
	var now []int32
	keep := e.changed[:0]
	for _, g := range e.changed {
		if due(g) {
			now = append(now, g)
			delete(e.isChanged, g)
		} else {
			keep = append(keep, g)
		}
	}
	e.changed = keep
	slices.SortFunc(now, func(x, y int32) int {
		return cmp.Or(cmp.Compare(a.windowEnd(x), a.windowEnd(y)), cmp.Compare(x, y))
	})
	kinds := a.kinds[:0]
	for _, g := range now {
		results := make([]value, len(a.accs))
		for i, acc := range a.accs {
			results[i] = acc.result(g)
		}
		old, shown := e.shown[g]
		switch {
		case !shown:
			a.appendRow(g, results)
			kinds = append(kinds, exec.Insert)
		case !equalValues(old, results):
			a.appendRow(g, old)
			a.appendRow(g, results)
			kinds = append(kinds, exec.UpdateBefore, exec.UpdateAfter)
		default:
			continue
		}
		e.shown[g] = results
		a.markDirty(g)
	}
	a.kinds = kinds
	return a.emitBuilt(ctx)
}

// appendShown appends the row group g last emitted to its state.
func (e *emitControl) appendShown(buf []byte, g int32, order []int) []byte {
	old, ok := e.shown[g]
	if !ok {
		return append(buf, 0)
	}
	buf = append(buf, 1)
	for _, i := range order {
		buf = appendValueBytes(buf, old[i])
	}
	return buf
}

// loadShown reads what appendShown wrote; a restored group counts as changed, so it
// emits when its results differ from those it last emitted.
func (e *emitControl) loadShown(d *decoder, g int32, order []int) {
	if d.byte() == 1 {
		old := make([]value, len(order))
		for _, i := range order {
			old[i] = d.value()
		}
		e.shown[g] = old
	}
	e.change(g)
}
