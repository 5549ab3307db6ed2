package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file tool's path in the workspace moves onto the same place in the
// worktree, every other input field kept; a path already in the worktree,
// elsewhere, relative, the workspace root itself or in .git stays.
func TestMoveToolPath(t *testing.T) {
	ws := t.TempDir()
	wt := filepath.Join(t.TempDir(), "projects", "repo-1234abcd", "worktrees", "0123456789ab")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, field, path, want string
	}{
		{"workspace file", "file_path", filepath.Join(ws, "a.txt"), filepath.Join(wt, "a.txt")},
		{"workspace subdir", "file_path", filepath.Join(ws, "sub", "dir", "b.go"), filepath.Join(wt, "sub", "dir", "b.go")},
		{"unclean", "file_path", ws + "/sub/../c.txt", filepath.Join(wt, "c.txt")},
		{"notebook", "notebook_path", filepath.Join(ws, "nb.ipynb"), filepath.Join(wt, "nb.ipynb")},
		{"in the worktree", "file_path", filepath.Join(wt, "a.txt"), ""},
		{"elsewhere", "file_path", "/etc/hosts", ""},
		{"workspace-evil", "file_path", ws + "-evil/a.txt", ""},
		{"relative", "file_path", "a.txt", ""},
		{"workspace root", "file_path", ws, ""},
		{"workspace .git", "file_path", filepath.Join(ws, ".git", "config"), ""},
		{"other field", "path", filepath.Join(ws, "a.txt"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := json.Marshal(map[string]any{tc.field: tc.path, "content": "hi\n", "replace_all": false})
			field := "file_path"
			if tc.field == "notebook_path" {
				field = tc.field
			}
			out, from, to, ok := moveToolPath(in, field, wt, ws)
			if tc.want == "" {
				if ok {
					t.Fatalf("moved %s to %s, want it left alone", from, to)
				}
				return
			}
			if !ok || from != tc.path || to != tc.want {
				t.Fatalf("moved %v: %s -> %s, want %s", ok, from, to, tc.want)
			}
			var m map[string]any
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatal(err)
			}
			if m[field] != tc.want || m["content"] != "hi\n" || m["replace_all"] != false || len(m) != 3 {
				t.Fatalf("updated input %s", out)
			}
		})
	}
}

// The answer has the shape Claude Code 2.1.328 reads, and allows the moved
// call only in the modes that edit without asking.
func TestClaudeMoveAnswer(t *testing.T) {
	for mode, want := range map[string]string{"bypassPermissions": "allow", "acceptEdits": "allow", "default": "ask", "plan": "ask", "": "ask"} {
		p := &claudePayload{ToolName: "Write", PermissionMode: mode, ToolInput: json.RawMessage(`{"file_path":"/wt/a.txt","content":"x"}`)}
		b, err := json.Marshal(claudeMoveAnswer(p, "/ws/a.txt", "/wt/a.txt"))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			HookSpecificOutput struct {
				HookEventName, PermissionDecision, PermissionDecisionReason string
				UpdatedInput                                                map[string]string
			}
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		h := got.HookSpecificOutput
		if h.HookEventName != "PreToolUse" || h.PermissionDecision != want || h.UpdatedInput["file_path"] != "/wt/a.txt" || h.PermissionDecisionReason == "" {
			t.Errorf("mode %q: answer %s, want %s with the moved input", mode, b, want)
		}
	}
}

