package engine_test

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// A file that .gitattributes checks out with CRLF line ends (`text
// eol=crlf`, common for .bat files) is stored with LF in git. An edit of
// one of its lines is a one-line change, and syncs into the workspace's
// CRLF copy of it, instead of a change of every line that conflicts with
// the workspace; a rewind to before it brings back the CRLF file.
func TestEolAttributesEditOneLine(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		lf := "echo one\necho two\necho three\n"
		crlf := f.commitBat(lf)
		s := f.start(prsm.ModeAuto)
		if got := read(t, s.WorktreePath, "run.bat"); got != crlf {
			t.Fatalf("worktree checkout: %q", got)
		}
		cp := f.turn(s, 1)
		edited := strings.Replace(crlf, "echo two", "echo 2", 1)
		recs := f.tool(s, "t1", "Edit", "run.bat", func(wt string) { write(t, wt, "run.bat", edited) })
		if len(recs) != 1 {
			t.Fatalf("records: %+v", recs)
		}
		r := recs[0]
		if r.SyncState != prsm.SyncSynced || len(r.AddedRanges) != 1 || len(r.RemovedRanges) != 1 ||
			r.AddedRanges[0] != (prsm.Range{StartLine: 2, EndLine: 2}) {
			t.Fatalf("record: sync %s, added %v, removed %v", r.SyncState, r.AddedRanges, r.RemovedRanges)
		}
		if r.OldContent == nil || *r.OldContent != crlf {
			t.Fatalf("old content %q", derefS(r.OldContent))
		}
		f.bothHold(s, "run.bat", edited, "after the edit")
		// A rewind to before the edit brings back the file as git checked
		// it out, CRLF and all.
		if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
			t.Fatal(err)
		}
		f.bothHold(s, "run.bat", crlf, "after the rewind")

		// The agent turns the file into LF: the very blob git stores. A
		// checkpoint then has that blob as the agent's bytes, and a rewind
		// to it after a later edit brings back LF, not git's CRLF.
		f.tool(s, "t2", "Write", "run.bat", func(wt string) { write(t, wt, "run.bat", lf) })
		f.bothHold(s, "run.bat", lf, "after the agent's LF")
		cp2 := f.turn(s, 2)
		f.tool(s, "t3", "Write", "run.bat", func(wt string) { write(t, wt, "run.bat", "echo other\n") })
		if _, err := f.eng.Rewind(f.ctx, s.ID, cp2.ID, false); err != nil {
			t.Fatal(err)
		}
		f.bothHold(s, "run.bat", lf, "after the rewind to the agent's LF")
		// And back to the start: CRLF again, from the first rewind's
		// record being undone.
		if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
			t.Fatal(err)
		}
		f.bothHold(s, "run.bat", crlf, "after the rewind to the start")
	})
}

// In review mode the workspace takes the edit on accept: a one-line
// merge into its CRLF copy.
func TestEolAttributesReviewAccept(t *testing.T) {
	f := newFixture(t)
	crlf := f.commitBat("echo one\necho two\necho three\necho four\n")
	s := f.start(prsm.ModeReview)
	edited := strings.Replace(crlf, "echo four", "echo 4", 1)
	recs := f.tool(s, "t1", "Edit", "run.bat", func(wt string) { write(t, wt, "run.bat", edited) })
	if len(recs) != 1 || len(recs[0].AddedRanges) != 1 {
		t.Fatalf("records: %+v", recs)
	}
	if got := read(t, f.ws, "run.bat"); got != crlf {
		t.Fatalf("workspace before the accept: %q", got)
	}
	// The user's own edit of another line stays.
	write(t, f.ws, "run.bat", strings.Replace(crlf, "echo one", "echo uno", 1))
	if _, err := f.eng.Accept(f.ctx, s.ID, "t1"); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, f.ws, "run.bat"), "echo uno\r\necho two\r\necho three\r\necho 4\r\n"; got != want {
		t.Fatalf("workspace after the accept: %q, want %q", got, want)
	}
}

