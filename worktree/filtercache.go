package worktree

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	stdsync "sync"
)

// Filter drivers without a git process each time. The drivers git sees
// where a call runs are the union of those each config file it reads
// defines (the repository's config does not unset the user's), so
// cachedDrivers reads those files itself and asks git only for a file
// whose bytes it has not seen, parsing exactly those bytes (git config
// -f -): the names kept for a file are a function of its content, never
// of when it was read, so a driver defined after the fact changes the
// bytes and is asked for. A file that cannot name a filter (no "filter"
// in it, in any case; section names have no escapes) needs no git at
// all. It gives up, and filterDrivers asks git as before, wherever it
// cannot name every file git reads: an include (include.path, includeIf)
// in any of them, a .git that is a file or not plainly a repository
// (discovery would go elsewhere), a relative $HOME, Windows (git reads
// ProgramData's config there too). The gap is the one filterDrivers
// has: a driver defined between the read and the call.

// driverFile is what a config file held when git listed its drivers.
type driverFile struct {
	content string
	names   []string
}

// driverCache is cachedDrivers' memory, shared by every runner: by git
// binary and path, the last content seen and its drivers; by git binary,
// its system config file.
var driverCache struct {
	mu     stdsync.Mutex
	files  map[string]driverFile
	system map[string]string
	asked  int // git processes cachedDrivers started (for tests)
}

// maxConfigFile is the largest config file cachedDrivers keeps.
const maxConfigFile = 1 << 20

