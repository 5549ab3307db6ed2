package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/internal/fakemodel"
)

// costAgents are the agents TestRealAgentHookCost times, each set up as
// its correctness test sets it up (realagent_*_test.go).
func costAgents() []costAgent {
	chatPlayed := func(fake *fakemodel.ChatServer, ids []string) func() int {
		return func() int {
			back := map[string]bool{}
			for _, r := range fake.Requests() {
				for _, m := range r.Messages {
					if m.Role == "tool" {
						back[m.ToolCallID] = true
					}
				}
			}
			n := 0
			for _, id := range ids {
				if back[id] {
					n++
				}
			}
			return n
		}
	}
	callIDs := func(tag string, n int) []string {
		var ids []string
		for i := 0; i < n; i++ {
			ids = append(ids, fmt.Sprintf("call_%s%02d", strings.ReplaceAll(tag, "-", "_"), i))
		}
		return ids
	}
	file := func(tag string, i int) (name, content string) {
		return fmt.Sprintf("%s%02d.txt", tag, i), fmt.Sprintf("%s %02d\n", tag, i)
	}
	return []costAgent{
		{
			name: "codex", pkg: "@openai/codex", version: codexVersion, exe: "codex", tool: "Edit",
			config: func(t *testing.T, c *costHome, _ []string) {
				// The provider's base_url is each run's model's (-c).
				config := "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\nenv_key = \"PRSM_FAKE_OPENAI_KEY\"\n"
				if err := os.WriteFile(filepath.Join(c.dir, ".codex", "config.toml"), []byte(config), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			model: func(t *testing.T, c *costHome, dir, tag string, n int) costModel {
				ids := callIDs(tag, n)
				var steps []fakemodel.ResponsesStep
				for i := 0; i < n; i++ {
					name, content := file(tag, i)
					steps = append(steps, fakemodel.ResponsesStep{CallID: ids[i],
						ApplyPatch: "*** Begin Patch\n*** Add File: " + name + "\n+" + strings.TrimSuffix(content, "\n") + "\n*** End Patch\n"})
				}
				fake := fakemodel.ResponsesStart(t, append(steps, fakemodel.ResponsesStep{Message: "Done."}))
				px := newCostProxy(t, fake.URL)
				return costModel{
					env:  []string{"PRSM_FAKE_OPENAI_KEY=sk-fake"},
					args: []string{"-c", `model_providers.fake.base_url="` + px.url + `"`},
					ids:  ids, close: func() {}, proxy: px,
					played: func() int {
						reqs := fake.ResponsesRequests()
						if len(reqs) == 0 {
							return 0
						}
						return strings.Count(string(reqs[len(reqs)-1]), `"custom_tool_call_output"`)
					},
				}
			},
			argv: func(exe, prompt string, extra []string) []string {
				return append(append([]string{exe, "exec", "--dangerously-bypass-approvals-and-sandbox"}, extra...), prompt)
			},
			// The do-nothing hooks are not the ones install trusted.
			nullArgs: []string{"--dangerously-bypass-hook-trust"},
			null: func(t *testing.T, c *costHome, log string) {
				costReplaceCommand(t, filepath.Join(c.dir, ".codex", "hooks.json"), c.bin, log)
			},
			events: costJSONEvents,
		},
		{
			name: "gemini", pkg: "@google/gemini-cli", version: "0.61.0", exe: "gemini", tool: "Write",
			config: func(t *testing.T, c *costHome, trusted []string) {
				gdir := filepath.Join(c.dir, ".gemini")
				writeJSONFile(t, filepath.Join(gdir, "settings.json"), map[string]any{
					"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
					"general":  map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
					"privacy":  map[string]any{"usageStatisticsEnabled": false},
				})
				trust := map[string]any{}
				for _, d := range trusted {
					trust[d] = "TRUST_FOLDER"
				}
				writeJSONFile(t, filepath.Join(gdir, "trustedFolders.json"), trust)
			},
			model: func(t *testing.T, c *costHome, dir, tag string, n int) costModel {
				var steps []fakemodel.GeminiStep
				for i := 0; i < n; i++ {
					name, content := file(tag, i)
					steps = append(steps, fakemodel.GeminiStep{Tool: "write_file", Args: map[string]any{"file_path": name, "content": content}})
				}
				fake := fakemodel.NewGeminiServer(t, append(steps, fakemodel.GeminiStep{Text: "Done."}))
				px := newCostProxy(t, fake.URL)
				return costModel{
					env:   []string{"GOOGLE_GEMINI_BASE_URL=" + px.url, "GEMINI_API_KEY=fake-key"},
					close: func() {}, proxy: px,
					// The final answer is asked for with the last result.
					played: func() int { return max(fake.Played()-1, 0) },
				}
			},
			argv: func(exe, prompt string, extra []string) []string {
				return append([]string{exe, "-p", prompt, "--yolo"}, extra...)
			},
			null: func(t *testing.T, c *costHome, log string) {
				costReplaceCommand(t, filepath.Join(c.dir, ".gemini", "settings.json"), c.bin, log)
			},
			events: costJSONEvents,
		},
		{
			name: "opencode", pkg: "opencode-ai", version: "1.18.33", exe: "opencode", tool: "Write",
			config: func(t *testing.T, c *costHome, _ []string) {},
			model: func(t *testing.T, c *costHome, dir, tag string, n int) costModel {
				ids := callIDs(tag, n)
				var steps []fakemodel.ChatStep
				for i := 0; i < n; i++ {
					name, content := file(tag, i)
					args, _ := json.Marshal(map[string]string{"filePath": name, "content": content})
					steps = append(steps, fakemodel.ChatStep{ToolCalls: []fakemodel.ChatToolCall{{ID: ids[i], Name: "write", Arguments: string(args)}}})
				}
				fake, err := fakemodel.ChatStart(append(steps, fakemodel.ChatStep{Text: "Done."}))
				if err != nil {
					t.Fatal(err)
				}
				// The model's address is in opencode's config, written for
				// each run.
				px := newCostProxy(t, fake.URL)
				config, _ := json.Marshal(map[string]any{
					"$schema": "https://opencode.ai/config.json",
					"provider": map[string]any{"fake": map[string]any{
						"npm": "@ai-sdk/openai-compatible", "name": "Fake",
						"options": map[string]any{"baseURL": px.url, "apiKey": "x"},
						"models":  map[string]any{"scripted": map[string]any{"name": "scripted", "tool_call": true}},
					}},
					"model": "fake/scripted", "autoupdate": false, "share": "disabled",
				})
				p := filepath.Join(c.dir, ".config", "opencode", "opencode.json")
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, config, 0o644); err != nil {
					t.Fatal(err)
				}
				return costModel{
					env: []string{"OPENCODE_DISABLE_MODELS_FETCH=true", "OPENCODE_DISABLE_AUTOUPDATE=true",
						"OPENCODE_DISABLE_SHARE=true", "OPENCODE_DISABLE_LSP_DOWNLOAD=true"},
					ids: ids, played: chatPlayed(fake, ids), close: func() { fake.Close() }, proxy: px,
				}
			},
			argv: func(exe, prompt string, extra []string) []string {
				return append([]string{exe, "run", "--auto", prompt}, extra...)
			},
			// opencode's hooks are a plugin, in process: the do-nothing
			// one has handlers that only count, and writes the count when
			// the session goes idle.
			null: func(t *testing.T, c *costHome, log string) {
				p := filepath.Join(c.dir, ".config", "opencode", "plugins", "prsm.js")
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("prsm's opencode plugin is not where install put it: %v", err)
				}
				logJS, _ := json.Marshal(log)
				plugin := `import { appendFileSync } from "node:fs";
let events = 0;
export const NullPlugin = async () => ({
  "chat.message": async () => {},
  "tool.execute.before": async () => { events++; },
  "tool.execute.after": async () => { events++; },
  event: async ({ event }) => {
    if (event?.type === "session.idle") {
      appendFileSync(` + string(logJS) + `, JSON.stringify({ tool_events: events }) + "\n");
      events = 0;
    }
  },
});
`
				if err := os.WriteFile(p, []byte(plugin), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			events: func(t *testing.T, log string) int {
				b, err := os.ReadFile(log)
				if os.IsNotExist(err) {
					return 0
				}
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				dec := json.NewDecoder(bytes.NewReader(b))
				for {
					var v struct {
						Events int `json:"tool_events"`
					}
					if err := dec.Decode(&v); err == io.EOF {
						return n
					} else if err != nil {
						t.Fatalf("%s: %v", log, err)
					}
					n += v.Events
				}
			},
		},
		{
			name: "copilot", pkg: "@github/copilot", version: "1.0.102", exe: "copilot", tool: "Write",
			config: func(t *testing.T, c *costHome, _ []string) {},
			model: func(t *testing.T, c *costHome, dir, tag string, n int) costModel {
				ids := callIDs(tag, n)
				var steps []fakemodel.ChatStep
				for i := 0; i < n; i++ {
					name, content := file(tag, i)
					args, _ := json.Marshal(map[string]string{"path": filepath.Join(dir, name), "file_text": content})
					steps = append(steps, fakemodel.ChatStep{ToolCalls: []fakemodel.ChatToolCall{{ID: ids[i], Name: "create", Arguments: string(args)}}})
				}
				fake, err := fakemodel.ChatStart(append(steps, fakemodel.ChatStep{Text: "Done."}))
				if err != nil {
					t.Fatal(err)
				}
				px := newCostProxy(t, fake.URL)
				return costModel{
					proxy: px,
					env: []string{"COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=" + px.url, "COPILOT_PROVIDER_API_KEY=x",
						"COPILOT_MODEL=gpt-4.1", "COPILOT_AUTO_UPDATE=false", "COPILOT_PKG_CACHE_HOME=" + c.copilotPkgCache},
					played: chatPlayed(fake, ids), close: func() { fake.Close() },
				}
			},
			argv: func(exe, prompt string, extra []string) []string {
				return append([]string{exe, "-p", prompt, "--allow-all-tools"}, extra...)
			},
			null: func(t *testing.T, c *costHome, log string) {
				costReplaceCommand(t, filepath.Join(c.dir, ".copilot", "hooks", "prsm.json"), c.bin, log)
			},
			events: costJSONEvents,
		},
	}
}
