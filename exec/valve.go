package exec

// valve combines the watermarks of a task's inputs: event time has reached the least
// watermark of the inputs still open; an ended input holds nothing back, nor does an
// idle one while another is active; when all open inputs are idle, event time stands
// still (MinWatermark). It keeps the least watermark and how many active inputs hold
// it, so a message costs O(1) amortized, not a pass over every input: a task fed by
// P tasks gets P watermarks a round, and a pass each would make a round cost P².
type valve struct {
	wm     []int64 // the latest watermark of each input
	ended  []bool
	idle   []bool // said it is idle, and sent nothing since
	open   int    // inputs not ended
	active int    // inputs open and not idle
	min    int64  // the least watermark of the active inputs; MaxWatermark if none
	atMin  int    // active inputs whose watermark is min
}

func newValve(n int) *valve {
	v := &valve{wm: make([]int64, n), ended: make([]bool, n), idle: make([]bool, n), open: n, active: n, min: MinWatermark, atMin: n}
	for i := range v.wm {
		v.wm[i] = MinWatermark
	}
	if n == 0 {
		v.min = MaxWatermark
	}
	return v
}

// combined is the watermark of the task.
func (v *valve) combined() int64 {
	if v.open > 0 && v.active == 0 {
		return MinWatermark
	}
	return v.min
}

// allIdle reports whether every open input is idle (or none is open).
func (v *valve) allIdle() bool { return v.active == 0 }

// watermark takes input i's watermark w, which also makes it active.
func (v *valve) watermark(i int, w int64) {
	if v.ended[i] {
		return
	}
	w = max(w, v.wm[i])
	if v.idle[i] {
		v.wm[i] = w
		v.join(i)
		return
	}
	if w == v.wm[i] {
		return
	}
	old := v.wm[i]
	v.wm[i] = w
	if old == v.min {
		v.atMin--
		if v.atMin == 0 {
			v.recompute()
		}
	}
}

// activate makes input i active again (a batch arrived on it).
func (v *valve) activate(i int) {
	if v.idle[i] && !v.ended[i] {
		v.join(i)
	}
}

// markIdle marks input i idle.
func (v *valve) markIdle(i int) {
	if v.idle[i] || v.ended[i] {
		return
	}
	v.leave(i)
	v.idle[i] = true
}

// end marks input i ended.
func (v *valve) end(i int) {
	if v.ended[i] {
		return
	}
	if !v.idle[i] {
		v.leave(i)
	}
	v.ended[i], v.idle[i] = true, false
	v.open--
}

// leave stops counting active input i.
func (v *valve) leave(i int) {
	v.active--
	if v.wm[i] == v.min {
		v.atMin--
		if v.atMin == 0 {
			v.idle[i] = true // not counted by recompute; the caller sets its final state
			v.recompute()
			v.idle[i] = false
		}
	}
}

// join counts idle input i as active again.
func (v *valve) join(i int) {
	v.idle[i] = false
	v.active++
	switch w := v.wm[i]; {
	case v.active == 1 || w < v.min:
		v.min, v.atMin = w, 1
	case w == v.min:
		v.atMin++
	}
}

func (v *valve) recompute() {
	v.min, v.atMin = MaxWatermark, 0
	for i, w := range v.wm {
		if v.ended[i] || v.idle[i] {
			continue
		}
		switch {
		case w < v.min || v.atMin == 0:
			v.min, v.atMin = w, 1
		case w == v.min:
			v.atMin++
		}
	}
}
