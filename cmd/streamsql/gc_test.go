package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestMeminfoTotal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	if err := os.WriteFile(path, []byte("MemFree:  100 kB\nMemTotal:       24683792 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := meminfoTotal(path); got != 24683792<<10 {
		t.Errorf("MemTotal = %d", got)
	}
	if got := meminfoTotal(filepath.Join(t.TempDir(), "none")); got != 0 {
		t.Errorf("a missing file gives %d", got)
	}
	if _, err := os.Stat("/proc/meminfo"); err == nil && memoryAvailable() <= 0 {
		t.Error("no memory found on a machine with /proc/meminfo")
	}
}

func TestGCPercentFollowsLiveHeap(t *testing.T) {
	for _, c := range []struct {
		live    uint64
		current int
		budget  uint64
		want    int
	}{
		{10 << 20, smallHeapPercent, 0, smallHeapPercent},
		{300 << 20, smallHeapPercent, 0, largeHeapPercent},
		{200 << 20, smallHeapPercent, 0, smallHeapPercent}, // between: unchanged
		{200 << 20, largeHeapPercent, 0, largeHeapPercent},
		{100 << 20, largeHeapPercent, 0, smallHeapPercent},
		{1 << 30, smallHeapPercent, 8 << 30, largeHeapPercent}, // 5 GB goal within 8
		{2 << 30, largeHeapPercent, 8 << 30, 300},              // 8 GB goal
		{3 << 30, largeHeapPercent, 8 << 30, 160},              // 7.8 GB goal
		{5 << 30, largeHeapPercent, 8 << 30, 60},               // 8 GB goal
		{6 << 30, largeHeapPercent, 8 << 30, minHeapPercent},   // 9 GB goal, over
		{100 << 20, largeHeapPercent, 200 << 20, smallHeapPercent},
	} {
		if got := gcPercentFor(c.live, c.current, c.budget); got != c.want {
			t.Errorf("live %d MB at %d%% within %d MB: %d%%, want %d%%", c.live>>20, c.current, c.budget>>20, got, c.want)
		}
	}
}

func TestAfterEachGC(t *testing.T) {
	runs := make(chan uint64, 16)
	afterEachGC(func() {
		select {
		case runs <- liveHeap():
		default:
		}
	})
	for range 3 {
		runtime.GC()
		select {
		case live := <-runs:
			if live == 0 {
				t.Error("no live heap read after a collection")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the hook did not run after a collection")
		}
	}
}
