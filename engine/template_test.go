package engine_test

// Templates of what every engine test starts from: the workspace of
// newEngine (a.txt, committed), that of newFixture (and its second
// commit), and an empty, migrated store. They are made once per test
// binary, as the tests made them (git init, add, commit; store.Open), and
// each test gets a copy: the engine's tests start hundreds of engines,
// and making each anew took five git processes and a migration of the
// store (150 ms of CPU under -race, a sixth of a chain test's). The
// workspace's index is refreshed after the copy (its files' inodes and
// ctimes are new), so a test starts from the state a commit leaves.

import (
	"fmt"
	"os"
	"path/filepath"
	stdsync "sync"
	"testing"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
)

// The templates: dir/ws (newEngine's workspace), dir/fixture
// (newFixture's) and dir/project (a store), made in dir (TestMain's) by
// the first test that asks.
var templates struct {
	once stdsync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "prsm-engine-templates-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	templates.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// templateCommit writes files (relative path, content, ...) under dir and
// commits them all with message msg.
func templateCommit(dir, msg string, files ...string) error {
	for i := 0; i < len(files); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(files[i+1]), 0o644); err != nil {
			return err
		}
	}
	if _, err := testgit.Run(dir, "add", "-A"); err != nil {
		return err
	}
	_, err := testgit.Run(dir, "commit", "-qm", msg)
	return err
}

// makeTemplates makes the templates in dir (the git environment of
// testgit.Env must be set).
func makeTemplates(dir string) error {
	ws, fx, project := filepath.Join(dir, "ws"), filepath.Join(dir, "fixture"), filepath.Join(dir, "project")
	for _, repo := range []string{ws, fx} {
		if err := os.Mkdir(repo, 0o755); err != nil {
			return err
		}
		if _, err := testgit.Run(repo, "init", "-q"); err != nil {
			return err
		}
		if err := templateCommit(repo, "init", "a.txt", "a\n"); err != nil {
			return err
		}
	}
	if err := templateCommit(fx, "files", "f.txt", lines(20, ""), "keep.txt", "keep\n", ".gitignore", "*.log\n"); err != nil {
		return err
	}
	db, err := store.Open(filepath.Join(project, "prsm.db"))
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	// sqlite's shared memory of a closed store, if it left one.
	if err := os.Remove(filepath.Join(project, "prsm.db-shm")); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// fromTemplate copies template name (ws, fixture or project) to dst (a
// path that does not exist yet, or an empty dir): files as os.CopyFS
// makes them, the store's again only its owner's (as store.Open makes
// it); a workspace's index is refreshed.
func fromTemplate(t testing.TB, name, dst string) {
	t.Helper()
	templates.once.Do(func() { templates.err = makeTemplates(templates.dir) })
	if templates.err != nil {
		t.Fatalf("engine test templates: %v", templates.err)
	}
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(templates.dir, name))); err != nil {
		t.Fatalf("copy the engine test template %s: %v", name, err)
	}
	if name == "project" {
		if err := os.Chmod(filepath.Join(dst, "prsm.db"), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	testgit.Git(t, dst, "update-index", "-q", "--refresh")
}
