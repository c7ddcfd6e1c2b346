package main

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
)

// The collector's target, which streamsql sets unless GOGC is: Go's default (a
// collection once the heap has doubled what is live) while the live heap is small,
// and five times what is live once it is large. A job with large state (a regular
// join's rows, a window's groups) otherwise spends a quarter of its CPU or more marking
// state that does not change, since the collector's work per collection grows with the
// live heap while collections come as often; a small heap (a shell's held result) keeps
// its memory bounded as before. The memory limit (tuneGC) makes the collector work
// harder, instead, as the heap nears the machine's memory.
//
// Five times a live heap of gigabytes is more than the machine can give without cost,
// though: every page the heap grows by is a page fault, and near the machine's memory
// the kernel reclaims pages at each one. In q9 of Nexmark (5 GB live at its end) the
// kernel's time then exceeded the program's own. So the target is lowered, to no less
// than minHeapPercent, as far as keeps the heap's goal within a third of the memory.
const (
	smallHeapPercent = 100
	largeHeapPercent = 400
	minHeapPercent   = 50
	largeHeap        = 256 << 20 // live bytes from which the heap counts as large
	smallHeap        = 128 << 20 // and below which it is small again
)

// tuneGC sets the collector's target after each collection by the live heap, unless
// GOGC is set, and, unless GOMEMLIMIT is, a soft limit of three quarters of the memory
// the process may use (the cgroup's limit when lower than the machine's).
func tuneGC() {
	total := memoryAvailable()
	if os.Getenv("GOMEMLIMIT") == "" && total > 0 {
		debug.SetMemoryLimit(total / 4 * 3)
	}
	if os.Getenv("GOGC") == "" {
		percent := smallHeapPercent
		budget := uint64(max(total, 0) / 3)
		afterEachGC(func() {
			if p := gcPercentFor(liveHeap(), percent, budget); p != percent {
				percent = p
				debug.SetGCPercent(p)
			}
		})
	}
}

// gcPercentFor is the collector's target for a live heap of live bytes, the target
// being current: it changes only past the thresholds, so that a heap near one does not
// switch at every collection. A large heap's target keeps its goal within budget bytes
// (none when 0), in steps of ten.
func gcPercentFor(live uint64, current int, budget uint64) int {
	switch {
	case live >= largeHeap:
		p := largeHeapPercent
		if budget > 0 && live*uint64(1+p/100) > budget {
			p = int(float64(budget)/float64(live)*10-10) * 10
			p = max(p, minHeapPercent)
		}
		return p
	case live < smallHeap:
		return smallHeapPercent
	}
	return current
}

// gcSentinel is an object kept by nothing but its finalizer's registration: it dies
// at every collection. It holds a pointer so that it is not a tiny allocation, which
// may share memory with live objects and never be finalized.
type gcSentinel struct{ _ *int }

// afterEachGC runs f, on the runtime's finalizer goroutine, after each collection.
func afterEachGC(f func()) {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		f()
		afterEachGC(f)
	})
}

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// memoryAvailable is the memory this process may use, in bytes: the machine's, or the
// cgroup's limit when lower; 0 when unknown.
func memoryAvailable() int64 {
	total := meminfoTotal("/proc/meminfo")
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
				total = n
			}
		}
	}
	return total
}

// meminfoTotal reads MemTotal of a /proc/meminfo file, in bytes; 0 when unknown.
func meminfoTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
