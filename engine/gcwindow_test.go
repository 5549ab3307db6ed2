package engine_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// gcNow runs the user's `git gc --prune=now` in the workspace: every
// object no ref reaches, and no kept pack holds, is deleted.
func gcNow(t *testing.T, ws string) {
	t.Helper()
	testgit.Git(t, ws, "gc", "-q", "--prune=now")
}

// keepFiles lists the .keep files of the repository's packs.
func keepFiles(t *testing.T, ws string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(ws, ".git", "objects", "pack", "*.keep"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGCBetweenObjectsAndRefs: a `git gc --prune=now` that runs after a
// flush wrote a checkpoint's objects and before it set the checkpoint's
// refs deletes none of them: the refs are set on a commit git has whole,
// git fsck finds nothing wrong, and the checkpoint can be rewound to. No
// .keep file is left once the refs are set.
func TestGCBetweenObjectsAndRefs(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "one")) })
	f.tool(s, "w1", "Write", "new/deep/n.txt", func(wt string) { write(t, wt, "new/deep/n.txt", "new file\n") })
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	// The next flush to write objects is the checkpoint's, whoever runs
	// it (the flusher, or FlushObjects below).
	release := engine.HoldFlush(f.eng)
	cp, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "kept"})
	if err != nil {
		release()
		t.Fatal(err)
	}
	var ran atomic.Int32
	var gcErr error
	restore := engine.SetCrashHook(func(p string) {
		if p == "flush:written" && ran.Add(1) == 1 {
			out, err := exec.Command("git", "-C", f.ws, "gc", "-q", "--prune=now").CombinedOutput()
			if err != nil {
				gcErr = fmt.Errorf("%v: %s", err, out)
			}
		}
	})
	release()
	err = f.eng.FlushObjects(f.ctx)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 1 || gcErr != nil {
		t.Fatalf("the gc in the window between objects and refs: ran %d times, %v", ran.Load(), gcErr)
	}
	for _, id := range []string{cp.Commit, cp.Tree, cp.Commit + ":new/deep/n.txt", cp.Commit + ":f.txt"} {
		if !gitHas(f.ws, id) {
			t.Errorf("%s pruned by a gc in the window", id)
		}
	}
	testgit.Git(t, f.ws, "fsck", "--strict", "--no-dangling")
	if k := keepFiles(t, f.ws); len(k) != 0 {
		t.Errorf(".keep files left after the refs were set: %v", k)
	}
	// Once the refs are set the objects are the user's gc's to keep.
	gcNow(t, f.ws)
	testgit.Git(t, f.ws, "fsck", "--strict", "--no-dangling")
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 9, "two")) })
	f.tool(s, "r1", "Bash", "", func(wt string) { sh(t, wt, "rm -r new") })
	f.restart() // nothing staged in memory: the rewind reads what git has
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatalf("rewind to the checkpoint: %v", err)
	}
	f.bothHold(s, "f.txt", replaceLine(base, 3, "one"), "after the rewind")
	f.bothHold(s, "new/deep/n.txt", "new file\n", "after the rewind")
}

// TestGCBeforeALargeBlobsRef: a blob over 4 MiB is written into the
// object store as its checkpoint's tree is built, before the checkpoint
// is flushed; a `git gc --prune=now` in between keeps it, and the
// checkpoint is whole once its refs are set.
func TestGCBeforeALargeBlobsRef(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	large := bytes.Repeat([]byte("a large line of generated text\n"), 200_000) // 6.2 MB
	f.tool(s, "w1", "Write", "large.txt", func(wt string) {
		if err := os.WriteFile(filepath.Join(wt, "large.txt"), large, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	release := engine.HoldFlush(f.eng)
	cp, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "large"})
	if err != nil {
		release()
		t.Fatal(err)
	}
	blob := strings.TrimSpace(testgit.Git(t, f.ws, "hash-object", filepath.Join(s.WorktreePath, "large.txt")))
	if !gitHas(f.ws, blob) {
		release()
		t.Fatalf("the large blob is not in the object store before the flush")
	}
	gcNow(t, f.ws)
	release()
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	if !gitHas(f.ws, blob) {
		t.Fatalf("the large blob was pruned before its checkpoint's ref was set")
	}
	testgit.Git(t, f.ws, "fsck", "--strict", "--no-dangling")
	if k := keepFiles(t, f.ws); len(k) != 0 {
		t.Errorf(".keep files left after the refs were set: %v", k)
	}
	f.tool(s, "w2", "Write", "large.txt", func(wt string) { write(t, wt, "large.txt", "small now\n") })
	f.restart()
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatalf("rewind to the checkpoint: %v", err)
	}
	for _, root := range []string{s.WorktreePath, f.ws} {
		if b, err := os.ReadFile(filepath.Join(root, "large.txt")); err != nil || !bytes.Equal(b, large) {
			t.Errorf("%s large.txt after the rewind: %d bytes, %v", root, len(b), err)
		}
	}
}

// TestCrashBetweenObjectsAndRefs: a kill after a flush wrote its kept
// pack and before it set the refs leaves the pack kept (a gc keeps its
// objects while the server is down); the next start sets the refs and
// releases it, and the checkpoint can be rewound to.
func TestCrashBetweenObjectsAndRefs(t *testing.T) {
	was := engine.FlushDelay
	engine.FlushDelay = time.Hour // no flush but the test's
	t.Cleanup(func() { engine.FlushDelay = was })
	f := newFixture(t)
	s := f.start("")
	// A few flushes first: the one the kill cuts off folds their packs
	// into its own, which the start's flush of its checkpoint alone
	// does not write again.
	for i, line := range []int{3, 5, 7} {
		f.tool(s, fmt.Sprint("e", i), "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), line, "edit")) })
		if err := f.eng.FlushObjects(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := read(t, f.ws, "f.txt")
	cp, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	if !crashing(t, "flush:written", 1, func() {
		if err := f.eng.FlushObjects(f.ctx); err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("crash point flush:written not reached")
	}
	if k := keepFiles(t, f.ws); len(k) != 1 {
		t.Fatalf(".keep files after the crash: %v", k)
	}
	gcNow(t, f.ws) // while the server is down
	if !gitHas(f.ws, cp.Commit) {
		t.Fatal("the kept pack did not keep the checkpoint's commit")
	}
	// The next start is a new process: nothing of the old one's packs
	// in memory.
	f.eng = testenv.Engine(t, f.ws, f.eng.ProjectDir, nil)
	if _, err := f.eng.Reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	if k := keepFiles(t, f.ws); len(k) != 0 {
		t.Errorf(".keep files after the start: %v", k)
	}
	if got := testgit.Git(t, f.ws, "rev-parse", "refs/prsm/"+s.ID+"/"+cp.ID); got != cp.Commit {
		t.Errorf("checkpoint ref = %s, want %s", got, cp.Commit)
	}
	testgit.Git(t, f.ws, "fsck", "--strict", "--no-dangling")
	gcNow(t, f.ws)
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 9, "two")) })
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatalf("rewind to the checkpoint: %v", err)
	}
	f.bothHold(s, "f.txt", want, "after the rewind")
}
