package sync

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenDirsUnderLowFileLimit: with no descriptor left to open the
// next directory (a server under ulimit -n 64), OpenDirs lets go of the
// directories it holds and reads on, instead of failing the look with
// "too many open files" (as watch_limited.txtar's Stop did).
func TestOpenDirsUnderLowFileLimit(t *testing.T) {
	root := t.TempDir()
	var rels []string
	for i := range maxOpenDirs + 4 {
		rel := fmt.Sprintf("d%02d/f", i)
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	o := NewOpenDirs(root)
	defer o.Close()
	// Hold maxOpenDirs-1 directories open, then leave the process one
	// descriptor to spare beyond them.
	for _, rel := range rels[:maxOpenDirs-1] {
		if _, _, err := o.ReadVersionMax(rel, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	// Every descriptor taken but one: opening a directory below the
	// root takes two at once (the root's and the directory's).
	var fill []*os.File
	defer func() {
		for _, f := range fill {
			f.Close()
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		fill = append(fill, f)
	}
	if len(fill) == 0 {
		t.Fatal("no descriptor to take")
	}
	fill[len(fill)-1].Close()
	fill = fill[:len(fill)-1]
	for _, rel := range rels[maxOpenDirs-1:] {
		v, _, err := o.ReadVersionMax(rel, 1<<20)
		if err != nil || string(v.Content) != rel {
			t.Fatalf("%s under the low limit: %q, %v", rel, v.Content, err)
		}
	}
}
