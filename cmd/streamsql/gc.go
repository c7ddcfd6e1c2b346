package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// gcPercent is the collector's target that streamsql sets unless GOGC is: the heap
// may grow to five times what is live before a collection, not twice. A job with large
// state (a regular join's rows, a window's groups) otherwise spends a quarter of its
// CPU or more marking state that does not change; the memory limit (tuneGC) makes the
// collector work harder, instead, as the heap nears the machine's memory.
const gcPercent = 400

// tuneGC sets the collector's target and, unless GOMEMLIMIT is set, a soft limit of
// three quarters of the memory the process may use (the cgroup's limit when lower
// than the machine's).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if total := memoryAvailable(); total > 0 {
			debug.SetMemoryLimit(total / 4 * 3)
		}
	}
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
