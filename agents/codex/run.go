package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prsm-dev/prsm/agents/agent"
)

// codexTrustTimeout bounds the question `prsm run -- codex` asks Codex
// before the run: the trust hashes of prsm's hooks.
const codexTrustTimeout = 15 * time.Second

// codexRunArgs wires prsm's Codex hooks into one `prsm run -- codex ...`
// without touching the user's files: `-c hooks.EVENT=[...]` overrides
// (Codex's session-flags layer) put prsm's handlers in, and a
// `-c hooks.state={...}` override trusts exactly those handlers, by the
// hashes Codex itself computes (asked of `codex app-server`'s hooks/list
// with the same overrides). The user's other hooks keep whatever trust
// they had: --dangerously-bypass-hook-trust, which would run every
// untrusted hook too, is not used. dir is where Codex will run, env its
// environment. Any other command, a run whose own -c flags set hooks, or a
// Codex that already has prsm's hooks installed and trusted, comes back
// as it is; so does a run where Codex does not answer, with one line on
// errOut saying that its changes come in as Watch records.
func codexRunArgs(ctx context.Context, argv []string, dir string, env []string, self string, errOut io.Writer) []string {
	if len(argv) == 0 || filepath.Base(argv[0]) != "codex" {
		return argv
	}
	if codexSetsHooks(argv[1:]) {
		fmt.Fprintln(errOut, "prsm: this codex command sets hooks itself (-c hooks...); prsm adds none of its own, so unless those are prsm's its changes come in as Watch records")
		return argv
	}
	command := agent.HookCommand(self, "codex")
	flags := codexHookFlags(command)
	ctx, cancel := context.WithTimeout(ctx, codexTrustTimeout)
	defer cancel()
	trust, err := codexTrustFor(ctx, argv[0], flags, dir, env, command)
	if errors.Is(err, errCodexHooksInstalled) {
		return argv
	}
	if err == nil {
		out := append([]string{argv[0]}, flags...)
		out = append(out, "-c", "hooks.state="+codexStateTable(trust))
		return append(out, argv[1:]...)
	}
	fmt.Fprintf(errOut, "prsm: could not wire prsm's hooks into codex (%v); its changes come in as Watch records. `prsm hooks install codex` installs them for good\n", agent.OneLine(err.Error()))
	return argv
}

// codexSetsHooks reports whether Codex arguments set hooks with -c,
// which prsm's own -c hooks would silently replace.
func codexSetsHooks(args []string) bool {
	for i, a := range args {
		v := ""
		switch {
		case a == "--":
			return false
		case (a == "-c" || a == "--config") && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(a, "--config="):
			v = strings.TrimPrefix(a, "--config=")
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			v = strings.TrimPrefix(strings.TrimPrefix(a, "-c"), "=")
		}
		if v == "hooks" || strings.HasPrefix(v, "hooks.") || strings.HasPrefix(v, "hooks=") {
			return true
		}
	}
	return false
}

// codexHookFlags are the -c overrides that give Codex prsm's handlers,
// the groups `prsm hooks install codex` writes, in TOML.
func codexHookFlags(command string) []string {
	var flags []string
	for _, e := range codexHookEvents {
		h := fmt.Sprintf("{type=%s,command=%s,timeout=%d}", codexTOMLString("command"), codexTOMLString(command), codexHookTimeout)
		group := "{hooks=[" + h + "]}"
		if e.matcher != "" {
			group = "{matcher=" + codexTOMLString(e.matcher) + ",hooks=[" + h + "]}"
		}
		flags = append(flags, "-c", "hooks."+e.event+"=["+group+"]")
	}
	return flags
}

