//go:build unix

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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
	head := strings.TrimSpace(gitOut(t, ".", "rev-parse", "HEAD"))
	dir := filepath.Join(t.TempDir(), "prsm")
	root := strings.TrimSpace(gitOut(t, ".", "rev-parse", "--show-toplevel"))
	gitOut(t, ".", "clone", "-q", "--shared", "--no-checkout", root, dir)
	gitOut(t, dir, "checkout", "-q", "--detach", head)
	return dir
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// Building one commit twice, in two checkouts at different paths, gives
// the same archive and SHA256SUMS, byte for byte; the binaries in it print
// the version, the commit and the commit's date; and sha256sum -c, as the
// install instructions have it, accepts the archive and refuses a changed
// one.
func TestReleaseReproducible(t *testing.T) {
	releaseTest(t)
	var outs [2]string
	var m Meta
	for i := range outs {
		src := cloneHead(t)
		if i == 0 {
			var err error
			if m, err = gitMeta(src); err != nil {
				t.Fatal(err)
			}
		}
		outs[i] = filepath.Join(t.TempDir(), "dist")
		start := time.Now()
		if err := run("archives", src, outs[i], "host", "", ""); err != nil {
			t.Fatal(err)
		}
		t.Logf("build %d: %.1fs", i+1, time.Since(start).Seconds())
	}
	base := "prsm_" + m.Version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	archive := base + ".tar.gz"
	for _, n := range []string{archive, "SHA256SUMS"} {
		a, err := os.ReadFile(filepath.Join(outs[0], n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(outs[1], n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of one commit (%d and %d bytes)", n, len(a), len(b))
		}
		t.Logf("%s: %d bytes", n, len(a))
	}

	x := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", filepath.Join(outs[0], archive), "-C", x).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	entries, _ := os.ReadDir(filepath.Join(x, base))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "LICENSE README.md prsm prsm-hook" {
		t.Errorf("the archive holds %s", got)
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
	check := exec.Command("sha256sum", "-c", "--ignore-missing", "SHA256SUMS")
	check.Dir = outs[0]
	if out, err := check.CombinedOutput(); err != nil || !strings.Contains(string(out), archive+": OK") {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
	f, err := os.OpenFile(filepath.Join(outs[1], archive), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{'x'}, 1000)
	f.Close()
	check = exec.Command("sha256sum", "-c", "--ignore-missing", "SHA256SUMS")
	check.Dir = outs[1]
	if out, err := check.CombinedOutput(); err == nil || !strings.Contains(string(out), archive+": FAILED") {
		t.Errorf("sha256sum -c passes a changed archive: %v\n%s", err, out)
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
	src := cloneHead(t)
	out := filepath.Join(t.TempDir(), "dist")
	if err := run("npm", src, out, "host", "", ""); err != nil {
		t.Fatal(err)
	}
	main, _ := filepath.Glob(filepath.Join(out, "npm", "prsm-dev-prsm-[0-9]*.tgz"))
	plat, _ := filepath.Glob(filepath.Join(out, "npm", "prsm-dev-prsm-*-*-[0-9]*.tgz"))
	if len(main) != 1 || len(plat) != 1 {
		t.Fatalf("packed: %v %v", main, plat)
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
