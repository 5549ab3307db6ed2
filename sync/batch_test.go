package sync

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestRemoveAll: each file goes only if it still holds what the removal
// undoes; directories left empty are pruned, up to the root. With a bin,
// the files that went are in it, and only they.
func TestRemoveAll(t *testing.T) {
	t.Run("unlinked", func(t *testing.T) { testRemoveAll(t, false) })
	t.Run("bin", func(t *testing.T) { testRemoveAll(t, true) })
}

func testRemoveAll(t *testing.T, withBin bool) {
	base := t.TempDir()
	var bin *Bin
	if withBin {
		var err error
		if bin, err = NewBin(filepath.Join(base, "trash")); err != nil {
			t.Fatal(err)
		}
		defer bin.Close()
	}
	root := filepath.Join(base, "root")
	mk := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(rel string) bool {
		_, err := os.Lstat(filepath.Join(root, rel))
		return err == nil
	}
	file := func(c string) Version { return Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte(c)} }
	mk("gen/a/one.js", "one\n")
	mk("gen/a/two.js", "two\n")
	mk("gen/b/three.js", "three\n")
	mk("gen/c/edited.js", "the user's\n")
	mk("keep/kept.js", "kept\n")
	mk("keep/mine.txt", "mine\n")
	mk("top.js", "top\n")
	if err := os.Symlink("one.js", filepath.Join(root, "gen/a/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "dir/now"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "victim.js"), []byte("v\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}

	items := []Removal{
		{"gen/a/one.js", file("one\n")},
		{"gen/a/two.js", file("two\n")},
		{"gen/b/three.js", file("three\n")},
		{"gen/c/edited.js", file("the agent's\n")}, // changed since: stays
		{"keep/kept.js", file("kept\n")},           // goes; keep/ holds mine.txt
		{"top.js", file("top\n")},                  // in the root
		{"gen/a/link", Version{Present: true, Mode: ModeSymlink, Content: []byte("one.js")}},
		{"gone/never.js", file("x\n")},    // no directory
		{"gen/a/absent.js", file("x\n")},  // no file
		{"dir/now", file("was a file\n")}, // a directory now
		{"out/victim.js", file("v\n")},    // through a symlink
		{"../escape.js", file("x\n")},     // not below root
	}
	outs, errs := RemoveAll(root, items, bin)
	want := []Outcome{Written, Written, Written, Conflict, Written, Written, Written, Unchanged, Unchanged, Conflict, Conflict, Conflict}
	for i, it := range items {
		if outs[i] != want[i] {
			t.Errorf("%s: %v (%v), want %v", it.Rel, outs[i], errs[i], want[i])
		}
		wantErr := i >= 10
		if (errs[i] != nil) != wantErr {
			t.Errorf("%s: error %v", it.Rel, errs[i])
		}
	}
	for _, rel := range []string{"gen/a", "gen/b", "keep/kept.js", "top.js"} {
		if exists(rel) {
			t.Errorf("%s is still there", rel)
		}
	}
	for _, rel := range []string{"gen/c/edited.js", "keep/mine.txt", "dir/now"} {
		if !exists(rel) {
			t.Errorf("%s was removed", rel)
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "victim.js")); err != nil || string(b) != "v\n" {
		t.Errorf("a file outside the root: %q, %v", b, err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Errorf("the root: %v", err)
	}
	if withBin && canRenameAt {
		var got []string
		entries, err := os.ReadDir(bin.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			p := filepath.Join(bin.Path, e.Name())
			if e.Type()&os.ModeSymlink != 0 {
				l, _ := os.Readlink(p)
				got = append(got, "-> "+l)
				continue
			}
			b, _ := os.ReadFile(p)
			got = append(got, string(b))
		}
		slices.Sort(got)
		if want := []string{"-> one.js", "kept\n", "one\n", "three\n", "top\n", "two\n"}; !slices.Equal(got, want) {
			t.Errorf("the bin holds %q, want %q", got, want)
		}
	}
	// Once more: every removal done is found done.
	outs, errs = RemoveAll(root, items[:3], bin)
	for i := range outs {
		if outs[i] != Unchanged || errs[i] != nil {
			t.Errorf("again, %s: %v %v", items[i].Rel, outs[i], errs[i])
		}
	}
}

// TestRemoveAllFailure: a removal that fails leaves the file, says why,
// and the others go on.
func TestRemoveAllFailure(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"d/a.js", "d/b.js"} {
		if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer SetFaultHook(func(op, path string) error {
		if op == "remove" && strings.HasSuffix(path, "a.js") {
			return syscall.EIO
		}
		return nil
	})()
	file := func(c string) Version { return Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte(c)} }
	outs, errs := RemoveAll(root, []Removal{{"d/a.js", file("d/a.js")}, {"d/b.js", file("d/b.js")}}, nil)
	if outs[0] != Conflict || !errors.Is(errs[0], syscall.EIO) {
		t.Errorf("a.js: %v %v", outs[0], errs[0])
	}
	if outs[1] != Written || errs[1] != nil {
		t.Errorf("b.js: %v %v", outs[1], errs[1])
	}
	if _, err := os.Lstat(filepath.Join(root, "d/a.js")); err != nil {
		t.Errorf("a.js: %v", err)
	}
	if !CanSyncFS {
		return
	}
	// The removals' one sync fails: each file removed says so (removed,
	// not yet durable); one left as it was does not.
	if err := os.WriteFile(filepath.Join(root, "d/b.js"), []byte("d/b.js"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer SetFaultHook(func(op, path string) error {
		if op == "sync" && path == root {
			return syscall.EIO
		}
		return nil
	})()
	outs, errs = RemoveAll(root, []Removal{{"d/a.js", file("other")}, {"d/b.js", file("d/b.js")}}, nil)
	if outs[0] != Conflict || errs[0] != nil {
		t.Errorf("a.js, which holds something else: %v %v", outs[0], errs[0])
	}
	if outs[1] != Written || !errors.Is(errs[1], syscall.EIO) || !strings.Contains(errs[1].Error(), "removed ") {
		t.Errorf("b.js, removed before the failing sync: %v %v", outs[1], errs[1])
	}
}

// TestPlaceUnsynced: a file in a directory that was not there, and one
// Prepare staged, are both in place after PlaceUnsynced; Release and one
// SyncFS finish them, leaving nothing behind.
func TestPlaceUnsynced(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "old.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := func(c string) Version { return Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte(c)} }
	for _, c := range []struct {
		rel        string
		base, want Version
	}{
		{"new/dir/a.txt", Absent, file("a\n")},
		{"old.txt", file("old\n"), file("new\n")},
	} {
		w, err := Prepare(root, c.rel, c.base, c.want)
		if err != nil {
			t.Fatal(err)
		}
		out, v, err := w.PlaceUnsynced()
		if err != nil || out != Written || !Same(v, c.want) {
			t.Fatalf("%s: %v %v %v", c.rel, out, v, err)
		}
		w.Release()
		assertFile(t, filepath.Join(root, c.rel), string(c.want.Content), 0o644)
		assertNoTemp(t, filepath.Dir(filepath.Join(root, c.rel)))
	}
	if CanSyncFS {
		if err := SyncFS(root); err != nil {
			t.Fatal(err)
		}
	} else if err := SyncFS(root); err == nil {
		t.Error("SyncFS worked where CanSyncFS says it does not")
	}
}

// TestStageAll: new files are staged in new and old directories, seen
// by nobody until Place renames them; a path that holds something by
// then is left to the caller; one through a symlink or out of the root
// fails.
func TestStageAll(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "old"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "old/mine.js"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	file := func(c string, mode uint32) Version {
		return Version{Present: true, Mode: ModeRegular | mode, Content: []byte(c)}
	}
	items := []Creation{
		{"new/a/one.js", file("one\n", 0o644)},
		{"new/a/two.sh", file("#!/bin/sh\n", 0o755)},
		{"old/three.js", file("three\n", 0o644)},
		{"old/mine.js", file("the agent's\n", 0o644)},
		{"old/late.js", file("the agent's\n", 0o644)},
		{"new/link", Version{Present: true, Mode: ModeSymlink, Content: []byte("a")}},
		{"out/evil.js", file("x\n", 0o644)},
		{"../escape.js", file("x\n", 0o644)},
	}
	staged, errs := StageAll(root, len(items), func(i int) Creation { return items[i] })
	for i, it := range items {
		if (errs[i] != nil) != (i >= 6) {
			t.Errorf("stage %s: %v", it.Rel, errs[i])
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "new/a/one.js")); !os.IsNotExist(err) {
		t.Errorf("a staged file is in place before Place: %v", err)
	}
	// The user makes a file at one of the paths meanwhile.
	if err := os.WriteFile(filepath.Join(root, "old/late.js"), []byte("late\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	taken, errs := staged.Place()
	want := []bool{true, true, true, false, false, false, false, false}
	for i, it := range items {
		if taken[i] != want[i] || errs[i] != nil {
			t.Errorf("place %s: taken %v, error %v", it.Rel, taken[i], errs[i])
		}
	}
	assertFile(t, filepath.Join(root, "new/a/one.js"), "one\n", 0o644)
	assertFile(t, filepath.Join(root, "new/a/two.sh"), "#!/bin/sh\n", 0o755)
	assertFile(t, filepath.Join(root, "old/three.js"), "three\n", 0o644)
	assertFile(t, filepath.Join(root, "old/mine.js"), "mine\n", 0o600)
	assertFile(t, filepath.Join(root, "old/late.js"), "late\n", 0o644)
	for _, d := range []string{"new/a", "old"} {
		assertNoTemp(t, filepath.Join(root, d))
	}
	if _, err := os.Lstat(filepath.Join(root, "new/link")); !os.IsNotExist(err) {
		t.Errorf("a link was staged: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "evil.js")); !os.IsNotExist(err) {
		t.Errorf("a file was written through a symlink: %v", err)
	}
}

// TestStageAllDiscard: a discard takes the staged files back and the
// directories made for them, not a directory of the user's.
func TestStageAllDiscard(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte("x\n")}
	items := []Creation{{"new/deep/a.js", file}, {"empty/b.js", file}}
	staged, errs := StageAll(root, len(items), func(i int) Creation { return items[i] })
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	staged.Discard()
	if _, err := os.Lstat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("the directories made for the staged files stay: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "empty")); err != nil || !fi.IsDir() {
		t.Errorf("the user's empty directory: %v", err)
	}
	assertNoTemp(t, filepath.Join(root, "empty"))
}
