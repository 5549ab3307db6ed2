package main

import (
	"runtime/debug"
	"testing"
)

// TestServeBoundsMemory: the server sets its soft memory limit to
// memoryBound, and leaves one GOMEMLIMIT set alone.
func TestServeBoundsMemory(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	const theirs = 1 << 40
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(theirs)
	boundMemory()
	if got := debug.SetMemoryLimit(-1); got != memoryBound {
		t.Errorf("without GOMEMLIMIT: limit %d, want %d", got, memoryBound)
	}
	t.Setenv("GOMEMLIMIT", "1TiB")
	debug.SetMemoryLimit(theirs)
	boundMemory()
	if got := debug.SetMemoryLimit(-1); got != theirs {
		t.Errorf("with GOMEMLIMIT set: limit %d, want it left at %d", got, theirs)
	}
}
