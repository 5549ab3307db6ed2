package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/sync"
)

// secretContent is what the file outside holds; no record, workspace file
// or answer may ever contain it.
const secretContent = "TOP SECRET, outside the workspace\n"

// outsideDir makes a directory outside the workspace and every worktree,
// with one file, and watches it: every later open, read or write of it, by
// anyone, is an event.
func outsideDir(t *testing.T) (dir, secret string, w *accessWatch) {
	t.Helper()
	dir = t.TempDir()
	secret = filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte(secretContent), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, secret, watchAccess(t, dir)
}

// assertUntouched fails unless nothing opened, read, wrote, created or
// removed anything in dir since the watch began, and it holds exactly the
// secret file with its content. Reading it here comes after the check.
func assertUntouched(t *testing.T, dir string, w *accessWatch) {
	t.Helper()
	if ev := w.events(t); len(ev) > 0 {
		t.Errorf("prsm touched the directory outside:\n%s", strings.Join(ev, "\n"))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "secret" {
		t.Errorf("outside directory holds %q, want only secret", names)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "secret")); err != nil || string(b) != secretContent {
		t.Errorf("outside file changed: %q %v", b, err)
	}
	w.events(t) // our own reads above
}

// assertConfined checks, at the end of a test, that no record of s (with
// its contents) holds the outside secret and that nothing outside was
// touched.
func (f *fixture) assertConfined(t *testing.T, s *prsm.Session, out string, w *accessWatch) {
	t.Helper()
	all, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.eng.FillContent(f.ctx, all); err != nil {
		t.Fatal(err)
	}
	noSecret(t, all)
	assertUntouched(t, out, w)
}

// noSecret fails if any record carries the outside file's bytes.
func noSecret(t *testing.T, recs []*prsm.Record) {
	t.Helper()
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "TOP SECRET") {
		t.Errorf("a record holds the outside file's content: %s", b)
	}
}

