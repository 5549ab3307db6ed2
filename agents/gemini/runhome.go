package gemini

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
)

// geminiRunHome makes the home one `prsm run -- gemini ...` gives Gemini
// CLI (GEMINI_CLI_HOME), so that prsm's hooks need no install: a settings
// layer of its own is what Gemini lacks. Checked on 0.61.0: a system
// settings file (GEMINI_CLI_SYSTEM_SETTINGS_PATH) is skipped unless it and
// every directory above it belong to root and no one else may write them,
// which no user's prsm state can be; GEMINI_CLI_HOME moves every file
// Gemini keeps under ~/.gemini (and ~/.env).
//
// So the home, under PRSM_HOME (agents/gemini/home), holds .gemini/settings.json,
// the user's own settings with prsm's hooks added, and a link to each
// other entry of the user's ~/.gemini (the login, google_accounts.json,
// trustedFolders.json, GEMINI.md, extensions, commands, history, tmp) and
// to ~/.env: the user's auth, trust and memory are the ones Gemini reads,
// and what it writes into them lands in the user's files. The settings
// are written again at every run, from the user's file as it is then. It
// returns the environment entries: GEMINI_CLI_HOME, and
// GEMINI_CLI_TRUSTED_FOLDERS_PATH naming the user's own trusted folders
// file (unless the user set one), where a new trust decision is saved.
func geminiRunHome(self string) ([]string, error) {
	user, err := geminiSettingsPath("")
	if err != nil {
		return nil, err
	}
	userDir := filepath.Dir(user)
	userHome := filepath.Dir(userDir)
	s, _, err := readGeminiSettings(user)
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = map[string]any{}
	}
	if err := addGeminiHooks(s, agent.HookCommand(self, "gemini")); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	prsmHome, err := prsm.Home()
	if err != nil {
		return nil, err
	}
	home := filepath.Join(prsmHome, "agents", "gemini", "home")
	dir := filepath.Join(home, ".gemini")
	if err := agent.WriteFileAtomic(filepath.Join(dir, "settings.json"), append(data, '\n'), 0o600); err != nil {
		return nil, err
	}
	links := map[string]string{filepath.Join(home, ".env"): filepath.Join(userHome, ".env")}
	entries, err := os.ReadDir(userDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if e.Name() != "settings.json" {
			links[filepath.Join(dir, e.Name())] = filepath.Join(userDir, e.Name())
		}
	}
	// Links to entries the user no longer has go.
	if ours, err := os.ReadDir(dir); err == nil {
		for _, e := range ours {
			p := filepath.Join(dir, e.Name())
			if _, ok := links[p]; !ok && e.Type()&fs.ModeSymlink != 0 {
				os.Remove(p)
			}
		}
	}
	for link, target := range links {
		if err := geminiLink(link, target); err != nil {
			return nil, err
		}
	}
	env := []string{"GEMINI_CLI_HOME=" + home}
	if os.Getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH") == "" {
		env = append(env, "GEMINI_CLI_TRUSTED_FOLDERS_PATH="+filepath.Join(userDir, "trustedFolders.json"))
	}
	return env, nil
}

// geminiLink makes link a symbolic link to target when target exists, and
// takes away a link of prsm's when it does not. An entry that is not a
// link (one Gemini created in the run home) is left as it is.
func geminiLink(link, target string) error {
	fi, err := os.Lstat(link)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink == 0:
		return nil
	case err == nil:
		if old, _ := os.Readlink(link); old == target {
			if _, terr := os.Stat(target); terr == nil {
				return nil
			}
		}
		if err := os.Remove(link); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if _, err := os.Lstat(target); err != nil {
		return nil
	}
	return os.Symlink(target, link)
}
