package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// LeanHookName is the lean hook binary `make install` puts beside prsm
// (prsm-hook.exe on Windows).
const LeanHookName = "prsm-hook"

// leanHookFile is LeanHookName's file name on goos.
func leanHookFile(goos string) string {
	if goos == "windows" {
		return LeanHookName + ".exe"
	}
	return LeanHookName
}

// isLeanHook reports whether the program prog is the lean hook binary.
func isLeanHook(prog string) bool {
	b := filepath.Base(prog)
	return b == LeanHookName || strings.EqualFold(b, LeanHookName+".exe")
}

// HookCommand is the hook command for agent of the prsm binary at self:
// the lean prsm-hook beside it when there is one (its process starts in a
// few milliseconds, which every tool call pays twice), else `prsm hook
// AGENT`, which does the same.
func HookCommand(self, agent string) string { return ShellJoin(HookArgv(self, agent)) }

// HookArgv is HookCommand as an argument list.
func HookArgv(self, agent string) []string {
	lean := filepath.Join(filepath.Dir(self), leanHookFile(runtime.GOOS))
	// Windows has no executable bit: its .exe name says it.
	if fi, err := os.Stat(lean); err == nil && fi.Mode().IsRegular() && (fi.Mode()&0o111 != 0 || runtime.GOOS == "windows") {
		return []string{lean, agent}
	}
	return []string{self, "hook", agent}
}

// ShellJoin is argv as one shell command line.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// ShellQuote quotes p for the shell agents run hook commands with: sh on
// Unix; on Windows cmd.exe or PowerShell, which both take a double-quoted
// word (a Windows path holds no double quote).
func ShellQuote(p string) string { return quoteFor(runtime.GOOS, p) }

// quoteFor is ShellQuote for the shells of goos.
func quoteFor(goos, p string) string {
	safeRunes := "/._-+,:@%="
	if goos == "windows" {
		// No % (cmd expands %VAR%), and the path separator is safe.
		safeRunes = `/\._-+,:@=`
	}
	safe := p != ""
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(safeRunes, r)) {
			safe = false
			break
		}
	}
	switch {
	case safe:
		return p
	case goos == "windows":
		return `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// IsPrsmHookArgv is IsPrsmHookCommand for an argument list (a hook in
// exec form).
func IsPrsmHookArgv(argv []string, agent string) bool {
	switch {
	case len(argv) == 3 && argv[1] == "hook" && argv[2] == agent:
		return strings.Contains(filepath.Base(argv[0]), "prsm")
	case len(argv) == 2 && argv[1] == agent:
		return isLeanHook(argv[0])
	}
	return false
}

// IsPrsmHookCommand reports whether a hook command runs prsm's adapter of
// agent, wherever the binary lives: "PRSM hook AGENT" or "PRSM-HOOK AGENT".
// The program may be quoted; the rule is IsPrsmHookArgv's.
func IsPrsmHookCommand(cmd, agent string) bool {
	cmd = strings.TrimSpace(cmd)
	unquote := func(prog string) string { return strings.Trim(strings.TrimSpace(prog), `'"`) }
	if prog, found := strings.CutSuffix(cmd, " hook "+agent); found {
		return IsPrsmHookArgv([]string{unquote(prog), "hook", agent}, agent)
	}
	if prog, found := strings.CutSuffix(cmd, " "+agent); found {
		return IsPrsmHookArgv([]string{unquote(prog), agent}, agent)
	}
	return false
}

// IsPrsmHandlerOf recognises a handler prsm installed for agent: a command
// that runs prsm's adapter of agent (IsPrsmHookCommand), in shell form or
// in exec form (Claude Code's command and args).
func IsPrsmHandlerOf(agent string) func(any) bool {
	return func(h any) bool {
		m, ok := h.(map[string]any)
		if !ok {
			return false
		}
		cmd, ok := m["command"].(string)
		if !ok {
			return false
		}
		if raw, ok := m["args"].([]any); ok {
			args := make([]string, 0, len(raw))
			for _, a := range raw {
				s, ok := a.(string)
				if !ok {
					return false
				}
				args = append(args, s)
			}
			return IsPrsmHookArgv(append([]string{cmd}, args...), agent)
		}
		return IsPrsmHookCommand(cmd, agent)
	}
}
