package gemini

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/agents/agent"
)

// geminiRun prepares a `prsm run -- gemini ...` (argv[0] named gemini) in
// the session worktree wt of the workspace ws, whose hooks run prsm at
// self: it returns the environment the run adds, and says on w what it did
// and what the user must do.
//
// Without prsm's hooks installed, the run gets them through a home of its
// own (geminiRunHome) that keeps the user's settings, login and trust;
// should that fail, the run is told to `prsm hooks install gemini`. Gemini
// trusts folders by path,
// and headless it exits 55 in one it does not trust: when it trusts the
// workspace but not the worktree, the run gets GEMINI_CLI_TRUST_WORKSPACE
// (what its --skip-trust sets), which carries the workspace's trust over.
func geminiRun(w io.Writer, argv []string, ws, wt, self string) []string {
	if len(argv) == 0 || strings.TrimSuffix(filepath.Base(argv[0]), ".js") != "gemini" {
		return nil
	}
	installed := false
	var off []string
	for _, root := range []string{"", wt} {
		path, err := geminiSettingsPath(root)
		if err != nil {
			continue
		}
		s, _, err := readGeminiSettings(path)
		if err != nil || s == nil {
			continue
		}
		if removed, _ := removeGeminiHooks(s); len(removed) > 0 {
			installed = true
		}
		// removeGeminiHooks leaves hooksConfig alone.
		off = append(off, geminiHooksOff(s)...)
	}
	var env []string
	if !installed {
		var err error
		if env, err = geminiRunHome(self); err != nil {
			fmt.Fprintf(w, "prsm: could not add prsm's Gemini CLI hooks for this run (%s); its changes come in as Watch records. `prsm hooks install gemini` installs them for good\n", agent.OneLine(strings.TrimSpace(err.Error())))
		}
	}
	for _, o := range off {
		fmt.Fprintf(w, "prsm: warning: %s\n", o)
	}
	if os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") != "" || os.Getenv("GEMINI_RESTRICTED_MODE") == "true" {
		return env // the user decided
	}
	rules := geminiTrustRules()
	if geminiTrusted(rules, ws) != 1 || geminiTrusted(rules, wt) == 1 {
		return env
	}
	fmt.Fprintf(w, "prsm: Gemini CLI trusts the workspace %s; the session's worktree is trusted for this run too (GEMINI_CLI_TRUST_WORKSPACE=true)\n", ws)
	return append(env, "GEMINI_CLI_TRUST_WORKSPACE=true")
}

// geminiTrustRules reads Gemini CLI's trusted folders file (path: trust
// level); none when it is missing or unreadable.
func geminiTrustRules() map[string]string {
	path := os.Getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
	if path == "" {
		user, err := geminiSettingsPath("")
		if err != nil {
			return nil
		}
		path = filepath.Join(filepath.Dir(user), "trustedFolders.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var raw map[string]any
	if json.Unmarshal(stripJSONComments(data), &raw) != nil {
		return nil
	}
	rules := map[string]string{}
	for p, v := range raw {
		if level, ok := v.(string); ok {
			rules[p] = level
		}
	}
	return rules
}

// geminiTrusted applies Gemini CLI's trust rules to dir as it does (the
// longest matching rule path wins; TRUST_PARENT trusts the rule's parent
// directory): 1 trusted, -1 not trusted, 0 no rule matches.
func geminiTrusted(rules map[string]string, dir string) int {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	loc := real(dir)
	best, verdict := -1, 0
	for rule, level := range rules {
		eff := rule
		switch level {
		case "TRUST_PARENT":
			eff = filepath.Dir(rule)
		case "TRUST_FOLDER", "DO_NOT_TRUST":
		default:
			continue
		}
		rel, err := filepath.Rel(real(eff), loc)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			continue
		}
		if len(rule) > best {
			best = len(rule)
			verdict = 1
			if level == "DO_NOT_TRUST" {
				verdict = -1
			}
		}
	}
	return verdict
}
