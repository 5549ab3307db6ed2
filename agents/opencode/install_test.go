package opencode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
			out := runPlugin(t, node, filepath.Join(dir, tc.name+".mjs"), plugin, `
const logs = [];
const client = { app: { log: async (x) => { logs.push(x.body.message); } } };
const hooks = await PrsmPlugin({ client, directory: "/w", worktree: "/w" });
const t0 = Date.now();
await hooks["chat.message"]({ sessionID: "s" }, { parts: [{ type: "text", text: "hi" }] });
await hooks["tool.execute.before"]({ tool: "write", sessionID: "s", callID: "call_1" }, { args: { filePath: "/w/a" } });
await hooks["tool.execute.after"]({ tool: "write", sessionID: "s", callID: "call_1", args: {} }, { title: "a", output: "", metadata: {} });
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "s" } } });
console.log(JSON.stringify({ ms: Date.now() - t0, logs }));
`)
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

// runPlugin writes plugin to mod and runs script under node with the
// plugin's PrsmPlugin in scope; what it prints.
func runPlugin(t *testing.T, node, mod, plugin, script string) []byte {
	t.Helper()
	if err := os.WriteFile(mod, []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	script = "const { PrsmPlugin } = await import(process.argv[1]);\n" + script
	out, err := exec.Command(node, "--input-type=module", "-e", script, "file://"+mod).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	return out
}

// TestOpencodePluginHears runs the plugin under node with a prsm that
// answers {"feedback": ...}: tool.execute.after appends the text to the
// tool's result (an MCP tool's content gets one more text item),
// chat.message adds it to the message as a synthetic text part with an
// id as opencode makes them; tool.execute.before changes nothing. A prsm
// whose answer is not one changes nothing either.
func TestOpencodePluginHears(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	dir := t.TempDir()
	const note = `keep the retries; "app.py" <lines 2-3>`
	answer, _ := json.Marshal(map[string]string{"feedback": note})
	script := `
const hooks = await PrsmPlugin({ client: {}, directory: "/w", worktree: "/w" });
const before = { args: { filePath: "/w/a" } };
await hooks["tool.execute.before"]({ tool: "write", sessionID: "s", callID: "c1" }, before);
const after = { title: "a", output: "Wrote file", metadata: {} };
await hooks["tool.execute.after"]({ tool: "write", sessionID: "s", callID: "c1", args: {} }, after);
const empty = { title: "b", output: "", metadata: {} };
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "c2", args: {} }, empty);
const mcp = { content: [{ type: "text", text: "r" }] };
await hooks["tool.execute.after"]({ tool: "m_t", sessionID: "s", callID: "c3", args: {} }, mcp);
const msg = { message: { id: "msg_1", sessionID: "s" }, parts: [{ id: "prt_0", messageID: "msg_1", sessionID: "s", type: "text", text: "hi" }] };
await hooks["chat.message"]({ sessionID: "s" }, msg);
console.log(JSON.stringify({ before, after, empty, mcp, parts: msg.parts }));
`
	for _, tc := range []struct {
		name, answer string
		hears        bool
	}{
		{"answers", string(answer), true},
		{"garbage", "not json", false},
		{"silent", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			command := "sh -c " + agent.ShellQuote("cat >/dev/null; printf '%s\\n' "+agent.ShellQuote(tc.answer))
			out := runPlugin(t, node, filepath.Join(dir, tc.name+".mjs"), string(opencodePlugin(command)), script)
			var res struct {
				Before struct{ Args map[string]string }
				After  struct{ Output string }
				Empty  struct{ Output string }
				MCP    struct{ Content []struct{ Type, Text string } }
				Parts  []map[string]any
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("node said %s", out)
			}
			if len(res.Before.Args) != 1 {
				t.Errorf("tool.execute.before's args changed: %v", res.Before.Args)
			}
			if !tc.hears {
				if res.After.Output != "Wrote file" || res.Empty.Output != "" || len(res.MCP.Content) != 1 || len(res.Parts) != 1 {
					t.Errorf("no feedback, but the plugin changed what the model reads: %s", out)
				}
				return
			}
			if res.After.Output != "Wrote file\n\n"+note || res.Empty.Output != note {
				t.Errorf("tool results: %q, %q", res.After.Output, res.Empty.Output)
			}
			if len(res.MCP.Content) != 2 || res.MCP.Content[1].Type != "text" || res.MCP.Content[1].Text != note {
				t.Errorf("MCP content: %+v", res.MCP.Content)
			}
			if len(res.Parts) != 2 {
				t.Fatalf("message parts: %v", res.Parts)
			}
			p := res.Parts[1]
			id, _ := p["id"].(string)
			if p["text"] != note || p["type"] != "text" || p["synthetic"] != true || p["messageID"] != "msg_1" || p["sessionID"] != "s" ||
				!regexp.MustCompile(`^prt_[0-9a-f]{12}[0-9A-Za-z]{14}$`).MatchString(id) || id <= "prt_0" {
				t.Errorf("the added part: %v", p)
			}
		})
	}
}
