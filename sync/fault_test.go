package sync

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFaultHookEveryStep: a write that fails at any step (a full disk
// mid-write included) leaves the file exactly as it was and no temporary
// file, reports the file system's error, and the same write succeeds once
// the fault is gone.
func TestFaultHookEveryStep(t *testing.T) {
	for _, op := range []string{"create", "write", "sync", "rename", "symlink", "remove"} {
		t.Run(op, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(p, []byte("old content\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			restore := SetFaultHook(func(got, path string) error {
				if got == op && path == p {
					return &fs.PathError{Op: got, Path: path, Err: syscall.ENOSPC}
				}
				return nil
			})
			var err error
			switch op {
			case "symlink":
				err = WriteSymlinkAtomic(p, "target")
			case "remove":
				err = RemoveFile(dir, p)
			default:
				err = WriteFileAtomic(p, []byte("new content, longer than the old one\n"), 0o644)
			}
			restore()
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("err = %v, want ENOSPC", err)
			}
			fi, lerr := os.Lstat(p)
			if lerr != nil || !fi.Mode().IsRegular() {
				t.Fatalf("file after failed %s: %v %v", op, fi, lerr)
			}
			if b, _ := os.ReadFile(p); string(b) != "old content\n" {
				t.Errorf("file after failed %s: %q", op, b)
			}
			assertNoTemp(t, dir)
			// The fault is gone: the retry works.
			switch op {
			case "symlink":
				err = WriteSymlinkAtomic(p, "target")
			case "remove":
				err = RemoveFile(dir, p)
			default:
				err = WriteFileAtomic(p, []byte("new\n"), 0o644)
			}
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			assertNoTemp(t, dir)
		})
	}
}
