package tracker

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
)

// Each error that means the watcher cannot watch everything has its
// cause and its fix; others are no limit.
func TestErrLimitCauses(t *testing.T) {
	w := &Watcher{Budget: 7, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range []struct {
		err          error
		cause, words string
	}{
		{fmt.Errorf("add: %w", syscall.ENOSPC), LimitWatches, "sudo sysctl fs.inotify.max_user_watches=524288"},
		{errBudget, LimitBudget, "PRSM_MAX_WATCHES"},
		{&os.PathError{Op: "open", Path: "/x", Err: syscall.EMFILE}, LimitDescriptors, "ulimit -n"},
		{syscall.ENFILE, LimitDescriptors, "ulimit -n"},
	} {
		l, ok := w.errLimit(c.err)
		if !ok || l.Cause != c.cause || !strings.Contains(l.String(), c.words) {
			t.Errorf("errLimit(%v) = %+v %v, want %s with %q", c.err, l, ok, c.cause, c.words)
		}
	}
	if _, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		l, _ := w.errLimit(syscall.ENOSPC)
		if !strings.Contains(l.Reason, "fs.inotify.max_user_watches is ") {
			t.Errorf("ENOSPC's reason does not give the kernel's limit: %q", l.Reason)
		}
	}
	for _, err := range []error{syscall.ENOENT, syscall.EACCES, nil} {
		if l, ok := w.errLimit(err); ok {
			t.Errorf("errLimit(%v) = %+v, want none", err, l)
		}
	}
	if l := StartLimit(syscall.EMFILE); l.Cause != LimitNoWatcher || !strings.Contains(l.Fix, "ulimit -n") {
		t.Errorf("StartLimit(EMFILE) = %+v", l)
	}
}