// codexTOMLString is s as a TOML basic string.
func codexTOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// codexHook is one entry of hooks/list's answer.
type codexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	Source      string `json:"source"`
	SourcePath  string `json:"sourcePath"`
	Enabled     bool   `json:"enabled"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// codexAppServer is a `codex app-server` child spoken to with JSON-RPC on
// its stdin and stdout, one message a line: what Codex's own UIs use to
// list hooks and to write their trust into config.toml.
type codexAppServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	nextID int
}

// startCodexAppServer starts `codex ARGS app-server` in dir with env and
// initializes it; ctx bounds its whole life. Close it when done.
func startCodexAppServer(ctx context.Context, codex string, args []string, dir string, env []string) (*codexAppServer, error) {
	cmd := exec.CommandContext(ctx, codex, append(append([]string{}, args...), "app-server")...)
	cmd.Dir, cmd.Env = dir, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start codex app-server: %w", err)
	}
	c := &codexAppServer{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout), nextID: 1}
	c.lines.Buffer(make([]byte, 64<<10), 16<<20)
	if err := c.call(ctx, "initialize", map[string]any{"clientInfo": map[string]string{"name": "prsm", "version": "1"}}, nil); err != nil {
		c.close()
		return nil, err
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *codexAppServer) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("codex app-server: %w", err)
	}
	return nil
}

// call sends one request and decodes its result into result (when not
// nil); notifications in between are skipped.
func (c *codexAppServer) call(ctx context.Context, method string, params, result any) error {
	id := c.nextID
	c.nextID++
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		// Most often the server has gone: say so, as a read would.
		if !c.lines.Scan() {
			return fmt.Errorf("codex app-server ended without answering %s", method)
		}
		return err
	}
	for c.lines.Scan() {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(c.lines.Bytes(), &msg) != nil || msg.ID == nil || *msg.ID != id {
			continue
		}
		if msg.Error != nil {
			return fmt.Errorf("codex app-server %s: %s", method, msg.Error.Message)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(msg.Result, result); err != nil {
			return fmt.Errorf("codex app-server %s: %v", method, err)
		}
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("codex app-server did not answer %s in time", method)
	}
	return fmt.Errorf("codex app-server ended without answering %s", method)
}

// hooks lists the hooks Codex would run in dir.
func (c *codexAppServer) hooks(ctx context.Context, dir string) ([]codexHook, error) {
	var res struct {
		Data []struct {
			Hooks []codexHook `json:"hooks"`
		} `json:"data"`
	}
	if err := c.call(ctx, "hooks/list", map[string]any{"cwds": []string{dir}}, &res); err != nil {
		return nil, err
	}
	var hooks []codexHook
	for _, d := range res.Data {
		hooks = append(hooks, d.Hooks...)
	}
	return hooks, nil
}

// close stops the server (it would stop at the end of its stdin too).
func (c *codexAppServer) close() {
	c.stdin.Close()
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// codexListHooks asks `codex FLAGS app-server` for the hooks Codex would
// run in dir, and stops it.
func codexListHooks(ctx context.Context, codex string, flags []string, dir string, env []string) ([]codexHook, error) {
	c, err := startCodexAppServer(ctx, codex, flags, dir, env)
	if err != nil {
		return nil, err
	}
	defer c.close()
	return c.hooks(ctx, dir)
}

// errCodexHooksInstalled says that Codex already runs prsm's hooks,
// installed and trusted by the user: adding them again would send every
// event twice.
var errCodexHooksInstalled = errors.New("prsm's Codex hooks are installed and trusted")

// codexTrust picks, of the hooks Codex listed, prsm's handlers from the
// -c overrides (key and hash, to trust them), or says that the user's own
// installed and trusted prsm handlers cover every event already.
func codexTrust(hooks []codexHook, command string) (map[string]string, error) {
	trust := map[string]string{}
	installed := map[string]bool{}
	for _, h := range hooks {
		switch {
		case h.Source == "sessionFlags" && h.Command == command && h.Key != "" && h.CurrentHash != "":
			trust[h.Key] = h.CurrentHash
		case h.Source != "sessionFlags" && h.Enabled && h.TrustStatus == "trusted" && isPrsmCodexHandler(map[string]any{"command": h.Command}):
			installed[strings.ToLower(h.EventName)] = true
		}
	}
	if len(installed) == len(codexHookEvents) {
		return nil, errCodexHooksInstalled
	}
	if len(trust) != len(codexHookEvents) {
		return nil, fmt.Errorf("codex listed %d of prsm's %d hooks", len(trust), len(codexHookEvents))
	}
	return trust, nil
}

// codexStateTable is the TOML inline table of hooks.state that trusts
// each key's hash. A dotted -c key cannot name them: the keys hold dots.
func codexStateTable(trust map[string]string) string {
	keys := make([]string, 0, len(trust))
	for k := range trust {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, codexTOMLString(k)+"={trusted_hash="+codexTOMLString(trust[k])+"}")
	}
	return "{" + strings.Join(parts, ",") + "}"
}
