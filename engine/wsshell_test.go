package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// A shell command that writes to the workspace's own path (not the
// worktree's) is seen at its complete: the file comes into the session's
// worktree, is recorded under the call (tool Bash, a :N id, a note that
// says so), and is reviewed like any change. In auto mode the workspace
// keeps it and a reject puts the old bytes back; in review mode the
// workspace goes back to what it held until the change is accepted.
func TestShellWriteToWorkspacePath(t *testing.T) {
	for _, mode := range []string{prsm.ModeAuto, prsm.ModeReview} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			s := f.start(mode)
			base := read(t, f.ws, "f.txt")
			edited := base + "appended by the shell\n"
			cmd := "echo new > " + filepath.Join(f.ws, "new.txt") + " && echo 'appended by the shell' >> " + filepath.Join(f.ws, "f.txt")
			args, _ := json.Marshal(map[string]string{"command": cmd})
			if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "sh1", ToolName: "Bash", Args: args, Cwd: s.WorktreePath, AgentID: "claude"}); err != nil {
				t.Fatal(err)
			}
			// The command runs: into the workspace.
			write(t, f.ws, "new.txt", "new\n")
			write(t, f.ws, "f.txt", edited)
			recs := f.complete(s, "sh1")
			got := map[string]*prsm.Record{}
			for _, r := range recs {
				got[r.RelPath] = r
			}
			for _, rel := range []string{"new.txt", "f.txt"} {
				r := got[rel]
				if r == nil {
					t.Fatalf("no record of %s: %+v", rel, recs)
				}
				if r.ToolName != "Bash" || !strings.HasPrefix(r.ID, "sh1:") || !strings.Contains(r.Note, "workspace") {
					t.Fatalf("record of %s: id %s tool %s note %q", rel, r.ID, r.ToolName, r.Note)
				}
			}
			if got["new.txt"].ChangeType != prsm.ChangeCreate || got["f.txt"].ChangeType != prsm.ChangeModify {
				t.Fatalf("change types: %s %s", got["new.txt"].ChangeType, got["f.txt"].ChangeType)
			}
			// The worktree holds the agent's bytes either way.
			if read(t, s.WorktreePath, "new.txt") != "new\n" || read(t, s.WorktreePath, "f.txt") != edited {
				t.Fatal("the worktree lacks the shell's writes")
			}
			if mode == prsm.ModeAuto {
				if read(t, f.ws, "f.txt") != edited {
					t.Fatal("auto mode: the workspace lost the change")
				}
				if _, err := f.eng.Reject(f.ctx, s.ID, got["f.txt"].ID); err != nil {
					t.Fatal(err)
				}
				if _, err := f.eng.Reject(f.ctx, s.ID, got["new.txt"].ID); err != nil {
					t.Fatal(err)
				}
				if read(t, f.ws, "f.txt") != base {
					t.Fatalf("reject: f.txt is %q", read(t, f.ws, "f.txt"))
				}
				if _, err := os.Lstat(filepath.Join(f.ws, "new.txt")); !os.IsNotExist(err) {
					t.Fatalf("reject: new.txt still there (%v)", err)
				}
				return
			}
			// Review mode: out of the workspace until accepted.
			if read(t, f.ws, "f.txt") != base {
				t.Fatalf("review mode: f.txt in the workspace is %q before any accept", read(t, f.ws, "f.txt"))
			}
			if _, err := os.Lstat(filepath.Join(f.ws, "new.txt")); !os.IsNotExist(err) {
				t.Fatalf("review mode: new.txt in the workspace before any accept (%v)", err)
			}
			if got["f.txt"].Status != prsm.StatusPending {
				t.Fatalf("review mode: status %s", got["f.txt"].Status)
			}
			if _, err := f.eng.Accept(f.ctx, s.ID, got["f.txt"].ID); err != nil {
				t.Fatal(err)
			}
			if read(t, f.ws, "f.txt") != edited {
				t.Fatalf("accept: f.txt is %q", read(t, f.ws, "f.txt"))
			}
		})
	}
}

// A workspace file the command names but does not change, and one the
// user changed meanwhile that the command does not name, are not
// recorded.
func TestShellWorkspacePathUnchanged(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	cmd := "cat " + filepath.Join(f.ws, "f.txt") + " > /dev/null; touch " + filepath.Join(f.ws, "f.txt")
	args, _ := json.Marshal(map[string]string{"command": cmd})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "sh2", ToolName: "Bash", Args: args, Cwd: s.WorktreePath}); err != nil {
		t.Fatal(err)
	}
	write(t, f.ws, "user.txt", "the user's own\n")
	if recs := f.complete(s, "sh2"); len(recs) != 0 {
		t.Fatalf("records: %+v", recs)
	}
	if _, err := os.Lstat(filepath.Join(s.WorktreePath, "user.txt")); !os.IsNotExist(err) {
		t.Fatalf("the user's file came into the worktree (%v)", err)
	}
}

// An edit tool whose input names the workspace's own path (an agent whose
// tool input no hook rewrites) is recorded the same way: its file comes
// into the worktree and is reviewed; so are the files of a patch.
func TestEditToWorkspacePath(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeReview)
	base := read(t, f.ws, "f.txt")
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(f.ws, "f.txt")})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "w1", ToolName: "write_file", Args: args, Cwd: s.WorktreePath}); err != nil {
		t.Fatal(err)
	}
	write(t, f.ws, "f.txt", "rewritten in the workspace\n")
	recs := f.complete(s, "w1")
	if len(recs) != 1 || recs[0].RelPath != "f.txt" || recs[0].ID != "w1" || recs[0].ToolName != "Write" || !strings.Contains(recs[0].Note, "workspace") {
		t.Fatalf("records: %+v", recs)
	}
	if read(t, f.ws, "f.txt") != base || read(t, s.WorktreePath, "f.txt") != "rewritten in the workspace\n" {
		t.Fatal("review mode: the write is not moved into the worktree")
	}

	patch := "*** Begin Patch\n*** Add File: " + filepath.Join(f.ws, "p.txt") + "\n+patched\n*** End Patch\n"
	args, _ = json.Marshal(map[string]string{"command": patch})
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "p1", ToolName: "apply_patch", Args: args, Cwd: s.WorktreePath}); err != nil {
		t.Fatal(err)
	}
	write(t, f.ws, "p.txt", "patched\n")
	recs = f.complete(s, "p1")
	if len(recs) != 1 || recs[0].RelPath != "p.txt" || recs[0].ChangeType != prsm.ChangeCreate {
		t.Fatalf("patch records: %+v", recs)
	}
	if _, err := os.Lstat(filepath.Join(f.ws, "p.txt")); !os.IsNotExist(err) {
		t.Fatalf("review mode: p.txt in the workspace (%v)", err)
	}
}
