package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

func TestTwoSessionsSameFile(t *testing.T) {
	f := newFixture(t)
	a, b := f.start(""), f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(a, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 2, "session a")) })
	f.tool(b, "b1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 17, "session b")) })
	both := replaceLine(replaceLine(base, 2, "session a"), 17, "session b")
	if got := read(t, f.ws, "f.txt"); got != both {
		t.Fatalf("both sessions not merged:\n%s", got)
	}
	if _, err := f.eng.Reject(f.ctx, a.ID, "a1"); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 17, "session b"); got != want {
		t.Errorf("reject of a dropped b's edit:\n%s", got)
	}
	// Global accept-all accepts b's change.
	res, err := f.eng.BulkAll(f.ctx, true)
	if err != nil || summary(res.Records) != "b1 modify f.txt accepted/synced" {
		t.Errorf("accept everywhere: %v %s", err, summary(res.Records))
	}
}

// TestConcurrentCompletesAndRejects runs many goroutines against one file:
// no update is lost and the final workspace agrees with the records.
func TestConcurrentCompletesAndRejects(t *testing.T) {
	f := newFixture(t)
	sessions := []*prsm.Session{f.start(""), f.start(""), f.start(""), f.start("")}
	var wg stdsync.WaitGroup
	const per = 6
	for si, s := range sessions {
		for w := 0; w < 1; w++ {
			wg.Add(1)
			go func(si, w int, s *prsm.Session) {
				defer wg.Done()
				for i := 0; i < per; i++ {
					id := fmt.Sprintf("s%dw%di%d", si, w, i)
					file := fmt.Sprintf("w%d-%d.txt", w, i)
					if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Write"}); err != nil {
						t.Error(err)
						return
					}
					// Each session edits its own line of the shared file, and its own new files.
					line := 1 + si*5 + i%4
					p := filepath.Join(s.WorktreePath, "f.txt")
					cur, _ := os.ReadFile(p)
					os.WriteFile(p, []byte(replaceLine(string(cur), line, id)), 0o644)
					os.WriteFile(filepath.Join(s.WorktreePath, fmt.Sprintf("s%d-%s", si, file)), []byte(id), 0o644)
					res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
					if err != nil {
						t.Error(err)
						continue
					}
					if i%3 == 2 && len(res.Records) > 0 {
						if _, err := f.eng.Reject(f.ctx, s.ID, res.Records[0].ID); err != nil {
							t.Error(err)
						}
					}
				}
			}(si, w, s)
		}
	}
	wg.Wait()
	// Every session's worktree state must be reflected in the workspace for
	// the files it created and for its lines of the shared file, and no
	// record may be lost or duplicated.
	ws := strings.SplitAfter(read(t, f.ws, "f.txt"), "\n")
	for si, s := range sessions {
		wt := strings.SplitAfter(read(t, s.WorktreePath, "f.txt"), "\n")
		for l := 1 + si*5; l <= 4+si*5; l++ {
			if ws[l-1] != wt[l-1] {
				t.Errorf("session %d line %d: workspace %q, worktree %q", si, l, ws[l-1], wt[l-1])
			}
		}
		recs, err := f.eng.Records(f.ctx, s.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range recs {
			if seen[r.ID] {
				t.Errorf("duplicate record %s", r.ID)
			}
			seen[r.ID] = true
		}
		entries, _ := os.ReadDir(s.WorktreePath)
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, fmt.Sprintf("s%d-", si)) {
				continue
			}
			if got := read(t, f.ws, name); got != read(t, s.WorktreePath, name) {
				t.Errorf("%s: workspace %q worktree %q", name, got, read(t, s.WorktreePath, name))
			}
		}
	}
}

// TestRejectEverywhere: global reject-all takes every pending change of
// every session out of the workspace and the worktrees, by reverse merge
// (a user edit made meanwhile stays), and leaves accepted ones alone.
func TestRejectEverywhere(t *testing.T) {
	f := newFixture(t)
	a, b := f.start(""), f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(a, "a1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 2, "session a")) })
	f.tool(a, "a2", "Write", "new-a.txt", func(wt string) { write(t, wt, "new-a.txt", "from a\n") })
	f.tool(b, "b1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 17, "session b")) })
	f.tool(b, "b2", "Edit", "keep.txt", func(wt string) { write(t, wt, "keep.txt", "kept by b\n") })
	if _, err := f.eng.Accept(f.ctx, b.ID, "b2"); err != nil {
		t.Fatal(err)
	}
	// The user edits line 10 of the shared file meanwhile.
	user := replaceLine(read(t, f.ws, "f.txt"), 10, "the user's line")
	write(t, f.ws, "f.txt", user)

	res, err := f.eng.BulkAll(f.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(res.Records); got != "a1 modify f.txt rejected/synced\na2 create new-a.txt rejected/synced\nb1 modify f.txt rejected/synced" {
		t.Fatalf("reject everywhere:\n%s", got)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 10, "the user's line"); got != want {
		t.Errorf("workspace f.txt:\n%s\nwant only the user's edit left:\n%s", got, want)
	}
	if exists(f.ws, "new-a.txt") {
		t.Errorf("a's created file is still in the workspace")
	}
	if got := read(t, f.ws, "keep.txt"); got != "kept by b\n" {
		t.Errorf("the accepted change was undone: %q", got)
	}
	for _, s := range []*prsm.Session{a, b} {
		if got := read(t, s.WorktreePath, "f.txt"); got != base {
			t.Errorf("worktree of %s still has its change:\n%s", s.Name, got)
		}
	}
	if exists(a.WorktreePath, "new-a.txt") {
		t.Errorf("a's created file is still in its worktree")
	}
	// Repeating is a no-op.
	if res, err := f.eng.BulkAll(f.ctx, false); err != nil || len(res.Records) != 0 {
		t.Errorf("second reject everywhere: %v %s", err, summary(res.Records))
	}
}
