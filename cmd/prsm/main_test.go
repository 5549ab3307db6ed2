package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"prsm": func() { os.Exit(Main()) }})
}

// TestScripts runs the CLI end to end: the real binary against real git
// repositories in temp dirs (testdata/script/*.txtar).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: setupScript,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sametree":        cmdSameTree,
			"setjson":         cmdSetJSON,
			"ambiguousprefix": cmdAmbiguousPrefix,
		},
	})
}

// setupScript gives each script a clean git and prsm environment, and stops
// any server the script started when it ends.
func setupScript(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	cfg := filepath.Join(home, ".gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		return err
	}
	prsmHome := filepath.Join(env.WorkDir, ".prsm")
	env.Setenv("HOME", home)
	env.Setenv("GIT_CONFIG_GLOBAL", cfg)
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env.Setenv("PRSM_HOME", prsmHome)
	env.Defer(func() { stopServers(prsmHome) })
	return nil
}

// stopServers terminates every server that left a server.json under home.
func stopServers(home string) {
	files, _ := filepath.Glob(filepath.Join(home, "projects", "*", server.InfoFile))
	for _, f := range files {
		info, err := server.ReadInfo(filepath.Dir(f))
		if err != nil || info.PID <= 0 {
			continue
		}
		syscall.Kill(info.PID, syscall.SIGTERM)
		for i := 0; i < 100 && syscall.Kill(info.PID, 0) == nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// sametree A B: the files under A (less .git and git-ignored files) equal
// those under B byte for byte, with modes and symlinks.
func cmdSameTree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sametree DIR DIR")
	}
	a, b := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	skip, err := testgit.IgnoredOf(a)
	ts.Check(err)
	ta, err := testgit.TreeOf(a, skip)
	ts.Check(err)
	tb, err := testgit.TreeOf(b, nil)
	ts.Check(err)
	d := testgit.Diff(ta, tb)
	if neg && d == "" {
		ts.Fatalf("trees are equal")
	}
	if !neg && d != "" {
		ts.Fatalf("trees differ:\n%s", d)
	}
}

// setjson NAME FILE FIELD: sets $NAME to FIELD of the JSON object in FILE.
func cmdSetJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: setjson NAME FILE FIELD")
	}
	var m map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &m))
	v, ok := m[args[2]]
	if !ok {
		ts.Fatalf("no field %q in %s", args[2], args[1])
	}
	ts.Setenv(args[0], fmt.Sprint(v))
}

// ambiguousprefix NAME FILE: FILE holds a JSON list of sessions; sets $NAME
// to a one-character prefix shared by at least two of their ids.
func cmdAmbiguousPrefix(ts *testscript.TestScript, neg bool, args []string) {
	var list []struct{ ID string }
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &list))
	seen := map[string]int{}
	for _, s := range list {
		seen[s.ID[:1]]++
	}
	var keys []string
	for k, n := range seen {
		if n > 1 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		ts.Fatalf("no shared prefix among %d sessions", len(list))
	}
	sort.Strings(keys)
	ts.Setenv(args[0], keys[0])
	ts.Logf("ambiguous prefix %s among %s", keys[0], strings.Repeat("*", seen[keys[0]]))
}
