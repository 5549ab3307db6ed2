package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
)

// Codex's apply_patch carries its files in the patch, not in a path
// argument: every file its header lines name (added, updated, deleted,
// moved to) is a candidate of the pre-tool capture, so a file changed
// before the tool runs, and not yet seen, keeps its pre-tool content. A
// path outside the worktree is never one.
func TestApplyPatchCapturesNamedFiles(t *testing.T) {
	eng, _ := newEngine(t)
	ctx := context.Background()
	s, err := eng.StartSession(ctx, api.StartRequest{Name: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.txt", "gone.txt", "old.txt", "dest.txt"} {
		if err := os.WriteFile(filepath.Join(s.WorktreePath, f), []byte("changed before the tool\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: new.txt\n+n\n" +
		"*** Delete File: " + filepath.Join(s.WorktreePath, "gone.txt") + "\n" +
		"*** Update File: old.txt\n*** Move to: dest.txt\n@@\n-x\n+y\n" +
		"*** Update File: " + outside + "\n@@\n-x\n+y\n*** End Patch\n"
	args, err := json.Marshal(map[string]string{"command": patch})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := eng.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: "call_patch1", ToolName: "apply_patch", Args: args, Cwd: s.WorktreePath})
	if err != nil {
		t.Fatal(err)
	}
	if ans.ToolName != "Edit" || ans.Candidates != 4 {
		t.Fatalf("capture = %+v, want Edit with 4 candidates (a, gone, old, dest)", ans)
	}
	// Its checkpoint is named by the patch's files, not its text.
	engine.Settle(eng)
	cps, err := eng.Checkpoints(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) == 0 || !strings.HasPrefix(cps[len(cps)-1].Name, "before Edit: a.txt, new.txt, /") {
		t.Fatalf("checkpoints %+v, want the last one named by the patch's files", cps)
	}
	// Not a patch: no candidates from "command" (once the patch, whose
	// files every capture looks at while it is open, is closed).
	if _, err := eng.EndTurn(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	args, _ = json.Marshal(map[string]string{"command": "*** Update File: a.txt"})
	ans, err = eng.StartToolCall(ctx, s.ID, api.ToolCallRequest{ToolCallID: "call_notpatch", ToolName: "apply_patch", Args: args, Cwd: s.WorktreePath})
	if err != nil || ans.Candidates != 0 {
		t.Fatalf("capture of a non-patch = %+v %v, want no candidates", ans, err)
	}
}
