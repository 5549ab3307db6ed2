package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/tracker"
)

// sameContent reports whether two files hold the same bytes, read in
// pieces (they are large).
func sameContent(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	ba, bb := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		na, ea := fa.Read(ba)
		nb, _ := fb.Read(bb[:max(na, 1)])
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil {
			return true
		}
	}
}

// storedBytes is the size of the largest content the store holds.
func (f *fixture) storedBytes() int64 {
	f.t.Helper()
	var n int64
	if err := f.q().QueryRowContext(f.ctx, "SELECT COALESCE(MAX(size), 0) FROM blobs").Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// TestBigFileSparse: a file over the size limit, sparse as `truncate -s`
// makes it, is recorded with its size and a note, kept in the store as a
// stub only, and reaches the workspace whole and still sparse. Its later
// edit and its deletion are recorded and synced the same way, and a
// rewind that needs a version nobody holds any longer says so and
// changes nothing.
func TestBigFileSparse(t *testing.T) {
	defer bigfile.SetLimit(1 << 20)()
	const size = 256 << 20
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start("")
		recs := f.tool(s, "b1", "Bash", "", func(wt string) { testgit.Sparse(t, wt, "data/sparse.bin", size, "one") })
		if got := summary(recs); got != "b1:0 create data/sparse.bin pending/synced" {
			t.Fatalf("records:\n%s", got)
		}
		r := recs[0]
		if !r.Binary || r.SizeAfter != size || !strings.Contains(r.Note, "too large: 256 MiB") || r.NewContent != nil {
			t.Errorf("record: binary %v, size_after %d, note %q", r.Binary, r.SizeAfter, r.Note)
		}
		wtFile, wsFile := filepath.Join(s.WorktreePath, "data/sparse.bin"), filepath.Join(f.ws, "data/sparse.bin")
		if !sameContent(t, wtFile, wsFile) {
			t.Fatal("the workspace's copy differs from the agent's file")
		}
		if n := testgit.DiskUse(t, wsFile); n > 1<<20 {
			t.Errorf("the workspace's copy of a sparse 256 MiB file takes %d bytes of disk: made dense", n)
		}
		if n := f.storedBytes(); n > 4<<10 {
			t.Errorf("the store holds a content of %d bytes: the big file went into it", n)
		}
		if _, _, err := f.eng.Content(f.ctx, s.ID, "b1:0", "after"); !errors.Is(err, prsm.ErrNotFound) || !strings.Contains(err.Error(), "size limit") {
			t.Errorf("content of a big file: %v", err)
		}

		// An edit in the middle: a new version, compared by hash.
		cp := f.turn(s, 2)
		recs = f.tool(s, "b2", "Bash", "", func(wt string) {
			fh, err := os.OpenFile(filepath.Join(wt, "data/sparse.bin"), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fh.WriteAt([]byte("two"), 100<<20)
			fh.Close()
		})
		if got := summary(recs); got != "b2:0 modify data/sparse.bin pending/synced" {
			t.Fatalf("records:\n%s", got)
		}
		if !sameContent(t, wtFile, wsFile) {
			t.Fatal("the edit did not reach the workspace")
		}

		// The first version is nowhere any more: rewinding to before the
		// edit cannot bring it back, and leaves both files as they are.
		if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err == nil || !strings.Contains(err.Error(), "no copy of this version is kept") {
			t.Errorf("rewind to a big file's version nobody holds: %v", err)
		}
		for _, p := range []string{wtFile, wsFile} {
			b := make([]byte, 3)
			fh, err := os.Open(p)
			if err != nil {
				t.Fatalf("the rewind removed %s, whose first version it could not restore: %v", p, err)
			}
			fh.ReadAt(b, 100<<20)
			fh.Close()
			if string(b) != "two" {
				t.Errorf("%s holds %q at 100 MiB: the edit was lost", p, b)
			}
		}
	})
}

