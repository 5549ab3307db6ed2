package engine_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/prsm-dev/prsm/api"
)

// deepFile writes content to a file depth directories ("d") below dir,
// the way an agent can: one directory at a time, relative to the last, so
// no path longer than the system allows is ever named.
func deepFile(t *testing.T, dir string, depth int, content string) {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < depth; i++ {
		if err := r.Mkdir("d", 0o755); err != nil && !os.IsExist(err) {
			t.Fatalf("mkdir at depth %d: %v", i, err)
		}
		next, err := r.OpenRoot("d")
		r.Close()
		if err != nil {
			t.Fatalf("open at depth %d: %v", i, err)
		}
		r = next
	}
	defer r.Close()
	if err := r.WriteFile("f.txt", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lockedBuffer is a log sink the engine's goroutines may write while the
// test reads it.
type lockedBuffer struct {
	mu stdsync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logTo sends the engine's log to a buffer the test reads.
func (f *fixture) logTo() *lockedBuffer {
	buf := &lockedBuffer{}
	f.eng.Log = slog.New(slog.NewTextHandler(buf, nil))
	return buf
}

// wantTooLong checks that warns is one warning about a path too long to
// record, below "d/d/", that the log says so, and that the engine's
// notices (what prsm status shows) hold it.
func (f *fixture) wantTooLong(warns []string, log *lockedBuffer) {
	f.t.Helper()
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "d/d/d/") || !strings.Contains(warns[0], "path too long to record") ||
		!strings.Contains(warns[0], "neither recorded nor synced to the workspace") {
		f.t.Fatalf("warnings = %q, want one about a path too long to record", warns)
	}
	if got := log.String(); !strings.Contains(got, "path too long to record") || !strings.Contains(got, `path="d/d/d/`) ||
		strings.Contains(got, "level=ERROR") {
		f.t.Errorf("log:\n%.2000s", got)
	}
	found := false
	for _, n := range f.eng.Notices() {
		found = found || strings.Contains(n, warns[0])
	}
	if !found {
		f.t.Errorf("notices %q lack %q", f.eng.Notices(), warns[0])
	}
}

// TestDeepPathIsReported: a file too deep for the system's path limit
// (PATH_MAX) cannot be read, recorded or synced by its path. The agent's
// tool call still records everything else, and its answer, the log and
// the engine's notices (prsm status) say which path was left out, once.
// This depth is within git's reach (the path relative to the worktree is
// short enough for git status) but not the worktree's absolute path, so
// both the scan and the watcher find it.
func TestDeepPathIsReported(t *testing.T) {
	scannedAndWatched(t, func(t *testing.T, f *fixture) {
		log := f.logTo()
		s := f.start("")
		depth := 2040 // "d/" * 2040 + "f.txt": 4085 bytes, under 4096
		f.capture(s, "b1", "Bash", "")
		deepFile(t, s.WorktreePath, depth, "deep\n")
		write(t, s.WorktreePath, "shallow.txt", "s\n")
		ans, err := f.eng.CompleteToolCall(f.ctx, s.ID, "b1", api.CompleteRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := summary(ans.Records), "b1:0 create shallow.txt pending/synced"; got != want {
			t.Fatalf("records:\n%s\nwant:\n%s", got, want)
		}
		f.wantTooLong(ans.Warnings, log)
		// Said once: the next call (a write further down the same
		// tree) has nothing new to say.
		f.capture(s, "b2", "Bash", "")
		deepFile(t, s.WorktreePath, depth, "deeper\n")
		write(t, s.WorktreePath, "other.txt", "o\n")
		ans, err = f.eng.CompleteToolCall(f.ctx, s.ID, "b2", api.CompleteRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := summary(ans.Records), "b2:0 create other.txt pending/synced"; got != want || len(ans.Warnings) != 0 {
			t.Fatalf("records:\n%s\nwarnings: %q", got, ans.Warnings)
		}
	})
}

// TestVeryDeepPathIsReported: 5000 directories deep, beyond what git
// status can reach; the watcher finds the first directory it cannot name,
// whether the agent made the tree in place or moved it in.
func TestVeryDeepPathIsReported(t *testing.T) {
	for _, how := range []string{"in place", "moved in"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t)
			f.watch()
			log := f.logTo()
			s := f.start("")
			f.capture(s, "b1", "Bash", "")
			if how == "in place" {
				deepFile(t, s.WorktreePath, 5000, "deep\n")
			} else {
				tmp := t.TempDir()
				deepFile(t, tmp, 5000, "deep\n")
				if err := os.Rename(filepath.Join(tmp, "d"), filepath.Join(s.WorktreePath, "d")); err != nil {
					t.Fatal(err)
				}
			}
			write(t, s.WorktreePath, "shallow.txt", "s\n")
			ans, err := f.eng.CompleteToolCall(f.ctx, s.ID, "b1", api.CompleteRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := summary(ans.Records), "b1:0 create shallow.txt pending/synced"; got != want {
				t.Fatalf("records:\n%s\nwant:\n%s", got, want)
			}
			f.wantTooLong(ans.Warnings, log)
		})
	}
}
