//go:build unix

package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests named TestRelease build prsm (make releasecheck runs them);
// without PRSM_RELEASE_TEST=1 they are skipped, so that make unit does not
// build twice what make releasecheck builds.
func releaseTest(t *testing.T) {
	t.Helper()
	if os.Getenv("PRSM_RELEASE_TEST") != "1" {
		t.Skip("builds releases: run with PRSM_RELEASE_TEST=1 (make releasecheck)")
	}
}

// cloneHead is a clone of this repository's HEAD at a new path: the commit
// alone, without the working tree's changes.
func cloneHead(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "prsm")
	if err := cloneHeadAt(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cloneHeadAt clones this repository's HEAD into dir.
func cloneHeadAt(dir string) error {
	head, err := gitOut(".", "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	root, err := gitOut(".", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	if _, err := gitOut(".", "clone", "-q", "--shared", "--no-checkout", root, dir); err != nil {
		return err
	}
	_, err = gitOut(dir, "checkout", "-q", "--detach", head)
	return err
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// built is the release of HEAD for every target, its archives and its npm
// packages (`make release` and `make npm` in one, each target built once),
// made in a clone of HEAD by the first test that asks for it (release).
var built struct {
	once sync.Once
	dir  string // a scratch directory of the package's tests; TestMain removes it
	out  string // dir/dist
	m    Meta
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// release is built's dist directory and the release's Meta.
func release(t *testing.T) (string, Meta) {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "prsm-release-test-"); built.err != nil {
			return
		}
		src := filepath.Join(built.dir, "prsm")
		if built.err = cloneHeadAt(src); built.err != nil {
			return
		}
		if built.m, built.err = gitMeta(src); built.err != nil {
			return
		}
		built.out = filepath.Join(built.dir, "dist")
		start := time.Now()
		built.err = run([]string{"archives", "npm"}, src, built.out, "all", "", "")
		t.Logf("the release for %d targets and its npm packages: %.1fs", len(Targets), time.Since(start).Seconds())
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.out, built.m
}

// Building one commit twice, in two checkouts at different paths, gives
// the same archive and checksum, byte for byte; the binaries in it print
// the version, the commit and the commit's date; and sha256sum -c, as the
// install instructions have it, accepts the release and refuses a changed
// archive. The second build is this platform's alone.
func TestReleaseReproducible(t *testing.T) {
	releaseTest(t)
	first, m := release(t)
	second := filepath.Join(t.TempDir(), "dist")
	start := time.Now()
	if err := run([]string{"archives"}, cloneHead(t), second, "host", "", ""); err != nil {
		t.Fatal(err)
	}
	t.Logf("second build (%s): %.1fs", runtime.GOOS+"/"+runtime.GOARCH, time.Since(start).Seconds())
	base := "prsm_" + m.Version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	archive := base + ".tar.gz"
	a, err := os.ReadFile(filepath.Join(first, archive))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(second, archive))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s differs between two builds of one commit (%d and %d bytes)", archive, len(a), len(b))
	}
	if a, b := sumLine(t, first, archive), sumLine(t, second, archive); a == "" || a != b {
		t.Errorf("SHA256SUMS of two builds of one commit say %q and %q of %s", a, b, archive)
	}
	t.Logf("%s: %d bytes", archive, len(a))

	x := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", filepath.Join(first, archive), "-C", x).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	for _, bin := range []string{"prsm", "prsm-hook"} {
		out, err := exec.Command(filepath.Join(x, base, bin), "--version").Output()
		want := bin + " version " + m.Version + " (commit " + m.Commit + ", " + m.Stamp() + ")\n"
		if err != nil || string(out) != want {
			t.Errorf("%s --version: %q %v, want %q", bin, out, err, want)
		}
	}

	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Log("no sha256sum here: the checksum check is not tried")
		return
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = first
	out, err := check.CombinedOutput()
	if err != nil || strings.Count(string(out), ": OK\n") != len(Targets) {
		t.Errorf("sha256sum -c of the release: %v\n%s", err, out)
	}
	f, err := os.OpenFile(filepath.Join(second, archive), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{'x'}, 1000)
	f.Close()
	check = exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = second
	if out, err := check.CombinedOutput(); err == nil || !strings.Contains(string(out), archive+": FAILED") {
		t.Errorf("sha256sum -c passes a changed archive: %v\n%s", err, out)
	}
}

// sumLine is SHA256SUMS's line of name in dir.
func sumLine(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(l, "  "+name) {
			return l
		}
	}
	return ""
}

