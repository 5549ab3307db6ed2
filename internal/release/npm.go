package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Package is the npm package's name; each platform's is Package-<os>-<cpu>
// in Node's names (linux-x64, darwin-arm64, win32-x64, ...).
const Package = "@prsm-dev/prsm"

// launcher is the main package's bin/prsm.js.
//
//go:embed launcher.js
var launcher []byte

// nodeOS and nodeCPU are Node's names (process.platform, process.arch,
// package.json's os and cpu) of GOOS and GOARCH.
var (
	nodeOS  = map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}
	nodeCPU = map[string]string{"amd64": "x64", "arm64": "arm64"}
)

// PlatformPackage is the name of t's npm package.
func PlatformPackage(t Target) string {
	return Package + "-" + nodeOS[t.OS] + "-" + nodeCPU[t.Arch]
}

// manifest is a package.json.
type manifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	License              string            `json:"license"`
	Homepage             string            `json:"homepage"`
	Repository           map[string]string `json:"repository"`
	OS                   []string          `json:"os,omitempty"`
	CPU                  []string          `json:"cpu,omitempty"`
	Bin                  map[string]string `json:"bin,omitempty"`
	Files                []string          `json:"files"`
	Engines              map[string]string `json:"engines,omitempty"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
}

// NPM writes out/npm/*.tgz: a platform package for each target in ts and
// the main package, which names every target's as an optional dependency
// whether built or not; the binaries are b's. It returns the tarballs'
// paths.
func NPM(out string, ts []Target, b *Builds) ([]string, error) {
	m := b.Meta
	dest, err := filepath.Abs(filepath.Join(out, "npm"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(dest, ".stage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	common := func(name, desc string) manifest {
		return manifest{
			Name: name, Version: m.Version, Description: desc, License: "MIT",
			Homepage:   "https://github.com/prsm-dev/prsm",
			Repository: map[string]string{"type": "git", "url": "git+https://github.com/prsm-dev/prsm.git"},
		}
	}
	var tgzs []string
	for i, t := range ts {
		dir := filepath.Join(stage, fmt.Sprint("p", i))
		bin, err := b.Of(t)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
			return nil, err
		}
		for _, name := range []string{t.Exe("prsm"), t.Exe("prsm-hook")} {
			if err := copyFile(filepath.Join(bin, name), filepath.Join(dir, "bin", name), 0o755); err != nil {
				return nil, err
			}
		}
		p := common(PlatformPackage(t), fmt.Sprintf("The prsm binaries for %s (%s installs this)", t, Package))
		p.OS, p.CPU, p.Files = []string{nodeOS[t.OS]}, []string{nodeCPU[t.Arch]}, []string{"bin/"}
		if err := writePackage(dir, p, m); err != nil {
			return nil, err
		}
		tgz, err := pack(dir, dest)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "release: %s packed\n", filepath.Base(tgz))
		tgzs = append(tgzs, tgz)
	}
	dir := filepath.Join(stage, "main")
	p := common(Package, "prsm gives every AI agent session its own worktree and lets you review each change")
	p.Bin, p.Files = map[string]string{"prsm": "bin/prsm.js"}, []string{"bin/"}
	p.Engines = map[string]string{"node": ">=18"}
	p.OptionalDependencies = map[string]string{}
	for _, t := range Targets {
		p.OptionalDependencies[PlatformPackage(t)] = m.Version
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "prsm.js"), launcher, 0o755); err != nil {
		return nil, err
	}
	if err := writePackage(dir, p, m); err != nil {
		return nil, err
	}
	tgz, err := pack(dir, dest)
	if err != nil {
		return nil, err
	}
	return append(tgzs, tgz), nil
}

// writePackage writes dir/package.json and copies the repository's README
// and LICENSE beside it (npm packs both whatever files says).
func writePackage(dir string, p manifest, m Meta) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // ">=18", not "\u003e=18"
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), b.Bytes(), 0o644); err != nil {
		return err
	}
	for _, f := range []string{"README.md", "LICENSE"} {
		if err := copyFile(filepath.Join(m.Root, f), filepath.Join(dir, f), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pack runs npm pack in dir, writing the tarball into dest, and returns its
// path.
func pack(dir, dest string) (string, error) {
	cmd := exec.Command("npm", "pack", "--json", "--ignore-scripts", "--loglevel=error", "--pack-destination", dest)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack in %s: %w", dir, err)
	}
	var res []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res) != 1 {
		return "", fmt.Errorf("npm pack in %s: unexpected output %q", dir, b)
	}
	return filepath.Join(dest, res[0].Filename), nil
}
