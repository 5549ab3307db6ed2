//go:build unix

package sync

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"syscall"
	"testing"
	"time"
)

func text(s string) Version {
	return Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte(s)}
}

const (
	prepBase   = "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	prepTheirs = "1\nagent\n3\n4\n5\n6\n7\n8\n9\n"
)

// TestPrepareStagesInvisibly: until Place, the workspace file is as it
// was and only a temporary file is new; Place renames it in, Settle
// leaves nothing behind.
func TestPrepareStagesInvisibly(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "d", "f.txt")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(prepBase), 0o644)
	w, err := Prepare(root, "d/f.txt", text(prepBase), text(prepTheirs))
	if err != nil {
		t.Fatal(err)
	}
	if w.outcome != Written || string(w.result.Content) != prepTheirs {
		t.Fatalf("prepared %v %q", w.outcome, w.result.Content)
	}
	assertFile(t, p, prepBase, 0o644)
	if left, _ := filepath.Glob(filepath.Join(root, "d", TempPrefix+"*")); len(left) != 1 {
		t.Fatalf("staged files: %v, want one", left)
	}
	out, v, err := w.Place()
	if err != nil || out != Written || string(v.Content) != prepTheirs {
		t.Fatalf("Place: %v %q %v", out, v.Content, err)
	}
	assertFile(t, p, prepTheirs, 0o644)
	if err := w.Settle(); err != nil {
		t.Fatal(err)
	}
	assertNoTemp(t, filepath.Join(root, "d"))
}

// TestPrepareDiscard: a discarded change leaves the file and the
// directory exactly as they were.
func TestPrepareDiscard(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "f.txt")
	os.WriteFile(p, []byte(prepBase), 0o600)
	w, err := Prepare(root, "f.txt", text(prepBase), text(prepTheirs))
	if err != nil {
		t.Fatal(err)
	}
	w.Discard()
	w.Discard() // twice is fine
	assertFile(t, p, prepBase, 0o600)
	assertNoTemp(t, root)
}

// TestPlaceMergesAnEditMadeMeanwhile: the user saves the file between
// Prepare and Place: Place merges again, so the edit is kept with the
// agent's change, or (overlapping) nothing is written.
func TestPlaceMergesAnEditMadeMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		name, user, want string
		out              Outcome
	}{
		{"apart", "1\n2\n3\n4\n5\n6\n7\n8\nuser\n", "1\nagent\n3\n4\n5\n6\n7\n8\nuser\n", Written},
		{"overlapping", "1\nuser\n3\n4\n5\n6\n7\n8\n9\n", "1\nuser\n3\n4\n5\n6\n7\n8\n9\n", Conflict},
		{"same size", "1\n2\n3\n4\n5\n6\n7\n8\nX\n", "1\nagent\n3\n4\n5\n6\n7\n8\nX\n", Written},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "f.txt")
			os.WriteFile(p, []byte(prepBase), 0o644)
			w, err := Prepare(root, "f.txt", text(prepBase), text(prepTheirs))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Discard()
			// A save as editors do it: a new file renamed over the old
			// one, so even a same-size edit in the same clock tick shows.
			tmp := filepath.Join(root, "editor-save")
			os.WriteFile(tmp, []byte(tc.user), 0o644)
			os.Chtimes(tmp, time.Now(), time.Now().Add(time.Second))
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
			out, _, err := w.Place()
			if err != nil || out != tc.out {
				t.Fatalf("Place: %v %v, want %v", out, err, tc.out)
			}
			w.Settle()
			assertFile(t, p, tc.want, 0o644)
			assertNoTemp(t, root)
		})
	}
}

// TestPrepareNewDirectoryAndRemoval: a file in a directory that does not
// exist yet is created whole by Place (nothing appears before), and a
// removal happens only at Place.
func TestPrepareNewDirectoryAndRemoval(t *testing.T) {
	root := t.TempDir()
	w, err := Prepare(root, "new/dir/f.txt", Absent, text("new\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Fatalf("the directory exists before Place: %v", err)
	}
	if out, _, err := w.Place(); err != nil || out != Written {
		t.Fatalf("Place: %v %v", out, err)
	}
	w.Settle()
	assertFile(t, filepath.Join(root, "new/dir/f.txt"), "new\n", 0o644)

	w, err = Prepare(root, "new/dir/f.txt", text("new\n"), Absent)
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(root, "new/dir/f.txt"), "new\n", 0o644)
	if out, _, err := w.Place(); err != nil || out != Written {
		t.Fatalf("Place of the removal: %v %v", out, err)
	}
	w.Settle()
	if _, err := os.Lstat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("the emptied directories are still there: %v", err)
	}
}

