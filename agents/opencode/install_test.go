package opencode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents/agent"
)

// TestOpencodePluginNeverThrows runs the plugin prsm installs under node
// (opencode runs it under Bun; both take the module as it is): a prsm that
// fails, one that is missing and one that hangs past the time limit (cut
// to 300 ms for it) must neither throw nor block a hook, or opencode would
// stop the tool; a prsm that works gets the event on stdin.
func TestOpencodePluginNeverThrows(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	dir := t.TempDir()
	got := filepath.Join(dir, "got.json")
	for _, tc := range []struct{ name, command, want string }{
		{"fails", "sh -c 'echo boom >&2; exit 1'", ""},
		{"missing", agent.ShellQuote(filepath.Join(dir, "no-such-prsm")) + " hook opencode", ""},
		{"hangs", "sleep 600", ""},
		{"works", "cat >> " + agent.ShellQuote(got), `"call_id":"call_1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugin := string(opencodePlugin(tc.command))
			if tc.name == "hangs" {
				// Only the hanging prsm meets the cut limit: a loaded
				// machine may take longer than 300 ms to start a shell.
				plugin = strings.Replace(plugin, "const TIMEOUT_MS = 10000;", "const TIMEOUT_MS = 300;", 1)
			}
			mod := filepath.Join(dir, tc.name+".mjs")
			if err := os.WriteFile(mod, []byte(plugin), 0o644); err != nil {
				t.Fatal(err)
			}
			script := `
const { PrsmPlugin } = await import(process.argv[1]);
const logs = [];
const client = { app: { log: async (x) => { logs.push(x.body.message); } } };
const hooks = await PrsmPlugin({ client, directory: "/w", worktree: "/w" });
const t0 = Date.now();
await hooks["chat.message"]({ sessionID: "s" }, { parts: [{ type: "text", text: "hi" }] });
await hooks["tool.execute.before"]({ tool: "write", sessionID: "s", callID: "call_1" }, { args: { filePath: "/w/a" } });
await hooks["tool.execute.after"]({ tool: "write", sessionID: "s", callID: "call_1", args: {} }, { title: "a", output: "", metadata: {} });
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "s" } } });
console.log(JSON.stringify({ ms: Date.now() - t0, logs }));
`
			cmd := exec.Command(node, "--input-type=module", "-e", script, "file://"+mod)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			var res struct {
				Ms   int
				Logs []string
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("node said %s", out)
			}
			if res.Ms > 60000 {
				t.Errorf("four events took %d ms: a hook waited for a prsm that hangs", res.Ms)
			}
			if tc.want == "" {
				if len(res.Logs) != 4 || tc.name == "fails" && res.Logs[0] != "boom" {
					t.Errorf("want one logged warning per event (prsm's stderr, if any), got %q", res.Logs)
				}
				return
			}
			if len(res.Logs) != 0 {
				t.Errorf("warnings from a working prsm: %q", res.Logs)
			}
			b, _ := os.ReadFile(got)
			if !strings.Contains(string(b), tc.want) || !strings.Contains(string(b), `"hook_event_name":"session.idle"`) {
				t.Errorf("prsm got %s", b)
			}
		})
	}
}
