package osproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestAliveAndStop: a running child is alive; Stop ends it; a reaped
// child is not alive, and a signal to it says ErrGone.
func TestAliveAndStop(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command("sleep", "60")
	Group(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatal("a started child is not alive")
	}
	if err := StopGroup(pid, false); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if Alive(pid) {
		t.Error("a stopped and reaped child is alive")
	}
	if err := Stop(pid, true); !errors.Is(err, ErrGone) {
		t.Errorf("Stop of a gone process: %v", err)
	}
	if err := StopGroup(pid, true); !errors.Is(err, ErrGone) {
		t.Errorf("StopGroup of a gone group: %v", err)
	}
}

// TestTryLock: a second open of a locked file cannot take the lock until
// the first lets it go; the holder's content stays readable meanwhile.
func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	a, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.OpenFile(p, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	a.WriteAt([]byte("1234\n"), 0)
	start := time.Now()
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("second lock while held: %v %v", ok, err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("TryLock waited")
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "1234\n" {
		t.Errorf("locked file's content: %q %v", got, err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("lock after the unlock: %v %v", ok, err)
	}
}
