// Command release builds prsm's release artifacts from the checked-out
// commit: `make release` runs `release archives`, `make npm` runs
// `release npm`.
//
//	release [-out dist] [-targets all|host|os/arch,...] [-version V] [-vsix FILE] archives
//	release [-out dist] [-targets all|host|os/arch,...] [-version V] npm
//	release [-out dist] [-targets all|host|os/arch,...] [-version V] [-vsix FILE] archives npm
//
// Each target is built once, whatever is asked for: given both, the
// archives and the npm packages hold the same binaries.
//
// archives writes, for each target, dist/prsm_<version>_<os>_<arch>.tar.gz
// (.zip for Windows) holding prsm, prsm-hook (.exe on Windows), LICENSE and
// README.md in one directory of the same name, copies the .vsix in, and
// writes SHA256SUMS over them (sha256sum -c reads it).
//
// npm writes dist/npm/*.tgz (npm pack): one package per target with its two
// binaries (@prsm-dev/prsm-<platform>-<arch>, with the os and cpu fields
// npm installs it by) and the main package @prsm-dev/prsm, whose prsm
// command (launcher.js) runs the binary of the platform package installed
// beside it; the platform packages are its optional dependencies, at its
// exact version (the esbuild and biome pattern).
//
// Builds are reproducible: the binaries are built with -trimpath, without
// cgo or a build id, and stamped (-ldflags -X) with the version, the commit
// and the commit's date; archive entries carry the commit's date as their
// time, no owner, fixed modes and a fixed order, and the gzip header no
// time or name. Building one commit twice gives byte-identical archives
// (TestReproducible).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Module is the Go module whose variables the build stamps.
const Module = "github.com/prsm-dev/prsm"

// Targets are the platforms a release is built for, as GOOS/GOARCH.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Target is one platform: GOOS and GOARCH.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "/" + t.Arch }

// Exe is the file name of the command name on t.
func (t Target) Exe(name string) string {
	if t.OS == "windows" {
		return name + ".exe"
	}
	return name
}

// Meta is what a build is stamped with.
type Meta struct {
	Version string    // "1.2.0", "1.2.0-3-g4f2fff7c1a2b", "0.0.0-g4f2fff7c1a2b-dirty"
	Commit  string    // the commit's hash, 12 digits
	Date    time.Time // the commit's date, UTC
	Root    string    // the repository's top directory, which the build runs in
}

// Stamp is the commit's date as the binaries print it.
func (m Meta) Stamp() string { return m.Date.UTC().Format(time.RFC3339) }

func main() {
	out := flag.String("out", "dist", "the directory to write into")
	targets := flag.String("targets", "all", "all, host, or a comma-separated list of os/arch")
	version := flag.String("version", "", "the version (default: from git describe --tags)")
	vsix := flag.String("vsix", "", "archives: the VS Code extension's .vsix to copy into the release")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: release [flags] archives|npm...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	ok := flag.NArg() > 0
	for _, a := range flag.Args() {
		ok = ok && (a == "archives" || a == "npm")
	}
	if !ok {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Args(), ".", *out, *targets, *version, *vsix); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// run makes what ("archives", "npm" or both) of the repository that holds
// dir, building each target once.
func run(what []string, dir, out, targetList, version, vsix string) error {
	ts, err := parseTargets(targetList)
	if err != nil {
		return err
	}
	m, err := gitMeta(dir)
	if err != nil {
		return err
	}
	if version != "" {
		m.Version = strings.TrimPrefix(version, "v")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, err := NewBuilds(out, m)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := Each(ts, func(t Target) error { _, err := b.Of(t); return err }); err != nil {
		return err
	}
	for _, w := range what {
		if err := make1(w, b, out, ts, vsix); err != nil {
			return err
		}
	}
	return nil
}

// make1 makes one of run's what with the builds b.
func make1(what string, b *Builds, out string, ts []Target, vsix string) error {
	m := b.Meta
	switch what {
	case "archives":
		names, err := Archives(out, ts, b)
		if err != nil {
			return err
		}
		if vsix != "" {
			name := "prsm_" + m.Version + ".vsix"
			if err := copyFile(vsix, filepath.Join(out, name), 0o644); err != nil {
				return err
			}
			names = append(names, name)
		}
		if err := WriteSums(out, names); err != nil {
			return err
		}
		for _, n := range append(names, "SHA256SUMS") {
			fi, err := os.Stat(filepath.Join(out, n))
			if err != nil {
				return err
			}
			fmt.Printf("%s/%s\t%.1f MB\n", out, n, float64(fi.Size())/1e6)
		}
	case "npm":
		tgzs, err := NPM(out, ts, b)
		if err != nil {
			return err
		}
		for _, n := range tgzs {
			fi, err := os.Stat(n)
			if err != nil {
				return err
			}
			fmt.Printf("%s\t%.1f MB\n", n, float64(fi.Size())/1e6)
		}
	default:
		return fmt.Errorf("unknown %q: archives or npm", what)
	}
	return nil
}

// parseTargets reads the -targets flag.
func parseTargets(s string) ([]Target, error) {
	switch s {
	case "all":
		return Targets, nil
	case "host":
		return []Target{{runtime.GOOS, runtime.GOARCH}}, nil
	}
	var ts []Target
	for _, f := range strings.Split(s, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(f), "/")
		t := Target{osName, arch}
		known := false
		for _, k := range Targets {
			known = known || k == t
		}
		if !ok || !known {
			return nil, fmt.Errorf("unknown target %q; the targets are all, host, or some of %v", f, Targets)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// gitMeta reads the version, commit and date of the repository in dir's
// HEAD. The version is the nearest tag's (git describe --tags, less its
// "v"), and 0.0.0-g<commit> while there is no tag; a working tree with
// changes adds "-dirty".
func gitMeta(dir string) (Meta, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		b, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return Meta{}, err
	}
	desc, err := git("describe", "--tags", "--always", "--dirty", "--abbrev=12")
	if err != nil {
		return Meta{}, err
	}
	commit, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return Meta{}, err
	}
	ct, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return Meta{}, err
	}
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return Meta{}, fmt.Errorf("commit time %q: %w", ct, err)
	}
	return Meta{Version: describedVersion(desc), Commit: commit, Date: time.Unix(secs, 0).UTC(), Root: root}, nil
}