// openFiles lists this process's open files (Linux /proc), by target.
func openFiles(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	var out []string
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
			out = append(out, target)
		}
	}
	return out
}

func countPrefix(files []string, prefix string) int {
	n := 0
	for _, f := range files {
		if strings.HasPrefix(f, prefix) {
			n++
		}
	}
	return n
}

// TestPreparedHoldsReplacedFileUntilSettle: the file Place replaces stays
// open from Prepare to Settle (so the rename does not free its inode on
// the caller's time), and Settle, Discard and an unchanged Prepare close it:
// no descriptor outlives the write.
func TestPreparedHoldsReplacedFileUntilSettle(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "f.txt")
	os.WriteFile(p, []byte(prepBase), 0o644)
	before := len(openFiles(t))

	w, err := Prepare(root, "f.txt", text(prepBase), text(prepTheirs))
	if err != nil {
		t.Fatal(err)
	}
	if n := countPrefix(openFiles(t), p); n != 1 {
		t.Fatalf("after Prepare, %d open descriptors of %s, want 1 (the file to replace)", n, p)
	}
	if out, _, err := w.Place(); err != nil || out != Written {
		t.Fatalf("Place: %v %v", out, err)
	}
	if n := countPrefix(openFiles(t), p+" (deleted)"); n != 1 {
		t.Fatalf("after Place, %d open descriptors of the replaced file, want 1: %v", n, openFiles(t))
	}
	assertFile(t, p, prepTheirs, 0o644)
	if err := w.Settle(); err != nil {
		t.Fatal(err)
	}
	if got := openFiles(t); len(got) != before || countPrefix(got, p) != 0 {
		t.Fatalf("after Settle: %d open files (%v), want %d and none of %s", len(got), got, before, p)
	}

	// Discarded, and prepared to nothing (already in place): closed too.
	w, err = Prepare(root, "f.txt", text(prepTheirs), text(prepBase))
	if err != nil {
		t.Fatal(err)
	}
	w.Discard()
	w, err = Prepare(root, "f.txt", text(prepBase), text(prepTheirs))
	if err != nil || w.outcome != Unchanged {
		t.Fatalf("Prepare of a change in place: %v %v", w.outcome, err)
	}
	if got := openFiles(t); len(got) != before {
		t.Fatalf("after Discard and an unchanged Prepare: %d open files (%v), want %d", len(got), got, before)
	}
	assertFile(t, p, prepTheirs, 0o644)
}

// TestPreparedSyncsAfterPlace: a prepared write's steps come in the order
// create, write, rename, then the content's sync, which Settle does: Place
// waits for no disk. WriteFileAtomic still syncs before its rename. A
// failing sync in Settle is reported, with the new content in place and
// no temporary file left.
func TestPreparedSyncsAfterPlace(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "f.txt")
	os.WriteFile(p, []byte(prepBase), 0o644)
	var ops []string
	failSync := false
	restore := SetFaultHook(func(op, path string) error {
		if path == p {
			ops = append(ops, op)
			if op == "sync" && failSync {
				return &os.PathError{Op: "sync", Path: path, Err: syscall.EIO}
			}
		}
		return nil
	})
	defer restore()

	w, err := Prepare(root, "f.txt", text(prepBase), text(prepTheirs))
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := w.Place(); err != nil || out != Written {
		t.Fatalf("Place: %v %v", out, err)
	}
	if got := strings.Join(ops, " "); got != "create write rename" {
		t.Fatalf("steps up to Place: %q, want %q", got, "create write rename")
	}
	if err := w.Settle(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ops, " "); got != "create write rename sync" {
		t.Fatalf("steps up to Settle: %q, want the sync last", got)
	}
	assertFile(t, p, prepTheirs, 0o644)

	ops = nil
	if err := WriteFileAtomic(p, []byte("whole\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ops, " "); got != "create write sync rename" {
		t.Fatalf("WriteFileAtomic's steps: %q, want the sync before the rename", got)
	}

	failSync = true
	w, err = Prepare(root, "f.txt", text("whole\n"), text("agent\n"))
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := w.Place(); err != nil || out != Written {
		t.Fatalf("Place: %v %v", out, err)
	}
	if err := w.Settle(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Settle with a failing sync: %v, want EIO", err)
	}
	assertFile(t, p, "agent\n", 0o644)
	assertNoTemp(t, root)
}