// TestPathEscapesNeverReadOrWritten plays tool calls whose arguments name
// files outside ("..", an absolute path, a path through the worktree's
// parent), and an agent that plants symlinks pointing outside, to a file
// and to a directory, then works through them. With inotify on the outside
// directory: prsm never opens it, let alone reads or writes it; links are
// recorded and synced as links (their target), never followed. Both with
// the git status scan and with the file watcher.
func TestPathEscapesNeverReadOrWritten(t *testing.T) {
	for _, mode := range []string{"scan", "watcher"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			if mode == "watcher" {
				f.watch()
			}
			out, secret, w := outsideDir(t)
			s := f.start("")
			wt := s.WorktreePath

			// Arguments naming files outside: no record, nothing opened.
			relOut, err := filepath.Rel(wt, secret)
			if err != nil {
				t.Fatal(err)
			}
			for i, args := range []map[string]any{
				{"file_path": relOut},
				{"file_path": secret},
				{"file_path": filepath.Join(wt, "..", "..", filepath.Base(filepath.Dir(out)), filepath.Base(out), "secret")},
				{"notebook_path": secret},
				{"file_path": "../../../../../../../../" + strings.TrimPrefix(secret, "/")},
				{"edits": []map[string]string{{"file_path": secret}}, "file_path": wt + "/f.txt/../" + relOut},
			} {
				b, _ := json.Marshal(args)
				id := "esc" + string(rune('a'+i))
				if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: b, Cwd: wt, AgentID: "claude"}); err != nil {
					t.Logf("start %s: %v", args, err)
				}
				res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
				if err != nil {
					t.Logf("complete %s: %v", args, err)
				} else if len(res.Records) != 0 {
					t.Errorf("%s: records %s", args, summary(res.Records))
				}
			}
			assertUntouched(t, out, w)

			// A symlink to the outside file: recorded as a link, its target
			// as content; the workspace gets the same link.
			recs := f.tool(s, "ln1", "Bash", "", func(wt string) { sh(t, wt, "ln -s '"+secret+"' link") })
			if len(recs) != 1 || recs[0].RelPath != "link" || recs[0].ModeAfter != sync.ModeSymlink ||
				recs[0].NewContent == nil || *recs[0].NewContent != secret || recs[0].SizeAfter != int64(len(secret)) || recs[0].Binary {
				t.Fatalf("link record: %s %+v", summary(recs), recs)
			}
			if target, err := os.Readlink(filepath.Join(f.ws, "link")); err != nil || target != secret {
				t.Errorf("workspace link: %q %v", target, err)
			}
			// An edit tool call on the link: the pre-tool capture reads the
			// link, not its target. The agent replaces the link by a file.
			lb, _ := json.Marshal(map[string]string{"file_path": filepath.Join(wt, "link")})
			if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "ln2", ToolName: "Write", Args: lb, AgentID: "claude"}); err != nil {
				t.Fatal(err)
			}
			sh(t, wt, "rm link && echo mine > link")
			res, err := f.eng.CompleteToolCall(f.ctx, s.ID, "ln2", api.CompleteRequest{})
			if err != nil {
				t.Fatal(err)
			}
			recs = res.Records
			if len(recs) != 1 || recs[0].ModeBefore != sync.ModeSymlink || recs[0].OldContent == nil || *recs[0].OldContent != secret ||
				recs[0].NewContent == nil || *recs[0].NewContent != "mine\n" || recs[0].SyncState != prsm.SyncSynced {
				t.Fatalf("link replaced: %s %+v", summary(recs), recs)
			}
			if fi, err := os.Lstat(filepath.Join(f.ws, "link")); err != nil || !fi.Mode().IsRegular() || read(t, f.ws, "link") != "mine\n" {
				t.Errorf("workspace link not replaced by the file: %v %v", fi, err)
			}
			assertUntouched(t, out, w)

			// A symlink to the outside directory, and tool calls naming
			// files through it: nothing below it is read.
			recs = f.tool(s, "ln3", "Bash", "", func(wt string) { sh(t, wt, "ln -s '"+out+"' outdir") })
			if len(recs) != 1 || recs[0].RelPath != "outdir" || *recs[0].NewContent != out {
				t.Fatalf("dir link record: %s", summary(recs))
			}
			for i, p := range []string{filepath.Join(wt, "outdir", "secret"), "outdir/secret", "outdir/new.txt"} {
				b, _ := json.Marshal(map[string]string{"file_path": p})
				id := "thru" + string(rune('a'+i))
				if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: "Edit", Args: b, Cwd: wt}); err != nil {
					t.Logf("start %s: %v", p, err)
				}
				res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
				if err == nil && len(res.Records) != 0 {
					t.Errorf("%s: records %s", p, summary(res.Records))
				}
			}
			assertUntouched(t, out, w)

			// Rejecting undoes them as links and files, still without
			// following anything.
			for _, id := range []string{"ln3", "ln2", "ln1"} {
				if _, err := f.eng.Reject(f.ctx, s.ID, id); err != nil {
					t.Fatalf("reject %s: %v", id, err)
				}
			}
			for _, p := range []string{"link", "outdir"} {
				if _, err := os.Lstat(filepath.Join(f.ws, p)); !os.IsNotExist(err) {
					t.Errorf("workspace %s after reject: %v", p, err)
				}
			}
			f.assertConfined(t, s, out, w)
		})
	}
}

// TestWorkspaceLinkOutsideReplacedByFile: the workspace has a committed
// symlink pointing outside; the agent replaces it by a regular file. Sync
// replaces the link itself (the file it points to is neither read nor
// written), the record's before side is the link target, and a reject puts
// the link back, again without following it.
func TestWorkspaceLinkOutsideReplacedByFile(t *testing.T) {
	f := newFixture(t)
	out, secret, w := outsideDir(t)
	testgit.Symlink(t, f.ws, "cfg", secret)
	testgit.Git(t, f.ws, "add", "-A")
	testgit.Git(t, f.ws, "commit", "-qm", "link out")
	w.events(t) // git add hashed the link, not its target; start afresh anyway

	s := f.start("")
	if target, err := os.Readlink(filepath.Join(s.WorktreePath, "cfg")); err != nil || target != secret {
		t.Fatalf("worktree cfg: %q %v", target, err)
	}
	recs := f.tool(s, "r1", "Bash", "", func(wt string) { sh(t, wt, "rm cfg && printf 'local\\n' > cfg") })
	if len(recs) != 1 || recs[0].RelPath != "cfg" || recs[0].ModeBefore != sync.ModeSymlink || recs[0].ModeAfter&0o170000 != sync.ModeRegular ||
		recs[0].OldContent == nil || *recs[0].OldContent != secret || *recs[0].NewContent != "local\n" || recs[0].SyncState != prsm.SyncSynced {
		t.Fatalf("record: %s %+v", summary(recs), recs)
	}
	fi, err := os.Lstat(filepath.Join(f.ws, "cfg"))
	if err != nil || !fi.Mode().IsRegular() || read(t, f.ws, "cfg") != "local\n" {
		t.Fatalf("workspace cfg is %v (%v), want the regular file", fi, err)
	}
	assertUntouched(t, out, w)

	if _, err := f.eng.Reject(f.ctx, s.ID, "r1"); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(f.ws, "cfg")); err != nil || target != secret {
		t.Errorf("after reject, workspace cfg: %q %v, want the link back", target, err)
	}
	if target, err := os.Readlink(filepath.Join(s.WorktreePath, "cfg")); err != nil || target != secret {
		t.Errorf("after reject, worktree cfg: %q %v, want the link back", target, err)
	}
	f.assertConfined(t, s, out, w)
}