// Every target's archive, and its npm package, holds prsm and prsm-hook
// built for it (the executable format and the machine of the target),
// stamped with the version and the commit, beside LICENSE and README.md;
// the npm package holds the archive's very binaries and says its os and
// cpu. CI builds all six targets here, so that none can stop building.
func TestReleaseAllTargets(t *testing.T) {
	releaseTest(t)
	dist, m := release(t)
	license, err := os.ReadFile(filepath.Join(m.Root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range Targets {
		base := "prsm_" + m.Version + "_" + tg.OS + "_" + tg.Arch
		name := base + ".tar.gz"
		if tg.OS == "windows" {
			name = base + ".zip"
		}
		files := archiveFiles(t, filepath.Join(dist, name))
		var names []string
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		want := []string{base + "/", base + "/LICENSE", base + "/README.md", base + "/" + tg.Exe("prsm"), base + "/" + tg.Exe("prsm-hook")}
		sort.Strings(want)
		if strings.Join(names, " ") != strings.Join(want, " ") {
			t.Errorf("%s holds %v, want %v", name, names, want)
			continue
		}
		if !bytes.Equal(files[base+"/LICENSE"], license) {
			t.Errorf("%s: LICENSE is not the repository's", name)
		}
		pkg := packageFiles(t, npmTgz(dist, PlatformPackage(tg), m.Version))
		var man manifest
		if err := json.Unmarshal(pkg["package/package.json"], &man); err != nil {
			t.Errorf("%s: package.json: %v", PlatformPackage(tg), err)
		} else if man.Name != PlatformPackage(tg) || man.Version != m.Version || strings.Join(man.OS, ",") != nodeOS[tg.OS] || strings.Join(man.CPU, ",") != nodeCPU[tg.Arch] {
			t.Errorf("%s: package.json says %s@%s os %v cpu %v", PlatformPackage(tg), man.Name, man.Version, man.OS, man.CPU)
		}
		for _, bin := range []string{tg.Exe("prsm"), tg.Exe("prsm-hook")} {
			b := files[base+"/"+bin]
			if err := builtFor(b, tg); err != nil {
				t.Errorf("%s: %s: %v", name, bin, err)
			}
			if !bytes.Contains(b, []byte(m.Version)) || !bytes.Contains(b, []byte(m.Commit)) {
				t.Errorf("%s: %s is not stamped with version %s and commit %s", name, bin, m.Version, m.Commit)
			}
			if !bytes.Equal(pkg["package/bin/"+bin], b) {
				t.Errorf("%s: bin/%s is not the archive's", PlatformPackage(tg), bin)
			}
		}
		if fi, err := os.Stat(filepath.Join(dist, name)); err == nil {
			t.Logf("%s: %.1f MB (prsm %.1f MB, prsm-hook %.1f MB)", name, float64(fi.Size())/1e6,
				float64(len(files[base+"/"+tg.Exe("prsm")]))/1e6, float64(len(files[base+"/"+tg.Exe("prsm-hook")]))/1e6)
		}
	}
}

// npmTgz is the tarball npm pack wrote into dist/npm for the package pkg
// at version: @scope/name-1.0.0 is scope-name-1.0.0.tgz.
func npmTgz(dist, pkg, version string) string {
	name := strings.ReplaceAll(strings.TrimPrefix(pkg, "@"), "/", "-")
	return filepath.Join(dist, "npm", name+"-"+version+".tgz")
}

// builtFor says why b is not an executable for t, if it is not.
func builtFor(b []byte, t Target) error {
	r := bytes.NewReader(b)
	switch t.OS {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return err
		}
		if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[t.Arch]; f.Machine != want || f.Type != elf.ET_EXEC {
			return fmt.Errorf("ELF %v %v, want %v executable", f.Machine, f.Type, want)
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return err
		}
		if want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[t.Arch]; f.Cpu != want || f.Type != macho.TypeExec {
			return fmt.Errorf("Mach-O %v %v, want %v executable", f.Cpu, f.Type, want)
		}
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return err
		}
		if want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[t.Arch]; f.Machine != want || f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
			return fmt.Errorf("PE machine %#x characteristics %#x, want %#x executable", f.Machine, f.Characteristics, want)
		}
	default:
		return fmt.Errorf("no check for %s", t)
	}
	return nil
}

// archiveFiles reads a .tar.gz or a .zip: each entry's content by name.
func archiveFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		files := map[string][]byte{}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", path, f.Name, err)
			}
			files[f.Name] = b
		}
		return files
	}
	return packageFiles(t, path)
}

// packageFiles reads a .tar.gz (an npm package's .tgz too): each entry's
// content by name.
func packageFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
		files[h.Name] = b
	}
}

