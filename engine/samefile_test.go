package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testgit"
)

// TestSameFileAtScale: 4 sessions edit different regions of one 2,000-line
// file at once (line edits, insertions, deletions), each change applied to
// the workspace by a 3-way merge with the others'. The workspace ends equal,
// byte for byte, to the merge of all four; rejecting every change of one
// session puts its region back as it was and leaves the other three intact.
// The short form makes 30 edits per session; PRSM_SAMEFILE=full makes 200.
func TestSameFileAtScale(t *testing.T) {
	edits := 30
	if os.Getenv("PRSM_SAMEFILE") == "full" {
		edits = 200
	}
	const nSessions, regionLines = 4, 500
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	eng, ws := newEngine(t)
	ctx := context.Background()
	// The model: each region's lines. A region's first and last 20 lines
	// are never edited, so two sessions' changes never touch (adjacent
	// changes would be a merge conflict, as in git).
	base := make([][]string, nSessions)
	for k := range base {
		for j := 1; j <= regionLines; j++ {
			base[k] = append(base[k], fmt.Sprintf("region %d line %d\n", k, j))
		}
	}
	join := func(regions [][]string) string {
		var b strings.Builder
		for _, r := range regions {
			for _, l := range r {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	testgit.Write(t, ws, "big.txt", join(base), 0o644)
	testgit.Git(t, ws, "add", "-A")
	testgit.Git(t, ws, "commit", "-qm", "big")

	sessions := make([]*prsm.Session, nSessions)
	for k := range sessions {
		s, err := eng.StartSession(ctx, api.StartRequest{Name: fmt.Sprintf("region-%d", k)})
		if err != nil {
			t.Fatal(err)
		}
		sessions[k] = s
	}
	final := make([][]string, nSessions)
	var wg stdsync.WaitGroup
	errs := make(chan error, nSessions)
	start := time.Now()
	for k, s := range sessions {
		wg.Add(1)
		go func(k int, s *prsm.Session) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(k)))
			region := append([]string(nil), base[k]...)
			for n := 0; n < edits; n++ {
				// An interior line: replaced, or a line inserted after it,
				// or (while the region is not too small) deleted.
				i := 20 + rng.IntN(len(region)-40)
				switch op := rng.IntN(4); {
				case op == 0:
					region = append(region[:i+1], append([]string{fmt.Sprintf("session %d inserted %d\n", k, n)}, region[i+1:]...)...)
				case op == 1 && len(region) > 100:
					region = append(region[:i], region[i+1:]...)
				default:
					region[i] = fmt.Sprintf("session %d edit %d of line %d\n", k, n, i)
				}
				// The session's worktree file: the base with its region
				// changed (it never sees the others' regions change).
				regions := append([][]string(nil), base...)
				regions[k] = region
				id := fmt.Sprintf("r%d-%d", k, n)
				p := filepath.Join(s.WorktreePath, "big.txt")
				args, _ := json.Marshal(map[string]string{"file_path": p})
				if _, err := eng.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: args}); err != nil {
					errs <- fmt.Errorf("start %s: %w", id, err)
					return
				}
				if err := os.WriteFile(p, []byte(join(regions)), 0o644); err != nil {
					errs <- err
					return
				}
				res, err := eng.CompleteToolCall(ctx, s.ID, id, api.CompleteRequest{})
				if err != nil {
					errs <- fmt.Errorf("complete %s: %w", id, err)
					return
				}
				if len(res.Records) != 1 || res.Records[0].SyncState != prsm.SyncSynced {
					errs <- fmt.Errorf("complete %s: records %s", id, summary(res.Records))
					return
				}
			}
			final[k] = region
		}(k, s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d sessions x %d edits of one %d-line file in %s", nSessions, edits, nSessions*regionLines, time.Since(start).Round(time.Millisecond))

	want := join(final)
	if got := read(t, ws, "big.txt"); got != want {
		t.Fatalf("workspace is not the merge of the four sessions:\n%s", firstDiff(got, want))
	}
	// Reject every change of one session: its region goes back, the
	// others' edits stay byte for byte.
	const victim = 2
	res, err := eng.Bulk(ctx, sessions[victim].ID, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) == 0 {
		t.Fatal("reject-all rejected nothing")
	}
	all, err := eng.Records(ctx, sessions[victim].ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Status != prsm.StatusRejected || r.SyncState != prsm.SyncSynced {
			t.Errorf("%s after reject-all: %s/%s", r.ID, r.Status, r.SyncState)
		}
	}
	after := append([][]string(nil), final...)
	after[victim] = base[victim]
	if got, want := read(t, ws, "big.txt"), join(after); got != want {
		t.Fatalf("workspace after rejecting session %d:\n%s", victim, firstDiff(got, want))
	}
	if got := read(t, sessions[victim].WorktreePath, "big.txt"); got != join(base) {
		t.Errorf("session %d's worktree not back to its base:\n%s", victim, firstDiff(got, join(base)))
	}
	for k, s := range sessions {
		if k == victim {
			continue
		}
		recs, _ := eng.Records(ctx, s.ID, prsm.StatusPending, "")
		if len(recs) != edits {
			t.Errorf("session %d: %d pending records, want %d", k, len(recs), edits)
		}
	}
}

// firstDiff names the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: got %q, want %q (%d vs %d lines)", i+1, a, b, len(g), len(w))
		}
	}
	return "equal"
}
