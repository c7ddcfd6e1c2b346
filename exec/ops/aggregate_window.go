package ops

import (
	"cmp"
	"context"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
)

var (
	_ exec.WatermarkHandler = (*aggregate)(nil)
	_ exec.LateCounter      = (*aggregate)(nil)
)

// processWindowed folds rows into their window's groups; a row whose window already
// fired is late: it is dropped and counted.
func (a *aggregate) processWindowed(ctx context.Context, b exec.Batch) error {
	ends := b.Rec.Column(a.keyCols[a.window]).(*array.Timestamp).TimestampValues()
	var onTime, late []int32
	lateness := int64(0)
	if a.emitCtl != nil {
		lateness = a.emitCtl.lateness
	}
	for i, e := range ends {
		if int64(e)+lateness <= a.watermark {
			if onTime == nil {
				onTime = make([]int32, 0, len(ends))
				for j := 0; j < i; j++ {
					onTime = append(onTime, int32(j))
				}
			}
			late = append(late, int32(i))
			continue
		}
		if onTime != nil {
			onTime = append(onTime, int32(i))
		}
	}
	if err := a.routeLate(ctx, b.Rec, late); err != nil {
		return err
	}
	rec := b.Rec
	if onTime != nil {
		if len(onTime) == 0 {
			return nil
		}
		rec = exec.TakeRecord(a.mem, b.Rec, onTime)
		defer rec.Release()
	}
	groups, err := a.assignGroups(rec, nil)
	if err != nil {
		return err
	}
	var created []int32
	for _, g := range groups {
		if a.rows[g] == 0 { // a new group
			created = append(created, g)
			if a.byEnd != nil {
				end := a.windowEnd(g)
				a.byEnd[end] = append(a.byEnd[end], g)
			}
		}
		a.rows[g]++
		a.markDirty(g)
		if a.emitCtl != nil {
			a.emitCtl.change(g)
		}
	}
	if err := a.updateAccs(rec, groups, nil); err != nil {
		return err
	}
	if a.session {
		return a.mergeSessions(groups, created)
	}
	return nil
}

// ProcessWatermark emits the final row of every group whose window ended at or before
// the watermark, oldest window first, forgets those groups, then passes the watermark on.
// A sliced aggregate merges each window from its slices instead (fireSlices).
func (a *aggregate) ProcessWatermark(ctx context.Context, wm int64) error {
	if a.window < 0 {
		return a.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
	}
	prev := a.watermark
	a.watermark = max(a.watermark, wm)
	if a.session {
		if err := a.fireSessions(ctx, wm); err != nil {
			return err
		}
		return a.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
	}
	if a.byEnd == nil { // the first watermark, or the first after a restore
		a.byEnd = map[int64][]int32{}
		for g, rows := range a.rows {
			if rows > 0 {
				end := a.windowEnd(int32(g))
				a.byEnd[end] = append(a.byEnd[end], int32(g))
			}
		}
	}
	if a.slide > 0 {
		if err := a.fireSlices(ctx, prev, wm); err != nil {
			return err
		}
		return a.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
	}
	if a.emitCtl != nil {
		if err := a.watermarkWindows(ctx, wm); err != nil {
			return err
		}
		return a.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
	}
	var fired []int32
	for e, groups := range a.byEnd {
		if e <= wm {
			fired = append(fired, groups...)
			delete(a.byEnd, e)
		}
	}
	if err := a.emitFinal(ctx, fired); err != nil {
		return err
	}
	return a.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
}

// emitFinal emits the final row of each fired group, oldest window first, and drops
// the groups.
func (a *aggregate) emitFinal(ctx context.Context, fired []int32) error {
	if len(fired) == 0 {
		return nil
	}
	slices.SortFunc(fired, func(x, y int32) int {
		return cmp.Or(cmp.Compare(a.windowEnd(x), a.windowEnd(y)), cmp.Compare(x, y))
	})
	kinds := a.kinds[:0]
	for _, g := range fired {
		a.appendResult(g)
		kinds = append(kinds, exec.Insert)
		a.drop(g)
	}
	a.kinds = kinds
	return a.emitBuilt(ctx)
}

// appendResult appends group g's keys and results to the builder.
func (a *aggregate) appendResult(g int32) {
	a.results = a.results[:0]
	for _, acc := range a.accs {
		a.results = append(a.results, acc.result(g))
	}
	a.appendRow(g, a.results)
}

// emitBuilt emits the rows appended to the builder, with a.kinds.
func (a *aggregate) emitBuilt(ctx context.Context) error {
	rec := a.builder.NewRecord()
	defer rec.Release()
	if len(a.kinds) == 0 {
		return nil
	}
	return a.out.Emit(ctx, exec.Batch{Rec: rec, Kinds: a.kinds})
}

// windowEnd is the end of group g's window.
func (a *aggregate) windowEnd(g int32) int64 { return a.keys.int(g, a.window) }

// LateRows is how many rows arrived after their window fired.
func (a *aggregate) LateRows() int64 { return a.late }

// LateRouter is a window operator whose late rows can go to a table.
type LateRouter interface {
	RouteLateRows(cols []int, out exec.Output)
}

var _ LateRouter = (*aggregate)(nil)

// RouteLateRows sends the late rows' columns cols to out (a table's sink) instead of
// only counting them.
func (a *aggregate) RouteLateRows(cols []int, out exec.Output) {
	a.lateCols, a.lateOut = cols, out
}