// A checkpoint diff speaks of the bytes the worktree had: the edit of one
// line of a CRLF file is one line, between checkpoints and against now.
func TestEolAttributesCheckpointDiff(t *testing.T) {
	f := newFixture(t)
	crlf := f.commitBat("echo one\necho two\necho three\n")
	s := f.start(prsm.ModeAuto)
	cp1 := f.turn(s, 1)
	edited := strings.Replace(crlf, "echo two", "echo 2", 1)
	f.tool(s, "t1", "Edit", "run.bat", func(wt string) { write(t, wt, "run.bat", edited) })
	cp2 := f.turn(s, 2)
	for _, other := range []string{cp2.ID, ""} {
		d, err := f.eng.DiffCheckpoints(f.ctx, s.ID, cp1.ID, other)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Files) != 1 || d.Files[0].Added != 1 || d.Files[0].Remove != 1 ||
			!strings.Contains(d.Patch, "-echo two\r\n+echo 2\r\n") || !strings.Contains(d.Patch, " echo one\r\n") {
			t.Fatalf("diff %s..%q: %+v\n%s", cp1.ID, other, d.Files, d.Patch)
		}
	}
	// Back to cp1's bytes by the agent's hand: no difference is left.
	f.tool(s, "t2", "Write", "run.bat", func(wt string) { write(t, wt, "run.bat", crlf) })
	d, err := f.eng.DiffCheckpoints(f.ctx, s.ID, cp1.ID, "")
	if err != nil || len(d.Files) != 0 {
		t.Fatalf("diff after the file is back: %+v %v\n%s", d.Files, err, d.Patch)
	}
}

// commitBat commits run.bat, checked out with CRLF line ends by
// .gitattributes, with the lines of lf; it returns the CRLF content.
func (f *fixture) commitBat(lf string) string {
	f.t.Helper()
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	testgit.Commit(f.t, f.ws, "bat", map[string]string{".gitattributes": "*.bat text eol=crlf\n", "run.bat": crlf})
	if got := testgit.Git(f.t, f.ws, "cat-file", "blob", "HEAD:run.bat"); strings.Contains(got, "\r") {
		f.t.Fatalf("git stored CRLF: %q", got)
	}
	return crlf
}

func derefS(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// A smudge filter that fails once the session runs (git-lfs with its
// object gone, a filter command uninstalled) does not cost the tool call
// its records: the file's base is then the blob git stores, as git reads
// it without the filter, and the other file of the same call is recorded
// and synced as usual.
func TestFailingSmudgeFilter(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		testgit.Git(t, f.ws, "config", "filter.up.clean", "cat")
		testgit.Git(t, f.ws, "config", "filter.up.smudge", "cat")
		testgit.Git(t, f.ws, "config", "filter.up.required", "true")
		testgit.Commit(t, f.ws, "filtered", map[string]string{".gitattributes": "*.dat filter=up\n", "a.dat": "stored\n", "b.txt": "b\n"})
		s := f.start(prsm.ModeAuto)
		testgit.Git(t, f.ws, "config", "filter.up.smudge", "false")
		cp := f.turn(s, 1)
		recs := f.tool(s, "t1", "Bash", "", func(wt string) {
			write(t, wt, "a.dat", "stored\nmore\n")
			write(t, wt, "b.txt", "b2\n")
		})
		if len(recs) != 2 {
			t.Fatalf("records: %+v", recs)
		}
		for _, r := range recs {
			if r.SyncState != prsm.SyncSynced {
				t.Errorf("%s: sync %s", r.RelPath, r.SyncState)
			}
		}
		if r := recs[0]; r.RelPath != "a.dat" || derefS(r.OldContent) != "stored\n" || len(r.AddedRanges) != 1 || r.AddedRanges[0] != (prsm.Range{StartLine: 2, EndLine: 2}) {
			t.Fatalf("a.dat record: %s old %q added %v", r.RelPath, derefS(r.OldContent), r.AddedRanges)
		}
		f.bothHold(s, "a.dat", "stored\nmore\n", "after the edit")
		f.bothHold(s, "b.txt", "b2\n", "after the edit")
		// A rewind past it reads the base the same way.
		if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
			t.Fatal(err)
		}
		f.bothHold(s, "a.dat", "stored\n", "after the rewind")
		f.bothHold(s, "b.txt", "b\n", "after the rewind")
	})
}
