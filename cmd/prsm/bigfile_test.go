//go:build unix

package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// peakRSS is the peak resident size of process pid (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	return procSize(t, pid, "VmHWM:")
}

// residentRSS is the resident size of process pid now (VmRSS), in bytes.
func residentRSS(t *testing.T, pid int) int64 {
	t.Helper()
	return procSize(t, pid, "VmRSS:")
}

// procSize is a size field of process pid's /proc status, in bytes.
func procSize(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s %q: %v", field, rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc status", field)
	return 0
}

// maxServerRSS is the bound on the server's resident size whatever the
// agent writes (issue 31). The test binary is built with the race
// detector in CI, which costs memory of its own; the bound holds with it.
const maxServerRSS = 500 << 20

// TestBigSparseFileThroughServer is the end-to-end check of files
// over the size limit, on the real server (this binary as `prsm serve`)
// with its default limit: an agent's Bash runs `truncate -s 3G` (no disk
// used), then deletes the file. The server stays under its memory bound,
// the file reaches the workspace whole and still sparse, the store holds
// no big content and passes integrity_check, and a restart is clean.
func TestBigSparseFileThroughServer(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 GiB sparse file")
	}
	h, s := serverSession(t, "big")
	ctx := context.Background()
	const size = 3 << 30
	recs := h.bash(s, "t1", "truncate -s 3G sparse.bin && printf end >> sparse.bin")
	if len(recs.Records) != 1 {
		t.Fatalf("records: %+v", recs.Records)
	}
	r := recs.Records[0]
	if r.ChangeType != "create" || r.SizeAfter != size+3 || !r.Binary || r.SyncState != "synced" || !strings.Contains(r.Note, "too large") {
		t.Errorf("record: %s %s size %d binary %v sync %s note %q", r.ID, r.ChangeType, r.SizeAfter, r.Binary, r.SyncState, r.Note)
	}
	ws := filepath.Join(h.ws, "sparse.bin")
	fi, err := os.Stat(ws)
	if err != nil {
		t.Fatalf("the big file did not reach the workspace: %v", err)
	}
	if fi.Size() != size+3 {
		t.Errorf("workspace copy has %d bytes", fi.Size())
	}
	if used := fi.Sys().(*syscall.Stat_t).Blocks * 512; used > 1<<20 {
		t.Errorf("the workspace copy of a sparse 3 GiB file takes %d bytes of disk: made dense", used)
	}
	tail := make([]byte, 3)
	if f, err := os.Open(ws); err == nil {
		f.ReadAt(tail, size)
		f.Close()
	}
	if string(tail) != "end" {
		t.Errorf("the workspace copy ends with %q", tail)
	}

	recs = h.bash(s, "t2", "rm sparse.bin")
	if len(recs.Records) != 1 || recs.Records[0].ChangeType != "delete" || recs.Records[0].SizeBefore != size+3 {
		t.Fatalf("records of the rm: %+v", recs.Records)
	}
	if _, err := os.Lstat(ws); !os.IsNotExist(err) {
		t.Errorf("the workspace still has sparse.bin after the agent's rm: %v", err)
	}
	h.mu.Lock()
	pid := h.cmd.Process.Pid
	h.mu.Unlock()
	if rss := peakRSS(t, pid); rss > maxServerRSS {
		t.Errorf("server peak RSS %d MB, over %d MB", rss>>20, maxServerRSS>>20)
	} else {
		t.Logf("server peak RSS %d MB", rss>>20)
	}

	h.stop()
	h.integrityCheck()
	db := h.openDB()
	var biggest int64
	if err := db.QueryRow("SELECT COALESCE(MAX(size), 0) FROM blobs").Scan(&biggest); err != nil {
		t.Fatal(err)
	}
	var pending, aside int
	db.QueryRow("SELECT COUNT(*) FROM pending_objects").Scan(&pending)
	db.QueryRow("SELECT COUNT(*) FROM pending_objects_aside").Scan(&aside)
	db.Close()
	if biggest > 64<<10 || pending != 0 || aside != 0 {
		t.Errorf("store: largest content %d bytes, %d pending rows, %d set aside", biggest, pending, aside)
	}
	h.start() // a restart: it fails the test if the server does not come up
	list, err := h.client().Changes(ctx, s.ID, "", "")
	if err != nil || len(list) != 2 {
		t.Fatalf("records after restart: %d, %v", len(list), err)
	}
	h.stop()
	if b, err := os.ReadFile(h.logPath); err == nil && strings.Contains(string(b), "level=ERROR") {
		t.Errorf("the server logged errors:\n%s", b)
	}
}
