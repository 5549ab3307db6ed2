// Package memtest measures what a piece of code costs in memory, for the
// tests that bound it (issue 42: nothing an agent writes may drive the
// server's memory past a stated bound).
package memtest

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
)

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

// Resident runs fn and returns how far the process's resident memory
// rose above what it was before fn, at its peak: the kernel's high-water
// mark (VmHWM), reset before fn. Unlike Allocated it sees memory outside
// Go's heap, which SQLite (modernc's, C translated to Go) allocates for
// the values it binds and reads; like it, it is the peak whenever the
// collector ran, not a timing. Before fn the heap is collected and freed
// memory given back, so the baseline is what is live. ok is false where
// the kernel offers no such mark (not Linux, or clear_refs refused), and
// under the race detector, whose own memory grows with the program's.
func Resident(fn func()) (rise int64, ok bool) {
	if Race {
		fn()
		return 0, false
	}
	runtime.GC()
	debug.FreeOSMemory()
	base, ok := status("VmRSS:")
	if !ok || os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) != nil {
		fn()
		return 0, false
	}
	if hwm, ok := status("VmHWM:"); !ok || hwm > base+base/8+1<<20 {
		fn() // the mark was not reset
		return 0, false
	}
	fn()
	peak, ok := status("VmHWM:")
	if !ok {
		return 0, false
	}
	return max(peak-base, 0), true
}

// status is a size field of /proc/self/status, in bytes.
func status(field string) (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(field)); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
