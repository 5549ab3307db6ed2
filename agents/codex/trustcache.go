package codex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
)

// The answer of hooks/list (0.6 to 0.7 s of `codex app-server`) is kept
// under PRSM_HOME (agents/codex-trust.json), by a key of everything the
// trust depends on: the codex binary (path, size, time), prsm's -c
// flags, and the content of every config and hooks file Codex would read
// for dir. A run asks again only when one of them changed.

// codexTrustAnswer is what one hooks/list told: prsm's hooks installed
// and trusted, or the trust of the run's own.
type codexTrustAnswer struct {
	Installed bool              `json:"installed,omitempty"`
	Trust     map[string]string `json:"trust,omitempty"`
}

// maxCodexTrustEntries bounds the answers kept.
const maxCodexTrustEntries = 32

// listCodexHooks is codexListHooks; tests count its calls.
var listCodexHooks = codexListHooks

// codexTrustFor is codexTrust of what Codex lists, from the kept answer
// when nothing it depends on changed.
func codexTrustFor(ctx context.Context, codex string, flags []string, dir string, env []string, command string) (map[string]string, error) {
	key := codexTrustKey(codex, flags, dir, env)
	cache, file := readCodexTrust()
	if a, ok := cache[key]; ok && key != "" {
		if a.Installed {
			return nil, errCodexHooksInstalled
		}
		if len(a.Trust) == len(codexHookEvents) {
			return a.Trust, nil
		}
	}
	hooks, err := listCodexHooks(ctx, codex, flags, dir, env)
	if err != nil {
		return nil, err
	}
	trust, err := codexTrust(hooks, command)
	if key != "" && file != "" && (err == nil || err == errCodexHooksInstalled) {
		if len(cache) >= maxCodexTrustEntries {
			cache = map[string]codexTrustAnswer{}
		}
		cache[key] = codexTrustAnswer{Installed: err != nil, Trust: trust}
		if b, merr := json.Marshal(cache); merr == nil && os.MkdirAll(filepath.Dir(file), 0o700) == nil {
			agent.WriteFileAtomic(file, b, 0o600) // a cache: a failed write only costs the next run a question
		}
	}
	return trust, err
}

func readCodexTrust() (map[string]codexTrustAnswer, string) {
	cache := map[string]codexTrustAnswer{}
	home, err := prsm.Home()
	if err != nil {
		return cache, ""
	}
	file := filepath.Join(home, "agents", "codex-trust.json")
	if b, err := os.ReadFile(file); err == nil {
		json.Unmarshal(b, &cache)
	}
	return cache, file
}

// codexTrustKey hashes what Codex's trust of prsm's hooks depends on;
// "" when the codex binary cannot be found.
func codexTrustKey(codex string, flags []string, dir string, env []string) string {
	path := codex
	if !filepath.IsAbs(path) {
		p, err := exec.LookPath(codex)
		if err != nil {
			return ""
		}
		path = p
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	fi, err := os.Stat(real)
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "codex %s %d %d\n", real, fi.Size(), fi.ModTime().UnixNano())
	for _, f := range flags {
		fmt.Fprintf(h, "flag %q\n", f)
	}
	lookup := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	home := lookup("CODEX_HOME")
	if home == "" && lookup("HOME") != "" {
		home = filepath.Join(lookup("HOME"), ".codex")
	}
	fmt.Fprintf(h, "home %q\n", home)
	files := []string{filepath.Join(home, "config.toml"), filepath.Join(home, "hooks.json"),
		"/etc/codex/config.toml", "/etc/codex/managed_config.toml", "/etc/codex/requirements.toml"}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		files = append(files, filepath.Join(d, ".codex", "config.toml"), filepath.Join(d, ".codex", "hooks.json"))
		if d == filepath.Dir(d) {
			break
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		fmt.Fprintf(h, "file %q %v %d\n", f, err == nil, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
