//go:build !race

package memtest

// Race reports whether the race detector is on.
const Race = false
