package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/engine"
)

// TestStartEmptiesBinsARunLeft: the bins a stop or a crash left full are
// emptied by the next start; a directory found in one is left with what
// it holds (a bin's files are deleted one by one, never as a tree), and
// what is not a bin is not touched.
func TestStartEmptiesBinsARunLeft(t *testing.T) {
	f := newFixture(t)
	trash := filepath.Join(f.eng.ProjectDir, "trash")
	full := filepath.Join(trash, "bin-0123456789abcdef")
	odd := filepath.Join(trash, "bin-fedcba9876543210")
	for _, p := range []string{full, filepath.Join(odd, "1", "kept"), filepath.Join(trash, "other")} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(full, "1"), filepath.Join(full, "2"), filepath.Join(odd, "2"),
		filepath.Join(odd, "1", "kept", "data"), filepath.Join(trash, "other", "x")} {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(full, "3")); err != nil {
		t.Fatal(err)
	}
	f.restart()
	awaitGone(t, full)
	awaitGone(t, filepath.Join(odd, "2"))
	for _, p := range []string{filepath.Join(odd, "1", "kept", "data"), filepath.Join(trash, "other", "x"), "/etc/passwd"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestBulkJobHoldsTheEmptierBack: while a bulk job runs, no bin is
// emptied (each of its parts syncs the whole file system, which would
// wait for the emptier's deletions); once it ends, they are.
func TestBulkJobHoldsTheEmptierBack(t *testing.T) {
	f := newFixture(t)
	bin := filepath.Join(f.eng.ProjectDir, "trash", "bin-0123456789abcdef")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "1"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resume := engine.PauseTrash(f.eng)
	if _, err := f.eng.Reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	// The hold is decided when the bin is queued: no emptier starts.
	if queued, running := engine.TrashQueue(f.eng); queued != 1 || running {
		t.Fatalf("during a bulk job: %d bins queued, emptier running %v; want 1 queued, none running", queued, running)
	}
	if _, err := os.Stat(filepath.Join(bin, "1")); err != nil {
		t.Fatalf("a bin was emptied during a bulk job: %v", err)
	}
	resume()
	awaitGone(t, bin)
}

// awaitGone waits (generously: a loaded host) until p is gone.
func awaitGone(t *testing.T, p string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := os.Lstat(p)
		if os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still there (%v)", p, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
