package exec

import (
	"math/rand/v2"
	"testing"
)

// naiveCombined is the valve's definition, one pass over the inputs.
func naiveCombined(watermarks []int64, ended, idle []bool) int64 {
	wm, open, active := int64(MaxWatermark), false, false
	for i, w := range watermarks {
		if !ended[i] {
			open = true
			if !idle[i] {
				active = true
				wm = min(wm, w)
			}
		}
	}
	if open && !active {
		return MinWatermark
	}
	return wm
}

// TestValveMatchesDefinition drives the valve and the one-pass definition with the same
// random watermarks, idleness, batches and ends, and compares them after every step.
func TestValveMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 2000; round++ {
		n := 1 + rng.IntN(6)
		v := newValve(n)
		wm := make([]int64, n)
		ended, idle := make([]bool, n), make([]bool, n)
		for i := range wm {
			wm[i] = MinWatermark
		}
		for step := 0; step < 40; step++ {
			i := rng.IntN(n)
			switch rng.IntN(5) {
			case 0, 1:
				w := int64(rng.IntN(8))
				if !ended[i] {
					wm[i], idle[i] = max(wm[i], w), false
				}
				v.watermark(i, w)
			case 2:
				if !ended[i] {
					idle[i] = true
				}
				v.markIdle(i)
			case 3:
				if !ended[i] {
					idle[i] = false
				}
				v.activate(i)
			case 4:
				if rng.IntN(4) == 0 {
					ended[i] = true
					v.end(i)
				}
			}
			if got, want := v.combined(), naiveCombined(wm, ended, idle); got != want {
				t.Fatalf("round %d step %d: combined %d, want %d (wm %v ended %v idle %v)", round, step, got, want, wm, ended, idle)
			}
			allIdle := true
			for k := range wm {
				if !ended[k] && !idle[k] {
					allIdle = false
				}
			}
			if v.allIdle() != allIdle {
				t.Fatalf("round %d step %d: allIdle %v, want %v", round, step, v.allIdle(), allIdle)
			}
		}
	}
}
