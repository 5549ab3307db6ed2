package worktree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/worktree"
)

// leftovers lists what git or prsm left behind: temporary files in the
// repository's object store and anything in dir (the test's TMPDIR).
func leftovers(t *testing.T, repo, tmp string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(repo, ".git", "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "tmp_") {
			out = append(out, p)
		}
		return nil
	})
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		out = append(out, filepath.Join(tmp, e.Name()))
	}
	return out
}

// TestSnapshotHugeSparseFile is issue 42, item 5: an agent's `truncate -s
// 100G huge.bin` reached the workspace sparse, and every session start
// then spent two git timeouts hashing it and failed. The snapshot applies
// the size limit before git sees the file: it stores an untracked file
// and a tracked one made huge as stubs (bigfile) and names them in the
// commit, so that git never reads them; PlaceBig writes the real, sparse
// content into the checked-out worktree. Nothing is left in the user's
// repository or the temporary directory, and the user's index and HEAD
// are untouched.
func TestSnapshotHugeSparseFile(t *testing.T) {
	testgit.Env(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "init", map[string]string{"README.md": "hi\n", "grown.bin": "small\n"})
	const size = 100 << 30
	testgit.Sparse(t, dir, "huge.bin", size, "huge")
	testgit.Sparse(t, dir, "grown.bin", size/2, "grown")
	testgit.Write(t, dir, "new.txt", "new\n", 0o644)
	before := testgit.State(t, dir)

	git := &worktree.Runner{Timeout: 30 * time.Second}
	repo, err := worktree.Discover(ctx, git, dir)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.Snapshot(ctx, "base")
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if got := testgit.State(t, dir); got != before {
		t.Errorf("user state changed")
	}
	if got := leftovers(t, dir, tmp); len(got) != 0 {
		t.Errorf("left behind: %q", got)
	}
	big, err := repo.BigFiles(commit)
	if err != nil || strings.Join(big, " ") != "grown.bin huge.bin" {
		t.Fatalf("big files of the snapshot: %q %v", big, err)
	}
	for rel, n := range map[string]int64{"huge.bin": size, "grown.bin": size / 2} {
		blob := testgit.Git(t, dir, "cat-file", "blob", commit+":"+rel)
		in, ok := bigfile.Parse([]byte(blob + "\n"))
		if !ok || in.Size != n {
			t.Errorf("%s blob is %.80q, want a stub of %d bytes", rel, blob, n)
		}
	}
	if got := testgit.Git(t, dir, "cat-file", "blob", commit+":new.txt"); got != "new" {
		t.Errorf("new.txt blob = %q", got)
	}

	// The session's checkout, then the real content in place of the
	// stubs: the same bytes, still sparse.
	wt := filepath.Join(t.TempDir(), "wt")
	if err := repo.AddWorktree(ctx, wt, "prsm/big", commit); err != nil {
		t.Fatal(err)
	}
	placed, err := repo.PlaceBig(wt, commit)
	if err != nil || strings.Join(placed, " ") != "grown.bin huge.bin" {
		t.Fatalf("place big files: %q %v", placed, err)
	}
	for rel, tag := range map[string]string{"huge.bin": "huge", "grown.bin": "grown"} {
		p := filepath.Join(wt, rel)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.Stat(filepath.Join(dir, rel))
		if fi.Size() != want.Size() {
			t.Errorf("worktree %s: %d bytes, want %d", rel, fi.Size(), want.Size())
		}
		if n := testgit.DiskUse(t, p); n > 1<<20 {
			t.Errorf("worktree %s takes %d bytes of disk: made dense", rel, n)
		}
		f, _ := os.Open(p)
		b := make([]byte, len(tag))
		f.ReadAt(b, fi.Size()-int64(len(tag)))
		f.Close()
		if string(b) != tag {
			t.Errorf("worktree %s ends in %q, want %q", rel, b, tag)
		}
	}
	if got := leftovers(t, dir, tmp); len(got) != 0 {
		t.Errorf("left behind: %q", got)
	}
}

// TestSnapshotTimeoutLeavesNothing: a snapshot whose git runs out of
// time (here the size limit is raised past the file, so that git hashes
// 100 GiB, and the runner's timeout is short) fails with the timeout,
// once, and leaves nothing behind: no tmp_pack_* of the killed git in the
// user's object store, no temporary index or index lock in the
// temporary directory.
func TestSnapshotTimeoutLeavesNothing(t *testing.T) {
	testgit.Env(t)
	defer bigfile.SetLimit(1 << 50)()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	dir := testgit.Init(t, "ws")
	testgit.Commit(t, dir, "init", map[string]string{"README.md": "hi\n"})
	testgit.Sparse(t, dir, "huge.bin", 100<<30, "huge")
	before := testgit.State(t, dir)
	repo, err := worktree.Discover(ctx, &worktree.Runner{Timeout: 2 * time.Second}, dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = repo.Snapshot(ctx, "base")
	if !errors.Is(err, worktree.ErrTimeout) {
		t.Fatalf("snapshot: %v, want a timeout", err)
	}
	if got := leftovers(t, dir, tmp); len(got) != 0 {
		t.Errorf("left behind: %q", got)
	}
	if got := testgit.State(t, dir); got != before {
		t.Errorf("user state changed")
	}
}