// TestBigFileCreatedAndDeleted: a big file the agent creates and deletes
// leaves nothing behind in the workspace, and a restart is clean.
func TestBigFileCreatedAndDeleted(t *testing.T) {
	defer bigfile.SetLimit(1 << 20)()
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		s := f.start("")
		f.tool(s, "c1", "Bash", "", func(wt string) { testgit.Sparse(t, wt, "big.bin", 64<<20, "x") })
		recs := f.tool(s, "c2", "Bash", "", func(wt string) { os.Remove(filepath.Join(wt, "big.bin")) })
		if got := summary(recs); got != "c2:0 delete big.bin pending/synced" {
			t.Fatalf("records:\n%s", got)
		}
		if recs[0].SizeBefore != 64<<20 || recs[0].Note == "" {
			t.Errorf("delete record: size_before %d, note %q", recs[0].SizeBefore, recs[0].Note)
		}
		if _, err := os.Lstat(filepath.Join(f.ws, "big.bin")); !os.IsNotExist(err) {
			t.Errorf("the workspace still has big.bin: %v", err)
		}
		f.restart()
		if got := f.records(s); got != "c1:0 create big.bin pending/synced\nc2:0 delete big.bin pending/synced" {
			t.Errorf("records after restart:\n%s", got)
		}
	})
}

// TestBigFileReviewAccept: in review mode a big file reaches the workspace
// when accepted, copied from the worktree, and a reject of a big file's
// creation takes it out of the worktree.
func TestBigFileReviewAccept(t *testing.T) {
	defer bigfile.SetLimit(1 << 20)()
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	f.tool(s, "r1", "Bash", "", func(wt string) { testgit.Sparse(t, wt, "a.bin", 8<<20, "a") })
	f.tool(s, "r2", "Bash", "", func(wt string) { testgit.Sparse(t, wt, "b.bin", 8<<20, "b") })
	for _, rel := range []string{"a.bin", "b.bin"} {
		if _, err := os.Lstat(filepath.Join(f.ws, rel)); !os.IsNotExist(err) {
			t.Fatalf("review mode: %s reached the workspace before any accept", rel)
		}
	}
	if _, err := f.eng.Accept(f.ctx, s.ID, "r1:0"); err != nil {
		t.Fatal(err)
	}
	if !sameContent(t, filepath.Join(s.WorktreePath, "a.bin"), filepath.Join(f.ws, "a.bin")) {
		t.Error("the accepted big file differs in the workspace")
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "r2:0"); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{s.WorktreePath, f.ws} {
		if _, err := os.Lstat(filepath.Join(root, "b.bin")); !os.IsNotExist(err) {
			t.Errorf("the rejected big file is still in %s: %v", root, err)
		}
	}
}

// TestBigFileForgedStub: a small file that holds what a stub looks like is
// not taken for the content the stub names: it is copied as the bytes it
// holds.
func TestBigFileForgedStub(t *testing.T) {
	defer bigfile.SetLimit(1 << 20)()
	f := newFixture(t)
	s := f.start("")
	testgit.Sparse(t, s.WorktreePath, "victim.bin", 4<<20, "secret")
	f.tool(s, "v1", "Bash", "", func(string) {})
	forged := bigfile.Stub(bigfile.Info{Size: 4 << 20, ID: strings.Repeat("0", 64)})
	recs := f.tool(s, "v2", "Write", "forged.bin", func(wt string) { write(t, wt, "forged.bin", string(forged)) })
	if len(recs) != 1 || recs[0].SizeAfter != int64(len(forged)) {
		t.Fatalf("records: %s", summary(recs))
	}
	if got := read(t, f.ws, "forged.bin"); got != string(forged) {
		t.Errorf("the workspace holds %d bytes, not the forged file's", len(got))
	}
}

// TestManyLargeFilesOneCall: a tool call that writes more content than
// one look reads into memory (tracker.LookBudget) records every file; the
// ones past the budget are kept as big files (size, hash, a note), and
// all of them reach the workspace whole.
func TestManyLargeFilesOneCall(t *testing.T) {
	defer bigfile.SetLimit(4 << 20)()
	defer tracker.SetLookBudget(6 << 20)()
	f := newFixture(t)
	s := f.start("")
	want := map[string][]byte{}
	recs := f.tool(s, "m1", "Bash", "", func(wt string) {
		for i := range 5 {
			b := bytes.Repeat([]byte{byte('a' + i), '\n'}, 3<<19) // 3 MiB of text
			rel := fmt.Sprintf("out/%d.txt", i)
			want[rel] = b
			write(t, wt, rel, string(b))
		}
	})
	if len(recs) != 5 {
		t.Fatalf("records:\n%s", summary(recs))
	}
	big := 0
	for _, r := range recs {
		if r.SizeAfter != 3<<20 || r.SyncState != prsm.SyncSynced {
			t.Errorf("%s: size %d, %s", r.RelPath, r.SizeAfter, r.SyncState)
		}
		if r.Note != "" {
			big++
		}
		if got := read(t, f.ws, r.RelPath); got != string(want[r.RelPath]) {
			t.Errorf("%s: the workspace holds %d bytes, not the agent's", r.RelPath, len(got))
		}
	}
	if big != 3 {
		t.Errorf("%d of 5 files of 3 MiB kept as big files with a 6 MiB budget; want 3", big)
	}
	// A later look reads them again, and finds no change.
	if recs := f.tool(s, "m2", "Bash", "", func(string) {}); len(recs) != 0 {
		t.Errorf("records of a call that changed nothing:\n%s", summary(recs))
	}
}

