package sync

import (
	"os"
	"path/filepath"
	"sort"
	stdsync "sync"
	"testing"
)

// toctouFixture is a root with dir/x.txt and a directory outside it that
// holds its own x.txt.
type toctouFixture struct {
	root, outside string
}

func newTOCTOU(t *testing.T) *toctouFixture {
	t.Helper()
	parent := t.TempDir()
	fx := &toctouFixture{root: filepath.Join(parent, "ws"), outside: filepath.Join(parent, "outside")}
	for _, d := range []string{filepath.Join(fx.root, "dir"), fx.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(fx.root, "dir", "x.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.outside, "x.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return fx
}

// swap replaces root/dir by a symlink to the outside directory (the real
// directory is moved aside, still inside the root).
func (fx *toctouFixture) swap(t *testing.T) {
	dir := filepath.Join(fx.root, "dir")
	if err := os.Rename(dir, filepath.Join(fx.root, "dir.moved")); err != nil {
		t.Error(err)
		return
	}
	if err := os.Symlink(fx.outside, dir); err != nil {
		t.Error(err)
	}
}

// assertOutsideUntouched fails unless the outside directory holds exactly
// x.txt with its own content.
func (fx *toctouFixture) assertOutsideUntouched(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(fx.outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 1 || names[0] != "x.txt" {
		t.Errorf("outside directory holds %q, want only x.txt", names)
	}
	fi, err := os.Lstat(filepath.Join(fx.outside, "x.txt"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("outside x.txt: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(fx.outside, "x.txt")); string(b) != "outside\n" {
		t.Errorf("outside x.txt = %q, written through the swapped directory", b)
	}
}

// TestApplyTOCTOUSwap swaps a directory of the workspace for a symlink to
// outside between Apply's confinement check and each of its writes (the
// fault hook runs right before the step): the write, the link or the
// removal must not land outside. Apply may fail or report a conflict.
func TestApplyTOCTOUSwap(t *testing.T) {
	base := Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte("base\n")}
	for _, tc := range []struct {
		name, op string
		theirs   Version
	}{
		{"write", "create", Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte("agent\n")}},
		{"rename", "rename", Version{Present: true, Mode: ModeRegular | 0o644, Content: []byte("agent\n")}},
		{"symlink", "symlink", Version{Present: true, Mode: ModeSymlink, Content: []byte("target")}},
		{"remove", "remove", Absent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newTOCTOU(t)
			var once stdsync.Once
			restore := SetFaultHook(func(op, path string) error {
				if op == tc.op {
					once.Do(func() { fx.swap(t) })
				}
				return nil
			})
			out, _, err := Apply(fx.root, "dir/x.txt", base, tc.theirs)
			restore()
			// The hook ran: the swap happened mid-Apply.
			if _, lerr := os.Lstat(filepath.Join(fx.root, "dir.moved")); lerr != nil {
				t.Fatalf("the swap never happened (outcome %v, err %v)", out, err)
			}
			t.Logf("outcome %v, err %v", out, err)
			fx.assertOutsideUntouched(t)
			if err == nil && out == Written {
				// Written means inside: the moved directory got the change.
				got, rerr := ReadVersion(fx.root, "dir.moved/x.txt")
				if rerr != nil || !Same(got, tc.theirs) {
					t.Errorf("Apply says written, but dir.moved/x.txt is %+v (%v)", got, rerr)
				}
			}
		})
	}
}

// TestApplyRacingSwaps runs Apply in a loop while another goroutine keeps
// swapping the directory for a symlink to outside and back. Whatever the
// interleaving, nothing outside is ever written, linked or removed.
func TestApplyRacingSwaps(t *testing.T) {
	fx := newTOCTOU(t)
	dir := filepath.Join(fx.root, "dir")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// dir -> symlink to outside -> dir again.
			if err := os.Rename(dir, dir+".real"); err != nil {
				continue
			}
			os.Symlink(fx.outside, dir)
			os.Remove(dir)
			os.Rename(dir+".real", dir)
		}
	}()
	versions := []Version{
		{Present: true, Mode: ModeRegular | 0o644, Content: []byte("base\n")},
		{Present: true, Mode: ModeRegular | 0o644, Content: []byte("agent\n")},
		{Present: true, Mode: ModeSymlink, Content: []byte("target")},
		Absent,
	}
	n := 2000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		from, to := versions[i%len(versions)], versions[(i+1)%len(versions)]
		Apply(fx.root, "dir/x.txt", from, to)
		Write(fx.root, "dir/y.txt", to)
	}
	close(stop)
	<-done
	fx.assertOutsideUntouched(t)
	// No temporary file of ours is left behind either.
	if left, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}
