package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testenv"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// Repositories whose config lists extensions git knows and go-git's
// repository check does not: worktreeConfig (git sparse-checkout sets
// it), partialClone (a blobless or treeless clone of a large repository)
// and preciousObjects, at repository format 0 and 1. prsm reads objects
// with go-git, and these change nothing of that: an edit, a turn's
// checkpoint and a rewind work as in any repository.
func TestRepositoryExtensions(t *testing.T) {
	for name, cfg := range map[string][][2]string{
		"worktreeConfig v0":  {{"extensions.worktreeConfig", "true"}},
		"worktreeConfig v1":  {{"core.repositoryFormatVersion", "1"}, {"extensions.worktreeConfig", "true"}},
		"partialClone v1":    {{"core.repositoryFormatVersion", "1"}, {"remote.origin.url", "/nonexistent/origin.git"}, {"remote.origin.promisor", "true"}, {"extensions.partialClone", "origin"}},
		"preciousObjects v1": {{"core.repositoryFormatVersion", "1"}, {"extensions.preciousObjects", "true"}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			for _, kv := range cfg {
				testgit.Git(t, f.ws, "config", kv[0], kv[1])
			}
			f.editAndRewind("keep.txt", "keep\n", "kept\n")
		})
	}
}

// A SHA-256 repository, whose objects prsm cannot read, is refused at
// session start with the reason, before any worktree or branch is made.
func TestSHA256RepositoryRefused(t *testing.T) {
	testgit.Env(t)
	ws := t.TempDir()
	testgit.Git(t, ws, "init", "-q", "--object-format=sha256")
	testgit.Commit(t, ws, "init", map[string]string{"a.txt": "a\n"})
	eng := testenv.Engine(t, ws, t.TempDir(), nil)
	_, err := eng.StartSession(context.Background(), api.StartRequest{})
	var pe *prsm.Error
	if !errors.As(err, &pe) || pe.Code != "unsupported_repository" || !strings.Contains(err.Error(), "SHA-1 repositories only") {
		t.Fatalf("start: %v", err)
	}
	if got := testgit.Git(t, ws, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Fatalf("worktrees after the refusal:\n%s", got)
	}
	if got := testgit.Git(t, ws, "branch", "--list", "prsm/*"); got != "" {
		t.Fatalf("branches after the refusal: %q", got)
	}
}

// A workspace cloned with --shared (or --reference) reads its history's
// objects from another repository's object store (objects/info/
// alternates): an edit, a checkpoint and a rewind work as in any
// repository.
func TestSharedCloneAlternates(t *testing.T) {
	testgit.Env(t)
	origin := testgit.Init(t, "origin")
	testgit.Commit(t, origin, "init", map[string]string{"keep.txt": "keep\n", "d/f.txt": "f\n"})
	ws := filepath.Join(t.TempDir(), "ws")
	testgit.Git(t, origin, "clone", "-q", "--shared", origin, ws)
	if got := testgit.Git(t, ws, "count-objects", "-v"); !strings.Contains(got, "count: 0") || !strings.Contains(got, "packs: 0") {
		t.Fatalf("the clone has objects of its own:\n%s", got)
	}
	f := &fixture{t: t, eng: testenv.Engine(t, ws, t.TempDir(), nil), ws: ws, ctx: context.Background()}
	s := f.editAndRewind("d/f.txt", "f\n", "f2\n")
	f.bothHold(s, "keep.txt", "keep\n", "after the rewind")
}

// editAndRewind starts an auto-mode session and its first turn, edits rel
// from before to after (one record, synced), and rewinds to the turn's
// checkpoint (rel is before again in the worktree and the workspace).
func (f *fixture) editAndRewind(rel, before, after string) *prsm.Session {
	f.t.Helper()
	s := f.start(prsm.ModeAuto)
	cp := f.turn(s, 1)
	recs := f.tool(s, "t1", "Edit", rel, func(wt string) { write(f.t, wt, rel, after) })
	if len(recs) != 1 || recs[0].SyncState != prsm.SyncSynced || derefS(recs[0].OldContent) != before {
		f.t.Fatalf("records: %+v", recs)
	}
	f.bothHold(s, rel, after, "after the edit")
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		f.t.Fatal(err)
	}
	f.bothHold(s, rel, before, "after the rewind")
	return s
}

// A file an agent writes inside a submodule's directory belongs to the
// submodule's repository, which git does not track from the superproject
// (and git check-ignore refuses to be asked about): it is left out, as
// git status leaves it out, and the rest of the call is recorded. Before,
// the whole complete failed, and every later one with it.
func TestWriteInsideSubmodule(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		sub := testgit.Init(t, "sub")
		testgit.Commit(t, sub, "sub", map[string]string{"s.txt": "s\n"})
		testgit.Git(t, f.ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod")
		testgit.Git(t, f.ws, "commit", "-qm", "a submodule")
		s := f.start(prsm.ModeAuto)
		recs := f.tool(s, "t1", "Bash", "", func(wt string) {
			write(t, wt, "mod/new.txt", "inside\n")
			write(t, wt, "keep.txt", "kept\n")
		})
		if len(recs) != 1 || recs[0].RelPath != "keep.txt" || recs[0].SyncState != prsm.SyncSynced {
			for _, r := range recs {
				t.Logf("record %s %s", r.RelPath, r.SyncState)
			}
			t.Fatalf("%d records", len(recs))
		}
		f.bothHold(s, "keep.txt", "kept\n", "after the call")
		// And the next call is recorded as usual.
		recs = f.tool(s, "t2", "Edit", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "kept 2\n") })
		if len(recs) != 1 || recs[0].RelPath != "keep.txt" {
			t.Fatalf("records of the next call: %+v", recs)
		}
	})
}

// With PRSM_HOME inside the workspace (PRSM_HOME=./.prsm), a session's
// base snapshot leaves prsm's own state out: no copy of the database,
// server.json or other sessions' worktrees lands in a worktree. A file
// an agent writes there is not recorded, and so never synced into the
// real state directory.
func TestStateInsideWorkspace(t *testing.T) {
	testgit.Env(t)
	ws := testgit.Init(t, "ws")
	testgit.Commit(t, ws, "init", map[string]string{"keep.txt": "keep\n"})
	project := filepath.Join(ws, ".prsm", "projects", "ws-1234")
	f := &fixture{t: t, eng: testenv.Engine(t, ws, project, nil), ws: ws, ctx: context.Background()}
	a := f.start(prsm.ModeAuto)
	b := f.start(prsm.ModeAuto)
	for _, s := range []*prsm.Session{a, b} {
		if _, err := os.Lstat(filepath.Join(s.WorktreePath, ".prsm")); !os.IsNotExist(err) {
			t.Fatalf("worktree %s has .prsm (%v)", s.WorktreePath, err)
		}
		if got := testgit.Git(t, ws, "ls-tree", "-r", "--name-only", s.BaseCommit); got != "keep.txt" {
			t.Fatalf("base snapshot holds:\n%s", got)
		}
	}
	recs := f.tool(b, "t1", "Bash", "", func(wt string) {
		write(t, wt, ".prsm/projects/ws-1234/server.json", "{}\n")
		write(t, wt, "keep.txt", "kept\n")
	})
	if len(recs) != 1 || recs[0].RelPath != "keep.txt" {
		t.Fatalf("%d records", len(recs))
	}
	if _, err := os.Stat(filepath.Join(project, "server.json")); !os.IsNotExist(err) {
		t.Fatalf("the agent's server.json reached the state directory (%v)", err)
	}
	f.bothHold(b, "keep.txt", "kept\n", "after the call")
}
