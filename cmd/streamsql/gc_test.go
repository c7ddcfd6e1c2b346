package main

import (
	"os"
	"path/filepath"
	"testing"
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
