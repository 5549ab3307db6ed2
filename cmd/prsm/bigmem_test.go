//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/memtest"
)

// serverSession starts a server (this binary as `prsm serve`) over a
// new workspace, and a session named name in it.
func serverSession(t *testing.T, name string) (*harness, *prsm.Session) {
	t.Helper()
	h := newHarness(t)
	h.start()
	s, err := h.client().StartSession(context.Background(), api.StartRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

// fileSum is the sha256 of the file at p, read in pieces.
func fileSum(t *testing.T, p string) [32]byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

// TestFileUnderLimitThroughServer is issue 42, item 1's bound for a file
// just under the size limit, on the real server: an agent's Bash writes
// 99 MiB of random bytes (stored raw: the worst case), then appends to
// it, the append is rejected, and a file of the same size written with
// no tool call is recorded by the watcher. Each step raises the server's
// resident peak (VmHWM, reset before it through clear_refs) by at most
// 2.6 times the file's size above what the server held before it, and
// the workspace holds the agent's bytes exactly, the reject's too. Before
// the store wrote and read such contents a chunk at a time, the create
// raised it by 304 MiB, the append by 303 and the reject by 396 to 495;
// now (under the 192 MiB soft limit) the create by 127, the append by 84,
// the reject by 105 and the watcher's record by 9 to 35 MiB.
func TestFileUnderLimitThroughServer(t *testing.T) {
	if testing.Short() {
		t.Skip("99 MiB files")
	}
	if memtest.Race {
		t.Skip("the race detector's shadow memory is no measure of the server's")
	}
	const size = 99 << 20
	const bound = size * 26 / 10
	h, s := serverSession(t, "big")
	ctx := context.Background()
	h.mu.Lock()
	pid := h.cmd.Process.Pid
	h.mu.Unlock()
	clear := "/proc/" + strconv.Itoa(pid) + "/clear_refs"
	step := func(what string, fn func()) {
		t.Helper()
		if err := os.WriteFile(clear, []byte("5"), 0); err != nil {
			t.Skipf("cannot reset the server's resident peak: %v", err)
		}
		base := residentRSS(t, pid)
		fn()
		peak := peakRSS(t, pid)
		t.Logf("%s: server resident %d MiB before, peak %d MiB (+%d MiB)", what, base>>20, peak>>20, (peak-base)>>20)
		if peak-base > bound {
			t.Errorf("%s raised the server's resident peak by %d MiB, over %d MiB (2.6 times the file)", what, (peak-base)>>20, bound>>20)
		}
	}
	ws := filepath.Join(h.ws, "big.bin")
	wt := filepath.Join(s.WorktreePath, "big.bin")

	step("create", func() {
		recs := h.bash(s, "t1", "head -c "+strconv.Itoa(size)+" /dev/urandom > big.bin")
		if len(recs.Records) != 1 || recs.Records[0].SizeAfter != size || recs.Records[0].Note != "" {
			t.Fatalf("records of the create: %+v", recs.Records)
		}
	})
	created := fileSum(t, wt)
	if fileSum(t, ws) != created {
		t.Fatal("the workspace's big.bin is not the agent's")
	}
	step("append", func() {
		if recs := h.bash(s, "t2", "printf tail >> big.bin"); len(recs.Records) != 1 {
			t.Fatalf("records of the append: %+v", recs.Records)
		}
	})
	if fileSum(t, ws) != fileSum(t, wt) {
		t.Fatal("the workspace's big.bin is not the agent's after the append")
	}
	step("reject", func() {
		if _, err := h.client().Reject(ctx, s.ID, "t2"); err != nil {
			t.Fatal(err)
		}
	})
	if fileSum(t, ws) != created || fileSum(t, wt) != created {
		t.Fatal("the reject did not put back the created bytes")
	}
	step("watched", func() {
		// No tool call: the watcher finds it.
		src, err := os.Open(wt)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(s.WorktreePath, "copy.bin"))
		if err == nil {
			_, err = io.Copy(dst, src)
			dst.Close()
		}
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			recs, err := h.client().Changes(ctx, s.ID, "", "copy.bin")
			if err == nil && len(recs) == 1 && recs[0].SyncState == "synced" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no synced record of copy.bin: %v, %v", recs, err)
			}
		}
	})
	if fileSum(t, filepath.Join(h.ws, "copy.bin")) != created {
		t.Fatal("the workspace's copy.bin is not the agent's")
	}
	h.stop()
	if b, err := os.ReadFile(h.logPath); err == nil && bytes.Contains(b, []byte("level=ERROR")) {
		t.Errorf("the server logged errors:\n%s", b)
	}
}
