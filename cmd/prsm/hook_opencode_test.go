package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpencodePayloads maps events as prsm's plugin sent them from the real
// opencode 1.18.33 onto server calls.
func TestOpencodePayloads(t *testing.T) {
	decode := func(s string) *opencodePayload {
		t.Helper()
		var p opencodePayload
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	before := decode(`{"hook_event_name":"tool.execute.before","session_id":"ses_1","cwd":"/w","tool":"edit","call_id":"call_e1","args":{"filePath":"a.txt","oldString":"a","newString":"b"}}`)
	c, err := before.call()
	if err != nil || c.kind != hookStart || c.toolCallID != "call_e1" || c.start.ToolName != "Edit" || c.start.AgentID != "opencode" || c.start.Cwd != "/w" {
		t.Fatalf("before: %+v, %v", c, err)
	}
	var args map[string]string
	if err := json.Unmarshal(c.start.Args, &args); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"filePath": "a.txt", "file_path": "a.txt", "oldString": "a", "old_string": "a", "newString": "b", "new_string": "b"}
	if len(args) != len(want) {
		t.Fatalf("args %v, want %v", args, want)
	}
	for k, v := range want {
		if args[k] != v {
			t.Fatalf("args %v, want %v", args, want)
		}
	}

	after := decode(`{"hook_event_name":"tool.execute.after","session_id":"ses_1","cwd":"/w","tool":"bash","call_id":"call_b1","args":{"command":"rm x"},"title":"rm x","exit":3}`)
	c, err = after.call()
	if err != nil || c.kind != hookComplete || c.toolCallID != "call_b1" || c.complete.ToolName != "Bash" || string(c.complete.Result) != `{"exit":3,"title":"rm x"}` || string(c.complete.Args) != `{"command":"rm x"}` {
		t.Fatalf("after: %+v, %v", c, err)
	}

	c, err = decode(`{"hook_event_name":"chat.message","cwd":"/w","prompt":"hi"}`).call()
	if err != nil || c.kind != hookTurn || c.turn.Prompt != "hi" {
		t.Fatalf("chat.message: %+v, %v", c, err)
	}
	c, err = decode(`{"hook_event_name":"session.idle","cwd":"/w"}`).call()
	if err != nil || c.kind != hookTurnEnd {
		t.Fatalf("session.idle: %+v, %v", c, err)
	}
	if c, err := decode(`{"hook_event_name":"file.edited"}`).call(); c != nil || err != nil {
		t.Fatalf("file.edited: %+v, %v", c, err)
	}
	if _, err := decode(`{"tool":"bash"}`).call(); err == nil || !strings.Contains(err.Error(), "no hook_event_name") {
		t.Fatalf("no event name: %v", err)
	}

	// A callID the server would refuse is hashed, the same for before and
	// after; two calls differ.
	b1 := decode(`{"hook_event_name":"tool.execute.before","session_id":"s","tool":"bash","call_id":"bad id/with space","args":{"command":"ls"}}`).toolCallID()
	a1 := decode(`{"hook_event_name":"tool.execute.after","session_id":"s","tool":"bash","call_id":"bad id/with space","args":{"command":"ls"}}`).toolCallID()
	b2 := decode(`{"hook_event_name":"tool.execute.before","session_id":"s","tool":"bash","call_id":"bad id/with space 2","args":{"command":"ls"}}`).toolCallID()
	if b1 != a1 || b1 == b2 || !strings.HasPrefix(b1, "opencode-") {
		t.Fatalf("derived ids: %s %s %s", b1, a1, b2)
	}
}

// TestOpencodePluginNeverThrows runs the plugin prsm installs under node
// (opencode runs it under Bun; both take the module as it is): a prsm that
// fails, one that is missing and one that hangs past the time limit (cut
// to 300 ms here) must neither throw nor block a hook, or opencode would
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
		{"missing", shellQuote(filepath.Join(dir, "no-such-prsm")) + " hook opencode", ""},
		{"hangs", "sleep 5", ""},
		{"works", "cat >> " + shellQuote(got), `"call_id":"call_1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugin := strings.Replace(string(opencodePlugin(tc.command)), "const TIMEOUT_MS = 10000;", "const TIMEOUT_MS = 300;", 1)
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
			if res.Ms > 4000 {
				t.Errorf("four events took %d ms", res.Ms)
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