// routeLate counts the late rows of rec, and sends them on when they are routed.
func (a *aggregate) routeLate(ctx context.Context, rec arrow.Record, late []int32) error {
	a.late += int64(len(late))
	if len(late) == 0 || a.lateOut == nil {
		return nil
	}
	cols := make([]arrow.Array, len(a.lateCols))
	fields := make([]arrow.Field, len(a.lateCols))
	for i, c := range a.lateCols {
		cols[i] = exec.Take(a.mem, rec.Column(c), late)
		defer cols[i].Release()
		fields[i] = rec.Schema().Field(c)
	}
	rows := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(len(late)))
	defer rows.Release()
	return a.lateOut.Emit(ctx, exec.Batch{Rec: rows})
}

// fireSlices emits every window that ends after prev and at or before wm: for each key,
// the merge of the window's slices, in a group made for the purpose and freed after.
// Once a window that is a slice's last fired, the slice is forgotten.
func (a *aggregate) fireSlices(ctx context.Context, prev, wm int64) error {
	var ends []int64
	seen := map[int64]bool{}
	for sliceEnd := range a.byEnd {
		for e := sliceEnd; e <= sliceEnd-a.slide+a.size; e += a.slide {
			if e > prev && e <= wm && !seen[e] {
				seen[e] = true
				ends = append(ends, e)
			}
		}
	}
	slices.Sort(ends)
	nk := len(a.keyCols)
	key := make([]value, nk)
	kinds := a.kinds[:0]
	var windows []int32
	for _, e := range ends {
		windows = windows[:0]
		for sliceEnd := e - a.size + a.slide; sliceEnd <= e; sliceEnd += a.slide {
			for _, g := range a.byEnd[sliceEnd] {
				copy(key, a.keys.key(g))
				key[a.startKey].i, key[a.window].i = e-a.size, e
				w, found := a.windowGroups.find(key, &a.keyBuf)
				if !found {
					w = a.allocGroup(key, a.kgs[g])
					a.windowGroups.insert(key, a.keyBuf, w)
					windows = append(windows, w)
				}
				a.rows[w] += a.rows[g]
				for _, acc := range a.accs {
					acc.merge(w, g)
				}
			}
		}
		for _, w := range windows {
			a.appendResult(w)
			kinds = append(kinds, exec.Insert)
			a.freeGroup(w)
		}
		a.windowGroups.reset()
		last := e - a.size + a.slide // the slice whose last window this is
		for _, g := range a.byEnd[last] {
			a.drop(g)
		}
		delete(a.byEnd, last)
	}
	a.kinds = kinds
	return a.emitBuilt(ctx)
}

// partitionKey encodes group g's keys but its window bounds: the key its sessions share.
func (a *aggregate) partitionKey(g int32) string {
	var key []value
	for i, v := range a.keys.key(g) {
		if i != a.startKey && i != a.window && i != a.timeKey {
			key = append(key, v)
		}
	}
	return string(encodeKey(nil, key))
}

// mergeSessions merges, for each key that groups touched (created are the new ones),
// the sessions that overlap:
// a row at t came as a session [t, t+gap) of its own, and sessions that meet or overlap
// become one, which takes the earliest start and the latest end.
func (a *aggregate) mergeSessions(groups, created []int32) error {
	if a.sessions == nil {
		a.sessions = map[string][]int32{}
		for g, rows := range a.rows {
			if rows > 0 {
				pk := a.partitionKey(int32(g))
				a.sessions[pk] = append(a.sessions[pk], int32(g))
			}
		}
	} else {
		for _, g := range created {
			pk := a.partitionKey(g)
			a.sessions[pk] = append(a.sessions[pk], g)
		}
	}
	start := func(g int32) int64 { return a.keys.int(g, a.startKey) }
	touched := map[string]bool{}
	seen := map[int32]bool{}
	for _, g := range groups {
		if !seen[g] {
			seen[g] = true
			touched[a.partitionKey(g)] = true
		}
	}
	for pk := range touched {
		list := a.sessions[pk]
		slices.SortFunc(list, func(x, y int32) int { return cmp.Or(cmp.Compare(start(x), start(y)), cmp.Compare(x, y)) })
		merged := list[:0]
		for _, g := range list {
			if n := len(merged); n > 0 && start(g) <= a.windowEnd(merged[n-1]) {
				into := merged[n-1]
				if end := a.windowEnd(g); end > a.windowEnd(into) {
					a.setWindowEnd(into, end)
				}
				a.rows[into] += a.rows[g]
				for _, acc := range a.accs {
					acc.merge(into, g)
				}
				a.drop(g)
				continue
			}
			merged = append(merged, g)
		}
		a.sessions[pk] = merged
	}
	return nil
}

// setWindowEnd moves group g's window end, which is part of its key.
func (a *aggregate) setWindowEnd(g int32, end int64) {
	if a.state != nil && a.stored[g] {
		a.dropped = append(a.dropped, a.stateKey(g)) // the state under the old key goes
	}
	a.stored[g] = false
	a.groups.remove(a.keys.key(g))
	a.keys.setInt(g, a.window, end)
	if a.timeKey >= 0 {
		a.keys.setInt(g, a.timeKey, end-1)
	}
	key := a.keys.key(g)
	a.groups.insert(key, encodeKey(nil, key), g)
	if !a.dirtyFlag[g] {
		a.dirtyFlag[g] = true
		a.dirty = append(a.dirty, g)
	}
}

// fireSessions emits every session that ended at or before the watermark, oldest first,
// and forgets it.
func (a *aggregate) fireSessions(ctx context.Context, wm int64) error {
	var fired []int32
	for g, rows := range a.rows {
		if rows > 0 && a.windowEnd(int32(g)) <= wm {
			fired = append(fired, int32(g))
		}
	}
	if len(fired) > 0 {
		a.sessions = nil // rebuilt from the groups left
	}
	return a.emitFinal(ctx, fired)
}