// Background work in flight is a Stop's background_tasks entry that has
// not ended; no list, an empty one or one prsm cannot read is none.
func TestClaudeBackgroundRunning(t *testing.T) {
	for tasks, want := range map[string]bool{
		``:   false,
		`[]`: false,
		`[{"id":"a","type":"subagent","status":"running","description":"d","agent_type":"general-purpose"}]`: true,
		`[{"id":"b","type":"shell","status":"pending","description":"d","command":"make"}]`:                  true,
		`[{"id":"a","status":"completed"},{"id":"b","status":"failed"},{"id":"c","status":"killed"}]`:        false,
		`[{"id":"a","status":"completed"},{"id":"b","status":"paused"}]`:                                     true,
		`{"running":1}`: false,
		`null`:          false,
	} {
		p := &claudePayload{HookEventName: "Stop", BackgroundTasks: json.RawMessage(tasks)}
		if got := p.backgroundRunning(); got != want {
			t.Errorf("background_tasks %s: running %v, want %v", tasks, got, want)
		}
		call, err := p.call()
		if err != nil || (call == nil) != want {
			t.Errorf("background_tasks %s: call %+v %v, want a turn end: %v", tasks, call, err, !want)
		}
	}
}

// A workspace path whose place in the worktree leads out of it through a
// symbolic link (a linked directory, a linked file, a link to nowhere
// yet) is never allowed by prsm: the answer carries no decision and no
// moved input, only the reason, and Claude Code decides as it would
// without prsm. A link that stays inside the worktree moves as any path.
func TestMoveIntoLeavesWorktreeBySymlink(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir() // ~/.ssh, say
	wt := filepath.Join(t.TempDir(), "projects", "repo-1234abcd", "worktrees", "0123456789ab")
	for _, d := range []string{wt, filepath.Join(wt, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "authorized_keys"), []byte("ssh-ed25519 AAAA me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"evil":       outside,                                   // a directory elsewhere
		"keys":       filepath.Join(outside, "authorized_keys"), // a file elsewhere
		"later":      filepath.Join(outside, "not-yet"),         // nothing there yet
		"up":         "../../../../../..",                       // relative, climbing out
		"inside":     "sub",                                     // a directory of the worktree
		"chain":      "evil",                                    // a link to a link that leaves
		"insidefile": filepath.Join(wt, "sub", "f.txt"),         // a file of the worktree
	} {
		if err := os.Symlink(target, filepath.Join(wt, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		rel   string
		leave bool
	}{
		{"evil/authorized_keys", true},
		{"keys", true},
		{"later", true},
		{"up/x.txt", true},
		{"chain/authorized_keys", true},
		{"inside/x.txt", false},
		{"insidefile", false},
		{"plain.txt", false},
	} {
		for _, mode := range []string{"acceptEdits", "bypassPermissions", "default"} {
			from := filepath.Join(ws, tc.rel)
			p := &claudePayload{HookEventName: "PreToolUse", ToolName: "Write", PermissionMode: mode, Cwd: wt,
				ToolInput: json.RawMessage(`{"file_path":` + string(mustJSON(t, from)) + `,"content":"ssh-ed25519 EVIL\n"}`)}
			ans := claudeMoveInto(p, wt, []string{ws})
			if ans == nil {
				t.Fatalf("%s (%s): no answer", tc.rel, mode)
			}
			b, _ := json.Marshal(ans)
			var got struct {
				HookSpecificOutput map[string]any `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			h := got.HookSpecificOutput
			reason, _ := h["permissionDecisionReason"].(string)
			if !tc.leave {
				if h["permissionDecision"] == nil || h["updatedInput"] == nil {
					t.Errorf("%s (%s): %s, want the path moved", tc.rel, mode, b)
				}
				continue
			}
			if _, ok := h["permissionDecision"]; ok {
				t.Errorf("%s (%s): answer %s decides; a path out of the worktree is Claude Code's to decide", tc.rel, mode, b)
			}
			if _, ok := h["updatedInput"]; ok {
				t.Errorf("%s (%s): answer %s moves the path out of the worktree", tc.rel, mode, b)
			}
			if h["hookEventName"] != "PreToolUse" || !strings.Contains(reason, "symbolic link") || !strings.Contains(reason, from) {
				t.Errorf("%s (%s): reason %q, want it to say why", tc.rel, mode, reason)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "authorized_keys")); err != nil || string(b) != "ssh-ed25519 AAAA me\n" {
		t.Fatalf("authorized_keys %q %v", b, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
