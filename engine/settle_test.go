package engine_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/testenv"
)

// bigContent is size bytes that no other call makes (seeded by tag),
// text-free, so a torn read or a prefix shows as another hash.
func bigContent(tag string, size int) []byte {
	var seed uint64
	for _, c := range tag {
		seed = seed*131 + uint64(c)
	}
	r := rand.New(rand.NewPCG(seed, 42))
	b := make([]byte, size)
	for i := 0; i < size; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < size; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// waitLong polls cond until it holds, failing the test with what after
// a deadline generous enough for a loaded machine and large files.
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sameFile reports whether the files a and b both exist and hold the same
// bytes.
func sameFile(t *testing.T, a, b string) bool {
	if _, err := os.Stat(b); err != nil {
		return false
	}
	return sameContent(t, a, b)
}

// TestCompleteLeavesAFileBeingWrittenToTheWatcher: a tool call's complete
// comes while a background process of the agent still writes a file over
// the size limit (hashed as it streams past). The complete records the
// call's own change and does not fail; the file being written is no
// change of it yet: once its writer stops and it settled, the watcher
// records it whole, in the same turn, and it reaches the workspace byte
// for byte.
func TestCompleteLeavesAFileBeingWrittenToTheWatcher(t *testing.T) {
	defer bigfile.SetLimit(4 << 20)()
	f := newFixture(t)
	log := f.logTo()
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	}()
	f.watch()
	s := f.start(prsm.ModeAuto)
	f.turn(s, 1)
	f.capture(s, "b1", "Bash", "")
	write(t, s.WorktreePath, "own.txt", "the call's own\n")
	bg := filepath.Join(s.WorktreePath, "bg.bin")
	out, err := os.Create(bg)
	if err != nil {
		t.Fatal(err)
	}
	stop, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		defer out.Close()
		part := bigContent("bg", 256<<10)
		for {
			select {
			case <-stop:
				stopped <- out.Close()
				return
			default:
			}
			if _, err := out.Write(part); err != nil {
				stopped <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	waitLong(t, "the background writer past the size limit", func() bool {
		fi, err := os.Stat(bg)
		return err == nil && fi.Size() > 8<<20
	})
	recs := f.complete(s, "b1")
	close(stop)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	own := false
	for _, r := range recs {
		own = own || r.RelPath == "own.txt"
	}
	if !own {
		t.Fatalf("the call's own change is not its record: %s", summary(recs))
	}
	fi, err := os.Stat(bg)
	if err != nil {
		t.Fatal(err)
	}
	waitLong(t, "bg.bin recorded whole", func() bool {
		recs, err := f.eng.Records(f.ctx, s.ID, "", "bg.bin")
		return err == nil && len(recs) > 0 && recs[len(recs)-1].SizeAfter == fi.Size() && recs[len(recs)-1].SyncState != prsm.SyncPendingReview
	})
	all, err := f.eng.Records(f.ctx, s.ID, "", "bg.bin")
	if err != nil {
		t.Fatal(err)
	}
	waitLong(t, "bg.bin in the workspace", func() bool { return sameFile(t, bg, filepath.Join(f.ws, "bg.bin")) })
	for _, r := range all {
		if r.MessageIndex != 1 || (r.ToolCallID != "b1" && r.ToolName != "Watch") {
			t.Errorf("bg.bin record %s is turn %d's %s call", r.ID, r.MessageIndex, r.ToolName)
		}
	}
}

// TestWatchRecordRetriedWhileStoreBusy: another connection holds the
// database's write lock while the watcher wants to record a change. The
// record fails as busy (sqlite's busy_timeout), and is tried again until
// the lock goes: the record then appears, synced, in the turn that wrote
// the file; nothing is dropped.
func TestWatchRecordRetriedWhileStoreBusy(t *testing.T) {
	f := newFixture(t)
	log := f.logTo()
	f.watch()
	s := f.start(prsm.ModeAuto)
	f.turn(s, 1)
	release := testenv.HoldWriteLock(t, filepath.Join(f.eng.ProjectDir, "prsm.db"))
	write(t, s.WorktreePath, "busy.txt", "written while the store was busy\n")
	waitLong(t, "the watcher's record to fail as busy", func() bool {
		return strings.Contains(log.String(), "database is locked")
	})
	release()
	waitLong(t, "the record after the lock went", func() bool {
		recs, err := f.eng.Records(f.ctx, s.ID, "", "busy.txt")
		return err == nil && len(recs) == 1 && recs[0].SyncState == prsm.SyncSynced
	})
	recs, err := f.eng.Records(f.ctx, s.ID, "", "busy.txt")
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[0]; r.ToolName != "Watch" || r.MessageIndex != 1 || r.ChangeType != prsm.ChangeCreate {
		t.Errorf("record = %s %s turn %d", r.ToolName, r.ChangeType, r.MessageIndex)
	}
	if got := read(t, f.ws, "busy.txt"); got != "written while the store was busy\n" {
		t.Errorf("workspace holds %q", got)
	}
	if _, err := f.eng.StartToolCall(f.ctx, s.ID, api.ToolCallRequest{ToolCallID: "after", ToolName: "Bash"}); err != nil {
		t.Fatal(err)
	}
	if recs := f.complete(s, "after"); len(recs) != 0 {
		t.Errorf("a later call took the change again: %s", summary(recs))
	}
}
