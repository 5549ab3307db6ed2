package server

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/osproc"
	"github.com/prsm-dev/prsm/sync"
)

// InfoFile is the name of the file in the project dir that says where the
// server listens (api.InfoFile).
const InfoFile = api.InfoFile

// WriteInfo writes server.json atomically with mode 0600: it holds the token.
func WriteInfo(projectDir string, info api.Info) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return sync.WriteFileFrom(filepath.Join(projectDir, InfoFile), 0o600, func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
}

// ReadInfo reads server.json; os.ErrNotExist when no server has written one.
func ReadInfo(projectDir string) (*api.Info, error) { return api.ReadInfo(projectDir) }

// removeInfo deletes server.json if it is still ours (a newer server may have
// replaced it).
func removeInfo(projectDir, token string) {
	info, err := ReadInfo(projectDir)
	if err == nil && subtle.ConstantTimeCompare([]byte(info.Token), []byte(token)) == 1 {
		os.Remove(filepath.Join(projectDir, InfoFile))
	}
}

// ErrRunning is returned when another server already holds the workspace.
var ErrRunning = errors.New("a prsm server already runs for this workspace")

// Lock holds the project's server lock for the life of the process: at most
// one server per workspace, even when two start at the same instant.
type Lock struct{ f *os.File }

// AcquireLock takes the exclusive server lock of projectDir without waiting.
func AcquireLock(projectDir string) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(projectDir, "server.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if ok, err := osproc.TryLock(f); !ok {
		f.Close()
		if err == nil {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return &Lock{f: f}, nil
}

// Release drops the lock.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		osproc.Unlock(l.f)
		l.f.Close()
	}
}
