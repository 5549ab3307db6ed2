//go:build unix

package engine_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/prsm-dev/prsm"
)

// TestOneCallChangingManyFilesUnderAFileLimit: a tool call that changes
// far more files than the process may hold descriptors for (a git
// checkout, a codemod) still syncs every one of them. Each prepared write
// held three descriptors until all were placed: the writes past the limit
// failed with "too many open files" and stayed unsynced.
func TestOneCallChangingManyFilesUnderAFileLimit(t *testing.T) {
	f := newFixture(t)
	const n = 1000
	for i := 0; i < n; i++ {
		write(t, f.ws, fmt.Sprintf("many/f%04d.txt", i), "old\n")
	}
	s := f.start(prsm.ModeAuto)
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = uint64(len(open) + 600) // room for 128 writes at a time, not for n
	if low.Cur >= old.Cur {
		t.Skipf("the file limit is %d already", old.Cur)
	}
	recs := f.tool(s, "b1", "Bash", "", func(wt string) {
		for i := 0; i < n; i++ {
			write(t, wt, fmt.Sprintf("many/f%04d.txt", i), fmt.Sprintf("file %d\n", i))
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
			t.Fatal(err)
		}
	})
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	synced := 0
	for _, r := range recs {
		if r.SyncState == prsm.SyncSynced {
			synced++
		}
	}
	if len(recs) != n || synced != n {
		t.Fatalf("%d records, %d synced; want %d of each", len(recs), synced, n)
	}
	for _, i := range []int{0, 500, n - 1} {
		rel := fmt.Sprintf("many/f%04d.txt", i)
		if got := read(t, f.ws, rel); got != fmt.Sprintf("file %d\n", i) {
			t.Errorf("workspace %s: %q", rel, got)
		}
	}
}
