package engine_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
)

// accessWatch reports every open, read, write, creation, deletion or
// attribute change of a directory and the files directly in it, through
// inotify: the proof that prsm never so much as opened something outside
// the workspace and the worktree.
type accessWatch struct {
	fd  int
	dir string
}

const accessMask = syscall.IN_OPEN | syscall.IN_ACCESS | syscall.IN_MODIFY | syscall.IN_ATTRIB |
	syscall.IN_CLOSE_WRITE | syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_FROM |
	syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF

func watchAccess(t *testing.T, dir string) *accessWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, dir, accessMask); err != nil {
		t.Fatalf("inotify watch %s: %v", dir, err)
	}
	return &accessWatch{fd: fd, dir: dir}
}

// events returns what happened since the watch began (or the last call),
// one "OPEN secret" style line per event; "." is the directory itself.
func (w *accessWatch) events(t *testing.T) []string {
	t.Helper()
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if errors.Is(err, syscall.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatalf("read inotify: %v", err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := string(bytes.TrimRight(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+nameLen], "\x00"))
			if name == "" {
				name = "."
			}
			out = append(out, fmt.Sprintf("%s %s", maskNames(mask), filepath.Join(w.dir, name)))
			off += syscall.SizeofInotifyEvent + nameLen
		}
	}
}

func maskNames(m uint32) string {
	names := []struct {
		bit  uint32
		name string
	}{
		{syscall.IN_OPEN, "OPEN"}, {syscall.IN_ACCESS, "READ"}, {syscall.IN_MODIFY, "WRITE"},
		{syscall.IN_ATTRIB, "ATTRIB"}, {syscall.IN_CLOSE_WRITE, "CLOSE_WRITE"}, {syscall.IN_CREATE, "CREATE"},
		{syscall.IN_DELETE, "DELETE"}, {syscall.IN_MOVED_FROM, "MOVED_FROM"}, {syscall.IN_MOVED_TO, "MOVED_TO"},
		{syscall.IN_DELETE_SELF, "DELETE_SELF"}, {syscall.IN_MOVE_SELF, "MOVE_SELF"},
	}
	s := ""
	for _, n := range names {
		if m&n.bit != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
		}
	}
	if s == "" {
		s = fmt.Sprintf("0x%x", m)
	}
	return s
}