// `npm install -g` from the packed tarballs into a scratch prefix, with no
// registry to reach, gives a prsm command that runs this platform's binary:
// --version, then `prsm demo` up to the review page's address, and a
// Ctrl-C (SIGINT to the launcher alone) that stops the demo and removes its
// scratch repository. Without the platform package, and on a platform with
// none, prsm says which platforms there are and how to build from source.
func TestReleaseNPMInstall(t *testing.T) {
	releaseTest(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is needed")
	}
	out, m := release(t)
	main := []string{npmTgz(out, Package, m.Version)}
	plat := []string{npmTgz(out, PlatformPackage(Target{runtime.GOOS, runtime.GOARCH}), m.Version)}
	if all, _ := filepath.Glob(filepath.Join(out, "npm", "*.tgz")); len(all) != len(Targets)+1 {
		t.Fatalf("packed: %v, want the main package and %d platform packages", all, len(Targets))
	}

	home := t.TempDir()
	env := append(os.Environ(),
		"HOME="+home, "PRSM_HOME="+filepath.Join(home, ".prsm"), "TMPDIR="+t.TempDir(),
		"npm_config_cache="+filepath.Join(home, ".npm"),
		"npm_config_registry=http://127.0.0.1:9/", // nothing listens there
		"npm_config_offline=true", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
	install := func(prefix string, tgzs ...string) {
		t.Helper()
		cmd := exec.Command("npm", append([]string{"install", "-g", "--prefix", prefix}, tgzs...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install -g: %v\n%s", err, out)
		}
	}

	prefix := filepath.Join(home, "global")
	start := time.Now()
	install(prefix, main[0], plat[0])
	installed := time.Since(start)
	prsmCmd := filepath.Join(prefix, "bin", "prsm")
	cmd := exec.Command(prsmCmd, "--version")
	cmd.Env = env
	if v, err := cmd.Output(); err != nil || !strings.HasPrefix(string(v), "prsm version ") {
		t.Fatalf("prsm --version: %q %v", v, err)
	}

	demo := exec.Command(prsmCmd, "demo")
	demo.Env = append(env, "PATH="+filepath.Join(prefix, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	demo.Dir = home
	// The launcher and what it starts, in a group of their own: if the
	// demo hangs, or outlives its launcher, the group is killed and the
	// test reads the end of its output.
	demo.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := demo.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	demo.Stderr = &stderr
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(2*time.Minute, func() { syscall.Kill(-demo.Process.Pid, syscall.SIGKILL) })
	defer hung.Stop()
	var seen strings.Builder
	address := ""
	sc := bufio.NewScanner(stdout)
	for address == "" && sc.Scan() {
		line := sc.Text()
		seen.WriteString(line + "\n")
		if s := strings.TrimSpace(line); strings.HasPrefix(s, "http://") {
			address = s
		}
	}
	if address == "" {
		demo.Wait()
		t.Fatalf("prsm demo printed no address:\n%s\nstderr:\n%s", seen.String(), stderr.String())
	}
	t.Logf("npm install -g %.1fs; to the demo's address %.1fs (%s)", installed.Seconds(), time.Since(start).Seconds(), address)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "runs until you press Ctrl-C") {
			break
		}
	}
	demo.Process.Signal(syscall.SIGINT)
	hung.Reset(time.Minute)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
	}
	err = demo.Wait()
	if !strings.Contains(seen.String(), "stopping the demo server and removing") {
		t.Errorf("prsm demo did not stop on SIGINT to its launcher (%v):\n%s\nstderr:\n%s", err, seen.String(), stderr.String())
	}
	if !strings.Contains(seen.String(), "\n  prsm changes diff\n") || strings.Contains(seen.String(), "not the one on your PATH") {
		t.Errorf("prsm demo's hints do not name the prsm on PATH, the npm command:\n%s", seen.String())
	}
	if left, _ := filepath.Glob(filepath.Join(envValue(env, "TMPDIR"), "prsm-demo-*")); len(left) > 0 {
		t.Errorf("the demo left %v", left)
	}

	// Only the main package: its optional dependency is missing.
	bare := filepath.Join(home, "bare")
	install(bare, main[0])
	cmd = exec.Command(filepath.Join(bare, "bin", "prsm"), "--version")
	cmd.Env = env
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "is not installed") || !strings.Contains(string(msg), "make install") {
		t.Errorf("prsm without its platform package: %v\n%s", err, msg)
	}
	// A platform with no package (Node on a 32-bit x86, say).
	pre := filepath.Join(home, "ia32.js")
	os.WriteFile(pre, []byte("Object.defineProperty(process, 'arch', { value: 'ia32' });\n"), 0o644)
	cmd = exec.Command("node", "--require", pre, filepath.Join(bare, "lib", "node_modules", "@prsm-dev", "prsm", "bin", "prsm.js"), "--version")
	cmd.Env = env
	msg, err = cmd.CombinedOutput()
	want := "no prebuilt prsm for " + runtime.GOOS + "-ia32; there is one for darwin-arm64, darwin-x64, linux-arm64, linux-x64, win32-arm64, win32-x64"
	if err == nil || !strings.Contains(string(msg), want) || !strings.Contains(string(msg), "git clone https://github.com/prsm-dev/prsm && cd prsm && make install") {
		t.Errorf("prsm on a platform with no package: %v\n%s\nwant %q", err, msg, want)
	}
}

func envValue(env []string, key string) string {
	v := ""
	for _, e := range env {
		if k, val, ok := strings.Cut(e, "="); ok && k == key {
			v = val
		}
	}
	return v
}
