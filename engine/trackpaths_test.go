package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testgit"
)

func TestMissedPreCaptureAndBadPaths(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	write(t, s.WorktreePath, "f.txt", "rewritten\n")
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "late1", api.CompleteRequest{ToolName: "write_file"})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(res.Records); got != "late1 modify f.txt pending/synced" || res.Records[0].ToolName != "Write" {
		t.Fatalf("missed capture: %s", got)
	}
	if *res.Records[0].OldContent != lines(20, "") {
		t.Errorf("base not used as old content")
	}
	// An args path outside the worktree is never read; nothing is recorded.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	write(t, filepath.Dir(outside), "secret.txt", "secret\n")
	for i, p := range []string{outside, "../../../../etc/passwd", filepath.Join(s.WorktreePath, "..", "x")} {
		args, _ := json.Marshal(map[string]string{"file_path": p})
		id := fmt.Sprintf("o%d", i)
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Write", Args: args}); err != nil {
			t.Fatal(err)
		}
		res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
		if err != nil || len(res.Records) != 0 {
			t.Errorf("%s: %v %s", p, err, summary(res.Records))
		}
	}
	for _, id := range []string{"", "a/b", "x:1", strings.Repeat("x", 200), "a b"} {
		if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id}); err == nil {
			t.Errorf("tool call id %q accepted", id)
		}
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "nosuch"); err == nil {
		t.Errorf("unknown record rejected")
	}
}

func TestSymlinksAreNeverWrittenThrough(t *testing.T) {
	f := newFixture(t)
	testgit.Symlink(t, f.ws, "link", "f.txt")
	testgit.Write(t, f.ws, "dir/x.txt", "x\n", 0o644)
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "link")
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	// The agent replaces the symlink with a file: the workspace link is
	// replaced, its target untouched.
	recs := f.tool(s, "l1", "Bash", "", func(wt string) { sh(t, wt, "rm link && echo data > link") })
	if got := summary(recs); got != "l1:0 modify link pending/synced" || recs[0].ModeBefore != 0o120000 || recs[0].ModeAfter != 0o100644 {
		t.Fatalf("records %s modes %o %o", got, recs[0].ModeBefore, recs[0].ModeAfter)
	}
	if fi, err := os.Lstat(filepath.Join(f.ws, "link")); err != nil || !fi.Mode().IsRegular() || read(t, f.ws, "link") != "data\n" {
		t.Errorf("workspace link not replaced: %v %v", fi.Mode(), err)
	}
	if read(t, f.ws, "f.txt") != base {
		t.Errorf("write went through the link")
	}
	// The user swaps a directory for a symlink pointing outside; the agent's
	// edit of a file in it must not land outside.
	outside := t.TempDir()
	write(t, outside, "x.txt", "outside\n")
	if err := os.RemoveAll(filepath.Join(f.ws, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.ws, "dir")); err != nil {
		t.Fatal(err)
	}
	recs = f.tool(s, "l2", "Edit", "dir/x.txt", func(wt string) { write(t, wt, "dir/x.txt", "agent\n") })
	if len(recs) != 1 || recs[0].SyncState != prsm.SyncConflict {
		t.Fatalf("records: %s", summary(recs))
	}
	if read(t, outside, "x.txt") != "outside\n" {
		t.Fatalf("wrote outside the workspace")
	}
	// An agent symlink pointing outside is recorded as a link (its target),
	// never followed.
	recs = f.tool(s, "l3", "Bash", "", func(wt string) { sh(t, wt, "ln -s /etc/passwd pw") })
	if len(recs) != 1 || *recs[0].NewContent != "/etc/passwd" || recs[0].ModeAfter != 0o120000 {
		t.Fatalf("records: %s", summary(recs))
	}
	if target, err := os.Readlink(filepath.Join(f.ws, "pw")); err != nil || target != "/etc/passwd" {
		t.Errorf("workspace link: %q %v", target, err)
	}
}

func TestHugeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB file")
	}
	f := newFixture(t)
	s := f.start("")
	big := make([]byte, 100<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>13)
	}
	recs := f.tool(s, "h1", "Write", "big.bin", func(wt string) {
		if err := os.WriteFile(filepath.Join(wt, "big.bin"), big, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if len(recs) != 1 || !recs[0].Binary || recs[0].SizeAfter != int64(len(big)) || recs[0].NewContent != nil {
		t.Fatalf("record: %s", summary(recs))
	}
	got, err := os.ReadFile(filepath.Join(f.ws, "big.bin"))
	if err != nil || len(got) != len(big) || string(got[len(got)-100:]) != string(big[len(big)-100:]) || string(got) != string(big) {
		t.Fatalf("workspace copy differs (%d bytes, %v)", len(got), err)
	}
	if _, err := f.eng.Reject(f.ctx, s.ID, "h1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "big.bin")); !os.IsNotExist(err) {
		t.Errorf("big file not removed on reject")
	}
}

// TestPathThroughLinkedDirectory: a path through a symlinked directory of
// the worktree (lib -> src) is never read or handed to git (which refuses
// the whole batch); the change is recorded at the file's real path.
func TestPathThroughLinkedDirectory(t *testing.T) {
	f := newFixture(t)
	testgit.Write(t, f.ws, "src/a.txt", "a\n", 0o644)
	testgit.Symlink(t, f.ws, "lib", "src")
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "linked dir")
	s := f.start("")
	args, _ := json.Marshal(map[string]string{"command": "echo x > lib/new.txt && echo b >> lib/a.txt"})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "b1", ToolName: "Bash", Args: args}); err != nil {
		t.Fatalf("capture: %v", err)
	}
	sh(t, s.WorktreePath, "echo x > lib/new.txt && echo b >> lib/a.txt")
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "b1", api.CompleteRequest{})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	if got := summary(res.Records); got != "b1:0 modify src/a.txt pending/synced\nb1:1 create src/new.txt pending/synced" {
		t.Fatalf("records:\n%s", got)
	}
	// An Edit naming the file through the link.
	args, _ = json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, "lib/a.txt")})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "e1", ToolName: "Edit", Args: args}); err != nil {
		t.Fatalf("capture: %v", err)
	}
	write(t, s.WorktreePath, "src/a.txt", "edited\n")
	res, err = f.eng.CompleteToolCall(f.ctx, s.ID, "e1", api.CompleteRequest{})
	if err != nil || summary(res.Records) != "e1 modify src/a.txt pending/synced" {
		t.Fatalf("edit through the link: %v\n%s", err, summary(res.Records))
	}
	if got := read(t, f.ws, "src/a.txt"); got != "edited\n" {
		t.Fatalf("workspace: %q", got)
	}
}

// TestDotToolCallIDs: "." and ".." would vanish from the URLs that name a
// record; they are refused.
func TestDotToolCallIDs(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	for _, id := range []string{".", "..", "..."} {
		_, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit"})
		if !errors.Is(err, prsm.ErrInvalid) {
			t.Errorf("tool_call_id %q: %v", id, err)
		}
	}
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: ".x.", ToolName: "Edit"}); err != nil {
		t.Errorf("tool_call_id .x.: %v", err)
	}
}
