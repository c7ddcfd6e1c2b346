package tests

import "syscall"

// umask sets the process's file mode creation mask and returns the previous one.
func umask(mask int) int { return syscall.Umask(mask) }