// describedVersion is git describe's output as a semantic version, which
// npm needs: "v1.2.0" is 1.2.0, "v1.2.0-3-gabc" 1.2.0-3-gabc, and a bare
// hash (no tag yet) 0.0.0-g<hash>.
func describedVersion(desc string) string {
	v := strings.TrimPrefix(desc, "v")
	if !tagged.MatchString(v) {
		return "0.0.0-g" + desc
	}
	return v
}

// tagged matches a version tag's MAJOR.MINOR.PATCH.
var tagged = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`)

// Builds are the binaries of one release, each target's built once (Of)
// into a directory of its own under Dir, for the archives and the npm
// packages alike.
type Builds struct {
	Meta Meta
	Dir  string // absolute; Close removes it
	mu   sync.Mutex
	done map[Target]*build
}

// build is one target's build, made once.
type build struct {
	once sync.Once
	dir  string
	err  error
}

// NewBuilds makes the directory of m's builds in out.
func NewBuilds(out string, m Meta) (*Builds, error) {
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(out, ".build-")
	if err != nil {
		return nil, err
	}
	return &Builds{Meta: m, Dir: dir, done: map[Target]*build{}}, nil
}

// Of is the directory that holds t's prsm and prsm-hook (t.Exe of each),
// built at the first call.
func (b *Builds) Of(t Target) (string, error) {
	b.mu.Lock()
	bd, ok := b.done[t]
	if !ok {
		bd = &build{dir: filepath.Join(b.Dir, t.OS+"_"+t.Arch)}
		b.done[t] = bd
	}
	b.mu.Unlock()
	bd.once.Do(func() {
		start := time.Now()
		if bd.err = Build(bd.dir, t, b.Meta); bd.err == nil {
			fmt.Fprintf(os.Stderr, "release: %s built in %.0fs\n", t, time.Since(start).Seconds())
		}
	})
	return bd.dir, bd.err
}

// Each runs f for each of ts, Jobs at a time, and returns their errors
// (errors.Join). Two builds at once keep both of CI's two cores busy: one links
// (mostly on one core) while the other compiles; and archives compress
// side by side.
func Each(ts []Target, f func(Target) error) error {
	errs := make([]error, len(ts))
	sem := make(chan struct{}, Jobs)
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = f(t)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Jobs is how many targets Each works on at once.
const Jobs = 2

// Close removes the builds.
func (b *Builds) Close() error { return os.RemoveAll(b.Dir) }

// Build builds prsm and prsm-hook for t into dir (absolute), stamped with m.
func Build(dir string, t Target, m Meta) error {
	ldflags := strings.Join([]string{
		"-s", "-w", "-buildid=",
		"-X", Module + ".Version=" + m.Version,
		"-X", Module + ".Commit=" + m.Commit,
		"-X", Module + ".Date=" + m.Stamp(),
	}, " ")
	for _, name := range []string{"prsm", "prsm-hook"} {
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags,
			"-o", filepath.Join(dir, t.Exe(name)), "./cmd/"+name)
		cmd.Dir = m.Root
		cmd.Env = append(os.Environ(), "GOOS="+t.OS, "GOARCH="+t.Arch, "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s for %s: %w", name, t, err)
		}
	}
	return nil
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, mode)
}
