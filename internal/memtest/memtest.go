// Package memtest measures what a piece of code costs in memory, for the
// tests that bound it (issue 42: nothing an agent writes may drive the
// server's memory past a stated bound).
package memtest

import "runtime"

// Allocated runs fn and returns the bytes allocated meanwhile (by fn and
// whatever else runs then). It is an upper bound of what fn adds to the
// heap at its peak, whenever the collector runs, so a test that bounds
// it asserts a bound and not a timing.
func Allocated(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}