// TestSparseUnderLimit: a sparse file under the size limit is kept in the
// store, and its workspace copy stays sparse.
func TestSparseUnderLimit(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	recs := f.tool(s, "u1", "Bash", "", func(wt string) { testgit.Sparse(t, wt, "half.bin", 16<<20, "tag") })
	if len(recs) != 1 || recs[0].Note != "" || recs[0].SizeAfter != 16<<20 {
		t.Fatalf("records: %s", summary(recs))
	}
	ws := filepath.Join(f.ws, "half.bin")
	if !sameContent(t, filepath.Join(s.WorktreePath, "half.bin"), ws) {
		t.Fatal("workspace copy differs")
	}
	if n := testgit.DiskUse(t, ws); n > 1<<20 {
		t.Errorf("the workspace copy of a sparse 16 MiB file takes %d bytes of disk: made dense", n)
	}
}

// TestSessionStartWithHugeSparseFile is issue 42, item 5: an agent's
// `truncate -s 100G huge.bin` is recorded and reaches the workspace
// sparse, and every later session start failed after two git timeouts.
// Now the next session starts, its worktree holds the same file, still
// sparse, with nothing recorded for it; the agent's edit of it is a
// change of a big file, synced; and nothing of a git stream is left in
// the user's object store.
func TestSessionStartWithHugeSparseFile(t *testing.T) {
	const size = 100 << 30
	f := newFixture(t)
	s1 := f.start("")
	recs := f.tool(s1, "h1", "Bash", "", func(wt string) { testgit.Sparse(t, wt, "huge.bin", size, "one") })
	if got := summary(recs); got != "h1:0 create huge.bin pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	s2, err := f.eng.StartSession(f.ctx, api.StartRequest{})
	if err != nil {
		t.Fatalf("session start with a 100 GiB sparse file in the workspace: %v", err)
	}
	wtFile, wsFile := filepath.Join(s2.WorktreePath, "huge.bin"), filepath.Join(f.ws, "huge.bin")
	if fi, err := os.Stat(wtFile); err != nil || fi.Size() != size {
		t.Fatalf("the new worktree's huge.bin: %v %v", fi, err)
	}
	if n := testgit.DiskUse(t, wtFile); n > 1<<20 {
		t.Errorf("the new worktree's huge.bin takes %d bytes of disk: made dense", n)
	}
	for _, off := range []int64{1 << 20, size - 3} {
		b := make([]byte, 3)
		fh, _ := os.Open(wtFile)
		fh.ReadAt(b, off)
		fh.Close()
		if string(b) != "one" {
			t.Errorf("the new worktree's huge.bin holds %q at %d", b, off)
		}
	}
	if recs := f.tool(s2, "n1", "Bash", "", func(wt string) { write(t, wt, "other.txt", "x\n") }); summary(recs) != "n1:0 create other.txt pending/synced" {
		t.Errorf("records of a call that did not touch huge.bin:\n%s", summary(recs))
	}
	recs = f.tool(s2, "e1", "Bash", "", func(wt string) {
		fh, err := os.OpenFile(filepath.Join(wt, "huge.bin"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteAt([]byte("two"), 50<<30)
		fh.Close()
	})
	if got := summary(recs); got != "e1:0 modify huge.bin pending/synced" || !strings.Contains(recs[0].Note, "too large") {
		t.Fatalf("records of the edit:\n%s (note %q)", got, recs[0].Note)
	}
	b := make([]byte, 3)
	fh, _ := os.Open(wsFile)
	fh.ReadAt(b, 50<<30)
	fh.Close()
	if string(b) != "two" {
		t.Errorf("the edit did not reach the workspace: %q", b)
	}
	tmps, _ := filepath.Glob(filepath.Join(f.ws, ".git", "objects", "pack", "tmp_*"))
	if len(tmps) > 0 {
		t.Errorf("left in the user's object store: %q", tmps)
	}
}
