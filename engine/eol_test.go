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
// the workspace.
func TestEolAttributesEditOneLine(t *testing.T) { testEolAttributes(t, false) }

// Known and not fixed: a rewind to a checkpoint taken while the file was
// as git checked it out writes the checkpoint tree's blob, which git
// stored with LF, so the file comes back with LF line ends. The checkpoint
// tree cannot tell that blob from the same bytes written by the agent (an
// agent that turned the file into LF), so converting it on the way out is
// not right either; the fix needs the tracker's known state at the
// checkpoint.
func TestEolAttributesRewind(t *testing.T) {
	t.Skip("known: a rewind writes the stored (LF) blob of a file the checkpoint had as git checked it out")
	testEolAttributes(t, true)
}

func testEolAttributes(t *testing.T, rewindConverts bool) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		lf := "echo one\necho two\necho three\n"
		crlf := strings.ReplaceAll(lf, "\n", "\r\n")
		testgit.Write(t, f.ws, ".gitattributes", "*.bat text eol=crlf\n", 0o644)
		testgit.Write(t, f.ws, "run.bat", crlf, 0o644)
		testgit.Git(t, f.ws, "add", "-A")
		testgit.Git(t, f.ws, "commit", "-qm", "bat")
		if got := testgit.Git(t, f.ws, "cat-file", "blob", "HEAD:run.bat"); strings.Contains(got, "\r") {
			t.Fatalf("git stored CRLF: %q", got)
		}
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
		if !rewindConverts {
			return
		}
		// A rewind to before the edit brings back the file as git checked
		// it out, CRLF and all.
		if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
			t.Fatal(err)
		}
		f.bothHold(s, "run.bat", crlf, "after the rewind")
	})
}

func derefS(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
