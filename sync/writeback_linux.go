package sync

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing f's data to the disk and does not wait
// for it (sync_file_range with SYNC_FILE_RANGE_WRITE). A staged file is
// placed by a rename over the old one, and ext4 (auto_da_alloc) starts
// that writeback itself inside such a rename, which made the rename, the
// one step of a tool call's sync its answer waits for, cost several times
// more (docs/performance.md). Staging is ahead of placing (while complete stores the
// records), so the writeback is started there. It is only a hint: Settle's
// fsync makes the file durable, and an error here changes nothing.
func startWriteback(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		unix.SyncFileRange(int(fd), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	})
}
