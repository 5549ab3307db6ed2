package tracker

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	stdsync "sync"
	"testing"
)

type syncBuffer struct {
	mu stdsync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A real inotify queue overflow (the kernel drops events while the
// watcher is stalled) is noticed: the next look is a full scan, and the log
// says so.
func TestWatcherQueueOverflowFallsBackToScan(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip("no inotify limits here")
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || limit > 100_000 {
		t.Skipf("max_queued_events %q: too many files to overflow it quickly", b)
	}
	var log syncBuffer
	w, err := NewWatcher(slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.MaxDirty = 10 * limit // only the overflow may force the scan
	root := t.TempDir()
	if err := w.Add("s", root); err != nil {
		t.Fatal(err)
	}
	// Stall the event loop: it blocks on the lock, fsnotify blocks handing
	// it the next event, and the kernel's queue fills and overflows.
	w.mu.Lock()
	for i := 0; i < limit+1000; i++ {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%06d", i)), nil, 0o644); err != nil {
			w.mu.Unlock()
			t.Fatal(err)
		}
	}
	w.mu.Unlock()
	if err := w.Flush(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	d := w.Peek(root)
	if !d.Full {
		t.Fatalf("after %d events with a queue of %d: no full scan (%d dirty paths)", limit+1000, limit, len(d.Paths))
	}
	if !strings.Contains(log.String(), "queue overflow") {
		t.Fatalf("the overflow is not logged:\n%s", log.String())
	}
	// Once scanned, the watcher reports paths again.
	w.Ack(d)
	os.WriteFile(filepath.Join(root, "after.txt"), []byte("x"), 0o644)
	if err := w.Flush(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	if d := w.Peek(root); d.Full || strings.Join(d.Paths, ",") != "after.txt" {
		t.Fatalf("after the scan: full=%v paths=%v", d.Full, d.Paths)
	}
}