// cachedDrivers is filterDrivers from the config files' content; ok is
// false where it cannot tell which files git reads.
func (r *Runner) cachedDrivers(ctx context.Context, c *Cmd) (names []string, ok bool) {
	if !driverCacheable {
		return nil, false
	}
	files, ok := r.configFiles(ctx, c)
	if !ok {
		return nil, false
	}
	for _, f := range files {
		more, ok := r.fileDrivers(ctx, c, f)
		if !ok {
			return nil, false
		}
		for _, n := range more {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names, true
}

// configFiles is every config file git could read where c runs (a
// superset: a file git skips adds drivers to switch off, never misses
// one).
func (r *Runner) configFiles(ctx context.Context, c *Cmd) ([]string, bool) {
	var gitDir string
	switch {
	case c.linked.GitDir != "":
		gitDir = c.linked.GitDir
	case c.dir != "":
		gitDir = under(c.dir, ".git")
		if !plainRepo(gitDir) {
			return nil, false
		}
	default:
		return nil, false
	}
	common, ok := commonDir(gitDir)
	if !ok {
		return nil, false
	}
	files := []string{under(common, "config"), under(gitDir, "config"), under(gitDir, "config.worktree")}
	home := os.Getenv("HOME")
	if !filepath.IsAbs(home) {
		return nil, false
	}
	files = append(files, under(home, ".gitconfig"), under(home, ".config/git/config"))
	for _, v := range []string{"XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"} {
		p, set := os.LookupEnv(v)
		if !set || (p == "" && v == "XDG_CONFIG_HOME") {
			continue
		}
		if !filepath.IsAbs(p) {
			return nil, false
		}
		if v == "XDG_CONFIG_HOME" {
			p = under(p, "git/config")
		}
		files = append(files, p)
	}
	if !noSystemConfig() {
		sys, ok := r.systemConfig(ctx)
		if !ok {
			return nil, false
		}
		files = append(files, sys)
	}
	return files, true
}

// noSystemConfig reports whether GIT_CONFIG_NOSYSTEM surely keeps git
// from reading the system config (any value it might not: no).
func noSystemConfig() bool {
	switch strings.ToLower(os.Getenv("GIT_CONFIG_NOSYSTEM")) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// systemConfig is the system config file git reads: $GIT_CONFIG_SYSTEM,
// or the one git was built with, which git itself names once per binary
// (the file `git config --system --edit` would open, given echo as the
// editor).
func (r *Runner) systemConfig(ctx context.Context) (string, bool) {
	if p, set := os.LookupEnv("GIT_CONFIG_SYSTEM"); set {
		return p, filepath.IsAbs(p)
	}
	bin := r.bin()
	driverCache.mu.Lock()
	p, known := driverCache.system[bin]
	driverCache.mu.Unlock()
	if !known {
		out, err := r.listGit(ctx, []string{"-C", os.TempDir(), "config", "--system", "--edit"}, nil, "GIT_EDITOR=echo")
		p = strings.TrimSuffix(string(out), "\n")
		if err != nil || !filepath.IsAbs(p) || strings.Contains(p, "\n") {
			p = ""
		}
		driverCache.mu.Lock()
		if driverCache.system == nil {
			driverCache.system = map[string]string{}
		}
		driverCache.system[bin] = p
		driverCache.asked++
		driverCache.mu.Unlock()
	}
	return p, p != ""
}

// fileDrivers are the drivers the config file at path defines now.
func (r *Runner) fileDrivers(ctx context.Context, c *Cmd, path string) ([]string, bool) {
	b, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return nil, true // git reads nothing there either
	}
	if err != nil || containsFold(b, "include") {
		return nil, false
	}
	if !containsFold(b, "filter") {
		return nil, true
	}
	key := r.bin() + "\x00" + path
	driverCache.mu.Lock()
	f, ok := driverCache.files[key]
	driverCache.mu.Unlock()
	if ok && f.content == string(b) {
		return f.names, true
	}
	loc, err := r.location(c)
	if err != nil {
		return nil, false
	}
	out, err := r.listGit(ctx, append(loc, "config", "-f", "-", "-z", "--name-only", "--get-regexp", `^filter\.`), b)
	var names []string
	switch {
	case err == nil:
		names = driverNames(out)
	case ExitCode(err) != 1 || len(out) > 0:
		return nil, false
	}
	driverCache.mu.Lock()
	if driverCache.files == nil || len(driverCache.files) >= 1024 {
		driverCache.files = map[string]driverFile{}
	}
	driverCache.files[key] = driverFile{content: string(b), names: names}
	driverCache.asked++
	driverCache.mu.Unlock()
	return names, true
}

// readConfig reads the config file at path: a regular file of
// maxConfigFile bytes at most. Opened without waiting, so that a FIFO
// put where git may not even look (a config.worktree without
// extensions.worktreeConfig) cannot hold the runner up.
func readConfig(path string) ([]byte, error) {
	b, err := readRegular(path, openNoWait, maxConfigFile)
	if err == nil && len(b) > maxConfigFile {
		err = errors.New("config file too large")
	}
	return b, err
}

// plainRepo reports whether git, run in the directory above gitDir,
// surely takes gitDir as its repository: a directory that git's own
// test (is_git_directory) accepts, HEAD a symbolic ref to refs/ or a
// commit id, objects and refs directories it may enter. Anything else
// (a .git file, a broken repository git would pass over for a parent
// directory's) is left to git.
func plainRepo(gitDir string) bool {
	if fi, err := os.Stat(gitDir); err != nil || !fi.IsDir() {
		return false
	}
	head := under(gitDir, "HEAD")
	if fi, err := os.Lstat(head); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	b, err := os.ReadFile(head)
	if err != nil {
		return false
	}
	if ref, ok := strings.CutPrefix(string(b), "ref:"); ok {
		if !strings.HasPrefix(strings.TrimLeft(ref, " \t\n\v\f\r"), "refs/") {
			return false
		}
	} else if len(b) < 40 || strings.Trim(string(b[:40]), "0123456789abcdefABCDEF") != "" {
		return false
	}
	common, ok := commonDir(gitDir)
	return ok && canEnter(under(common, "objects")) && canEnter(under(common, "refs"))
}

// commonDir is the common git directory of gitDir, as git finds it: the
// path its commondir file names (relative to gitDir), else gitDir.
func commonDir(gitDir string) (string, bool) {
	b, err := os.ReadFile(under(gitDir, "commondir"))
	if errors.Is(err, fs.ErrNotExist) {
		return gitDir, true
	}
	if err != nil {
		return "", false
	}
	p := strings.TrimRight(string(b), "\r\n")
	if p == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = under(gitDir, p)
	}
	return p, true
}

// driverNames are the <name>s of git config -z --name-only's
// filter.<name>.<key> lines.
func driverNames(out []byte) []string {
	var names []string
	for _, key := range strings.Split(string(out), "\x00") {
		rest, ok := strings.CutPrefix(key, "filter.")
		i := strings.LastIndexByte(rest, '.')
		if !ok || i <= 0 {
			continue
		}
		if name := rest[:i]; !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// containsFold reports whether b holds word (lower-case ASCII) in any
// case.
func containsFold(b []byte, word string) bool {
	for i := 0; i+len(word) <= len(b); i++ {
		j := 0
		for j < len(word) && b[i+j]|0x20 == word[j] {
			j++
		}
		if j == len(word) {
			return true
		}
	}
	return false
}

// under is dir/name as git writes it: joined, not cleaned, so that the
// system resolves "..", after symlinks, as it does for git.
func under(dir, name string) string {
	return dir + "/" + name
}