// TestSyncTOCTOUDirectorySwap swaps a workspace directory for a symlink to
// outside at the last moment before sync writes (and, on reject, before it
// removes): after prsm checked the path, before it touches the file. The
// write must not land outside, nor the removal happen outside; the file
// prsm checked (now in the moved directory) is the one changed.
func TestSyncTOCTOUDirectorySwap(t *testing.T) {
	for _, op := range []string{"create", "rename", "remove"} {
		t.Run(op, func(t *testing.T) {
			f := newFixture(t)
			out, _, w := outsideDir(t)
			testgit.Write(t, f.ws, "dir/x.txt", "base\n", 0o644)
			testgit.Git(t, f.ws, "add", "-A")
			testgit.Git(t, f.ws, "commit", "-qm", "dir")
			// The outside directory has a file of the same name.
			if err := os.WriteFile(filepath.Join(out, "x.txt"), []byte(secretContent), 0o600); err != nil {
				t.Fatal(err)
			}
			w.events(t)
			s := f.start("")
			target := filepath.Join(f.ws, "dir", "x.txt")
			var swapped stdsync.Once
			restore := sync.SetFaultHook(func(got, path string) error {
				if got == op && path == target {
					swapped.Do(func() {
						if err := os.Rename(filepath.Join(f.ws, "dir"), filepath.Join(f.ws, "dir.moved")); err != nil {
							t.Error(err)
						}
						if err := os.Symlink(out, filepath.Join(f.ws, "dir")); err != nil {
							t.Error(err)
						}
					})
				}
				return nil
			})
			defer restore()
			var recs []*prsm.Record
			if op == "remove" {
				// The agent deletes the file; sync removes it.
				recs = f.tool(s, "t1", "Bash", "", func(wt string) { sh(t, wt, "rm dir/x.txt") })
			} else {
				recs = f.tool(s, "t1", "Edit", "dir/x.txt", func(wt string) { write(t, wt, "dir/x.txt", "agent\n") })
			}
			restore()
			if _, err := os.Lstat(filepath.Join(f.ws, "dir.moved")); err != nil {
				t.Fatalf("the swap never ran: %v (records %s)", err, summary(recs))
			}
			t.Logf("records: %s", summary(recs))
			if ev := w.events(t); len(ev) > 0 {
				t.Errorf("prsm touched the directory outside:\n%s", strings.Join(ev, "\n"))
			}
			if b, err := os.ReadFile(filepath.Join(out, "x.txt")); err != nil || string(b) != secretContent {
				t.Errorf("outside x.txt: %q %v", b, err)
			}
			entries, _ := os.ReadDir(out)
			if len(entries) != 2 {
				t.Errorf("outside directory holds %d entries, want 2 (secret, x.txt)", len(entries))
			}
			if len(recs) == 1 && recs[0].SyncState == prsm.SyncSynced {
				// Synced means written to the file prsm checked.
				got, err := os.ReadFile(filepath.Join(f.ws, "dir.moved", "x.txt"))
				if op == "remove" {
					if !os.IsNotExist(err) {
						t.Errorf("synced removal, but dir.moved/x.txt: %q %v", got, err)
					}
				} else if string(got) != "agent\n" {
					t.Errorf("synced, but dir.moved/x.txt = %q %v", got, err)
				}
			}
		})
	}
}
