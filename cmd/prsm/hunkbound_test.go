//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// shell plays an agent's Bash call up to its complete: the capture, then
// command run in the session's worktree.
func (h *harness) shell(s *prsm.Session, id, command string) {
	h.t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command})
	if _, err := h.client().StartToolCall(context.Background(), s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Bash", Args: args, Cwd: s.WorktreePath}); err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = s.WorktreePath
	if out, err := cmd.CombinedOutput(); err != nil {
		h.t.Fatalf("%s: %v\n%s", command, err, out)
	}
}

// bash plays an agent's whole Bash call: shell, then its complete.
func (h *harness) bash(s *prsm.Session, id, command string) *api.Records {
	h.t.Helper()
	h.shell(s, id, command)
	recs, err := h.client().CompleteToolCall(context.Background(), s.ID, id, api.CompleteRequest{})
	if err != nil {
		h.t.Fatal(err)
	}
	return recs
}

// maxDiffRSS bounds the server's peak resident size through the issue's
// pathological diff (issue 42: 'a\nb\n' written, then every b changed,
// took the server past 4 GB, and again at each start). It is the stated
// bound of what an agent's file may add (256 MB) over a server's own
// size; the race detector's shadow memory, in CI, fits in it too.
const maxDiffRSS = 256<<20 + 64<<20

// TestPathologicalDiffThroughServer is the reproduction on the
// real server (this binary as `prsm serve`), scaled to seconds: an
// agent's Bash writes "a\nb\n" 300,000 times (600,000 lines), then sed
// changes every b. The record is one hunk of the whole file with a note,
// the workspace gets it byte for byte, and the server stays under its
// bound; then the server is killed while a second sed's call is open,
// and the next start closes that call within the same bound; a reject
// of the first sed restores the file byte for byte.
func TestPathologicalDiffThroughServer(t *testing.T) {
	if testing.Short() {
		t.Skip("megabytes of pathological diff")
	}
	const pairs = 300_000
	v := func(mid string) string { return strings.Repeat("a\n"+mid+"\n", pairs) }
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	s, err := h.client().StartSession(ctx, api.StartRequest{Name: "diff"})
	if err != nil {
		t.Fatal(err)
	}
	wantWorkspace := func(want, when string) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(h.ws, "alt.txt"))
		if err != nil || !bytes.Equal(got, []byte(want)) {
			t.Fatalf("%s: the workspace's alt.txt has %d bytes (%v), want %d", when, len(got), err, len(want))
		}
	}
	peak := func(when string) {
		t.Helper()
		h.mu.Lock()
		pid := h.cmd.Process.Pid
		h.mu.Unlock()
		rss := peakRSS(t, pid)
		t.Logf("%s: server peak RSS %d MB", when, rss>>20)
		if rss > maxDiffRSS {
			t.Errorf("%s: server peak RSS %d MB, over %d MB", when, rss>>20, maxDiffRSS>>20)
		}
	}

	h.bash(s, "t1", `python3 -c "open('alt.txt','w').write('a\nb\n'*300000)" || printf 'a\nb\n%.0s' $(seq 300000) > alt.txt`)
	wantWorkspace(v("b"), "written")
	recs := h.bash(s, "t2", `sed -i 's/^b$/c/' alt.txt`)
	if len(recs.Records) != 1 {
		t.Fatalf("records of the sed: %+v", len(recs.Records))
	}
	r := recs.Records[0]
	if len(r.Hunks) != 1 || r.Hunks[0].OldLines != 2*pairs || r.Hunks[0].NewLines != 2*pairs ||
		len(r.AddedRanges) != 1 || len(r.RemovedRanges) != 1 || !strings.Contains(r.Note, "one hunk of the whole file") {
		t.Errorf("record %s: %d hunks, %d+%d ranges, note %q", r.ID, len(r.Hunks), len(r.AddedRanges), len(r.RemovedRanges), r.Note)
	}
	wantWorkspace(v("c"), "after the sed")
	d, err := h.client().Diff(ctx, s.ID, "t2")
	if err != nil || strings.Count(d, "\n@@ ") != 1 {
		t.Errorf("diff of the sed: %d blocks, %v", strings.Count(d, "\n@@ "), err)
	}
	peak("the sed recorded and diffed")

	// Killed while the next sed's call is open: the next start closes it.
	h.shell(s, "t3", `sed -i 's/^c$/d/' alt.txt`)
	h.kill()
	h.start()
	if _, err := h.client().Changes(ctx, s.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	wantWorkspace(v("d"), "after the restart")
	peak("the restart")
	if _, err := h.client().Reject(ctx, s.ID, "t2"); err != nil {
		t.Fatal(err)
	}
	wantWorkspace(v("b"), "after the reject")
	peak("the reject")
	h.stop()
	if b, err := os.ReadFile(h.logPath); err == nil && strings.Contains(string(b), "level=ERROR") {
		t.Errorf("the server logged errors:\n%s", b)
	}
}
