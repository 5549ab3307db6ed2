package sync

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prsm-dev/prsm/internal/safepath"
)

// TestReadVersionRefusesSymlinkedParent: ReadVersion opens each parent
// without following a symlink (it no longer looks at them first with
// safepath.Join): a file beyond a symlinked directory, even one inside the
// root, is refused with ErrOutside and its content never read.
func TestReadVersionRefusesSymlinkedParent(t *testing.T) {
	root := t.TempDir()
	for _, target := range []string{t.TempDir(), filepath.Join(root, "real")} {
		if err := os.MkdirAll(target, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(target, "secret.txt"), []byte("secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(root, "link")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		v, err := ReadVersion(root, "link/secret.txt")
		if !errors.Is(err, safepath.ErrOutside) || len(v.Content) != 0 {
			t.Errorf("through a link to %s: %q, %v; want ErrOutside and nothing read", target, v.Content, err)
		}
	}
}
