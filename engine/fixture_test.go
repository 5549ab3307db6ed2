package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

// fixture is an engine over a workspace with a committed 20-line file:
// newEngine's, with f.txt (20 lines), keep.txt and .gitignore (*.log)
// committed in a second commit (template_test.go).
type fixture struct {
	t   *testing.T
	eng *engine.Engine
	ws  string
	ctx context.Context
}

func lines(n int, tag string) string { return testgit.Lines(n, tag) }

func newFixture(t *testing.T) *fixture {
	eng, ws := newEngineFrom(t, "fixture") // f.txt, keep.txt and .gitignore committed
	return &fixture{t: t, eng: eng, ws: ws, ctx: context.Background()}
}

func (f *fixture) start(mode string) *prsm.Session {
	f.t.Helper()
	s, err := f.eng.StartSession(f.ctx, api.StartRequest{Mode: mode})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// turn starts turn n of s (its automatic checkpoint, returned).
func (f *fixture) turn(s *prsm.Session, n int) *prsm.Checkpoint {
	f.t.Helper()
	cp, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{MessageIndex: n})
	if err != nil {
		f.t.Fatal(err)
	}
	return cp
}

// scannedAndWatched runs test twice on a new fixture: with changes found
// by scanning (no watcher), and by the watcher.
func scannedAndWatched(t *testing.T, test func(t *testing.T, f *fixture)) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "scan", true: "watched"}[watched], func(t *testing.T) {
			f := newFixture(t)
			if watched {
				f.watch()
			}
			test(t, f)
		})
	}
}

// q is the store for a direct read, once the work the engine's tool calls
// leave for after their answers is done (engine.Settle).
func (f *fixture) q() store.Querier {
	engine.Settle(f.eng)
	return f.eng.DB.Q()
}

// tool plays one agent tool call: capture, act in the worktree, complete.
func (f *fixture) tool(s *prsm.Session, id, name, file string, act func(wt string)) []*prsm.Record {
	f.t.Helper()
	f.capture(s, id, name, file)
	act(s.WorktreePath)
	return f.complete(s, id)
}

// capture starts tool call id (of tool name, naming file unless it is "").
func (f *fixture) capture(s *prsm.Session, id, name, file string) {
	f.t.Helper()
	args := "{}"
	if file != "" {
		b, _ := json.Marshal(map[string]string{"file_path": filepath.Join(s.WorktreePath, file)})
		args = string(b)
	}
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: id, ToolName: name, Args: json.RawMessage(args), AgentID: "claude"}); err != nil {
		f.t.Fatalf("start %s: %v", id, err)
	}
}

// completeLater, set by PRSM_TEST_COMPLETE_LATER=1, makes every
// complete of the engine's tests (f.complete, f.tool, the chains and their
// fuzz) go through CompleteToolCallLater, as an agent's PostToolUse does,
// and read the records after it. TestCrashAfterRecordStored is the one
// test that cannot run so: its crash is a panic in the complete's work,
// which then runs in the background.
var completeLater = os.Getenv("PRSM_TEST_COMPLETE_LATER") == "1"

// complete completes tool call id.
func (f *fixture) complete(s *prsm.Session, id string) []*prsm.Record {
	f.t.Helper()
	if completeLater {
		if err := f.eng.CompleteToolCallLater(f.ctx, s.ID, id, api.CompleteRequest{}); err != nil {
			f.t.Fatalf("complete %s later: %v", id, err)
		}
		recs, err := f.eng.RecordsOf(f.ctx, s.ID, id)
		if err != nil && !errors.Is(err, prsm.ErrNotFound) {
			f.t.Fatalf("records of %s: %v", id, err)
		}
		if err := f.eng.FillContent(f.ctx, recs); err != nil {
			f.t.Fatal(err)
		}
		return recs
	}
	res, err := f.eng.CompleteToolCall(f.ctx, s.ID, id, api.CompleteRequest{})
	if err != nil {
		f.t.Fatalf("complete %s: %v", id, err)
	}
	return res.Records
}

// bothHold checks that the session's worktree and the workspace both hold
// want at rel (when says at which step).
func (f *fixture) bothHold(s *prsm.Session, rel, want, when string) {
	f.t.Helper()
	for _, root := range []string{s.WorktreePath, f.ws} {
		if got := read(f.t, root, rel); got != want {
			f.t.Errorf("%s: %s %s:\n%s", when, root, rel, got)
		}
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	testgit.Write(t, root, rel, content, 0o644)
}

func read(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func replaceLine(content string, n int, with string) string {
	ls := strings.SplitAfter(content, "\n")
	ls[n-1] = with + "\n"
	return strings.Join(ls, "")
}

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func summary(recs []*prsm.Record) string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s %s %s %s/%s", r.ID, r.ChangeType, r.RelPath, r.Status, r.SyncState))
	}
	return strings.Join(out, "\n")
}
