package engine_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDotDotNamesAreRecorded: names that only start with two dots (..txt,
// ..foo/bar, ...) are ordinary names, not a way out of the worktree. An
// agent's changes to them are recorded and reach the workspace with their
// bytes, whether the watcher or git status finds them; a write to ../x
// (out of the worktree) is still never recorded nor synced.
func TestDotDotNamesAreRecorded(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start("")
		recs := f.tool(s, "b1", "Bash", "", func(wt string) {
			sh(t, wt, "printf 'two dots\\n' > ..txt && mkdir ..foo && printf 'bar\\0bytes' > ..foo/bar && printf 'three' > ... && printf 'out\\n' > ../x")
		})
		t.Cleanup(func() { os.Remove(filepath.Join(filepath.Dir(s.WorktreePath), "x")) })
		if got, want := summary(recs), "b1:0 create ... pending/synced\nb1:1 create ..foo/bar pending/synced\nb1:2 create ..txt pending/synced"; got != want {
			t.Fatalf("records:\n%s\nwant:\n%s", got, want)
		}
		for rel, want := range map[string]string{"..txt": "two dots\n", "..foo/bar": "bar\x00bytes", "...": "three"} {
			if got := read(t, f.ws, rel); got != want {
				t.Errorf("workspace %s = %q, want %q", rel, got, want)
			}
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(f.ws), "x")); !os.IsNotExist(err) {
			t.Errorf("../x escaped into the workspace's parent: %v", err)
		}
		// A change and a deletion are seen too.
		recs = f.tool(s, "b2", "Bash", "", func(wt string) { sh(t, wt, "printf 'changed\\n' > ..txt && rm -r ..foo") })
		if got, want := summary(recs), "b2:0 delete ..foo/bar pending/synced\nb2:1 modify ..txt pending/synced"; got != want {
			t.Fatalf("records:\n%s\nwant:\n%s", got, want)
		}
		if got := read(t, f.ws, "..txt"); got != "changed\n" {
			t.Errorf("workspace ..txt = %q", got)
		}
		if _, err := os.Lstat(filepath.Join(f.ws, "..foo", "bar")); !os.IsNotExist(err) {
			t.Errorf("workspace ..foo/bar not deleted: %v", err)
		}
		// A tool that names the file (Write) records it as well.
		recs = f.tool(s, "w1", "Write", "..w.txt", func(wt string) { write(t, wt, "..w.txt", "written\n") })
		if got, want := summary(recs), "w1 create ..w.txt pending/synced"; got != want {
			t.Fatalf("records:\n%s\nwant:\n%s", got, want)
		}
		if got := read(t, f.ws, "..w.txt"); got != "written\n" {
			t.Errorf("workspace ..w.txt = %q", got)
		}
		// The worktree and the workspace agree.
		ws, wt := f.trees(s)
		f.same("workspace against worktree", ws, wt)
	})
}