// TestWriteUnsynced: the file is in place, with its mode, before Settle,
// and Settle then syncs its content (the "sync" step) once; a removal and a link
// are done at once; a path out of the root or through a link is refused
// and writes nothing.
func TestWriteUnsynced(t *testing.T) {
	root := t.TempDir()
	var syncs []string
	var mu stdsync.Mutex
	defer SetFaultHook(func(op, path string) error {
		if op == "sync" {
			mu.Lock()
			syncs = append(syncs, filepath.Base(path))
			mu.Unlock()
		}
		return nil
	})()
	if err := os.WriteFile(filepath.Join(root, "old.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := WriteUnsynced(root, "a/b/new.sh", Version{Present: true, Mode: ModeRegular | 0o755, Content: []byte("#!/bin/sh\n")})
	if err != nil || u == nil {
		t.Fatalf("WriteUnsynced = %v, %v", u, err)
	}
	assertFile(t, filepath.Join(root, "a/b/new.sh"), "#!/bin/sh\n", 0o755)
	assertNoTemp(t, filepath.Join(root, "a/b"))
	if len(syncs) != 0 {
		t.Errorf("synced before Settle: %v", syncs)
	}
	if err := u.Settle(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(syncs, " ") != "new.sh" {
		t.Errorf("syncs = %v, want [new.sh]", syncs)
	}
	var none *Prepared
	if err := none.Settle(); err != nil {
		t.Errorf("nil Settle: %v", err)
	}

	u, err = WriteUnsynced(root, "old.txt", Absent)
	if err != nil || u != nil {
		t.Errorf("removal: %v, %v; want done at once", u, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "old.txt")); !os.IsNotExist(err) {
		t.Errorf("old.txt still there: %v", err)
	}

	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"../escape.txt", "out/x.txt", "/abs.txt"} {
		if u, err := WriteUnsynced(root, rel, Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte("x")}); err == nil {
			u.Settle()
			t.Errorf("WriteUnsynced(%q) wrote", rel)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the root: %v", entries)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(root), "escape.txt")); err == nil {
		t.Error("escape.txt written beside the root")
	}
}

// BenchmarkPlace times Place alone (the rename of a staged file over the
// workspace file, which a tool call's answer waits for), with the staged
// file's writeback started at staging (as prsm does) and left to the
// rename (ext4's auto_da_alloc starts it there), side by side.
func BenchmarkPlace(b *testing.B) {
	for _, at := range []struct {
		name  string
		stage bool
	}{{"writeback-at-stage", true}, {"writeback-in-rename", false}} {
		b.Run(at.name, func(b *testing.B) {
			defer func(old bool) { writebackAtStage = old }(writebackAtStage)
			writebackAtStage = at.stage
			root := b.TempDir()
			const files = 64
			content := []byte(strings.Repeat("line of a file being edited\n", 32))
			for i := 0; i < files; i++ {
				if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d", i)), content, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				rel := fmt.Sprintf("f%02d", i%files)
				before, err := ReadVersion(root, rel)
				if err != nil {
					b.Fatal(err)
				}
				after := before
				after.Content = append([]byte(fmt.Sprintf("edit %d\n", i)), content...)
				w, err := Prepare(root, rel, before, after)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if out, _, err := w.Place(); err != nil || out != Written {
					b.Fatalf("Place: %v %v", out, err)
				}
				b.StopTimer()
				if err := w.Settle(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// TestPrepareSharesALargeBase: a large workspace file that still holds
// the base of the merge is compared with it, not read into a copy of its
// own (ours shares the base's bytes); one that differs by a byte is read
// and merged as before.
func TestPrepareSharesALargeBase(t *testing.T) {
	root := t.TempDir()
	base := bytes.Repeat([]byte("0123456789abcdef\n"), 200_000) // 3.4 MB of lines
	theirs := append(append([]byte{}, base...), "agent\n"...)
	os.WriteFile(filepath.Join(root, "big.txt"), base, 0o644)
	w, err := Prepare(root, "big.txt", Version{Present: true, Mode: 0o100644, Content: base}, Version{Present: true, Mode: 0o100644, Content: theirs})
	if err != nil {
		t.Fatal(err)
	}
	if &w.ours.Content[0] != &base[0] {
		t.Error("ours is a copy of the base's bytes")
	}
	if out, v, err := w.Place(); err != nil || out != Written || !bytes.Equal(v.Content, theirs) {
		t.Fatalf("Place: %v %v", out, err)
	}
	w.Settle()

	// The user's edit in the last line: read, and merged.
	mine := append(append([]byte{}, base[:len(base)-4]...), "xyz\n"...)
	os.WriteFile(filepath.Join(root, "big.txt"), mine, 0o644)
	w, err = Prepare(root, "big.txt", Version{Present: true, Mode: 0o100644, Content: base}, Version{Present: true, Mode: 0o100644, Content: theirs})
	if err != nil {
		t.Fatal(err)
	}
	if &w.ours.Content[0] == &base[0] || !bytes.Equal(w.ours.Content, mine) {
		t.Error("ours is not the file's own bytes")
	}
	w.Discard()
}

// TestApplyModesAsGit: Apply takes from theirs only the executable bit,
// as git's checkout does. A file it makes where the workspace has none
// (or has a link) is 0666 or 0777 less the umask, whatever bits theirs
// carries (000, 0600, 0777); an existing file keeps its own bits, with
// its x bits set from its read bits or cleared.
func TestApplyModesAsGit(t *testing.T) {
	old := syscall.Umask(0)
	syscall.Umask(old)
	m := os.FileMode(old)
	reg := func(perm uint32, s string) Version {
		return Version{Present: true, Mode: ModeRegular | perm, Content: []byte(s)}
	}
	for _, c := range []struct {
		name   string
		ours   func(p string)
		base   Version
		theirs Version
		want   os.FileMode
	}{
		{"new 000", nil, Absent, reg(0o000, "x\n"), 0o666 &^ m},
		{"new 0600", nil, Absent, reg(0o600, "x\n"), 0o666 &^ m},
		{"new 0777", nil, Absent, reg(0o777, "x\n"), 0o777 &^ m},
		{"new 0700", nil, Absent, reg(0o700, "x\n"), 0o777 &^ m},
		{"link replaced by 0777", func(p string) { os.Symlink("elsewhere", p) },
			Version{Present: true, Mode: ModeSymlink, Content: []byte("elsewhere")}, reg(0o777, "x\n"), 0o777 &^ m},
		{"0600 chmod 000", func(p string) { os.WriteFile(p, []byte("x\n"), 0o600) }, reg(0o600, "x\n"), reg(0o000, "x\n"), 0o600},
		{"0600 chmod 777", func(p string) { os.WriteFile(p, []byte("x\n"), 0o600) }, reg(0o600, "x\n"), reg(0o777, "x\n"), 0o700},
		{"0644 edited, 000", func(p string) { os.WriteFile(p, []byte("x\n"), 0o644) }, reg(0o644, "x\n"), reg(0o000, "y\n"), 0o644},
		{"0640 edited, 0777", func(p string) { os.WriteFile(p, []byte("x\n"), 0o640) }, reg(0o644, "x\n"), reg(0o777, "y\n"), 0o750},
		{"0755 chmod 666", func(p string) { os.WriteFile(p, []byte("x\n"), 0o755) }, reg(0o755, "x\n"), reg(0o666, "x\n"), 0o644},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "f")
			if c.ours != nil {
				c.ours(p)
			}
			if _, _, err := Apply(root, "f", c.base, c.theirs); err != nil {
				t.Fatal(err)
			}
			assertFile(t, p, string(c.theirs.Content), c.want)
		})
	}
}
