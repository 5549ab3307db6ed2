//go:build race

package memtest

// Race: the race detector's shadow memory grows with every allocation,
// so a measure of memory means nothing under it (Resident reports none).
const Race = true
