package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/prsm-dev/prsm/agents/agent"
)

// opencode has no command hooks; it loads every .js/.ts file in
// ~/.config/opencode/plugins/ and <project>/.opencode/plugins/ as a plugin,
// with no switch to turn on. `prsm hooks install opencode` writes one such
// file, prsm.js, and touches no other.

// installer is the agent's entry in `prsm hooks`.
func installer() *agent.Installer {
	return &agent.Installer{
		Help: `For opencode, which has no command hooks, install writes a plugin,
prsm.js, into ~/.config/opencode/plugins/ ($XDG_CONFIG_HOME/opencode/plugins/
when that is set; --user, the default) or <workspace>/.opencode/plugins/
(--project); opencode loads it with no switch. Other plugins are left alone.
A project plugin reaches a session's worktree only once it is committed,
and opencode installs its plugin SDK next to it (.opencode/node_modules,
package.json), so --user is the safe choice; prsm run -- opencode adds the
plugin for its run by itself when neither is installed.`,
		Path:      opencodePluginPath,
		Install:   installOpencodePlugin,
		Uninstall: uninstallOpencodePlugin,
		Installed: opencodePluginInstalled,
	}
}

// opencodePluginMarker starts the plugin file: it is how prsm knows the
// file is its own, to replace or remove.
const opencodePluginMarker = "// prsm opencode plugin: written by `prsm hooks install opencode`"

// opencodeHookTimeoutMs bounds one `prsm hook opencode` run in the plugin;
// prsm gives up well before it (hookTimeout).
const opencodeHookTimeoutMs = 10000

// opencodePluginPath is prsm.js in opencode's user plugin directory, or the
// project's when root is set.
func opencodePluginPath(root string) (string, error) {
	if root != "" {
		return filepath.Join(root, ".opencode", "plugins", "prsm.js"), nil
	}
	config := os.Getenv("XDG_CONFIG_HOME")
	if config == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("cannot find the home directory for ~/.config/opencode; use --project")
		}
		config = filepath.Join(home, ".config")
	}
	return filepath.Join(config, "opencode", "plugins", "prsm.js"), nil
}

// opencodePlugin is the plugin's source; command runs `prsm hook
// opencode` (through /bin/sh, as the other agents run their hooks).
//
// It waits for prsm in tool.execute.before, so that the pre-tool capture
// is taken before the tool changes anything. prsm's answer, {"feedback":
// TEXT} on tool.execute.after and chat.message (Agent.Feedback), goes to
// the model: appended to the tool's result, or added to the user's
// message as one more text part. It never throws: opencode
// blocks a tool whose before hook throws, and prsm's failure must not stop
// the agent. Each run is bounded and killed when it overruns (the shell
// execs prsm, so the kill reaches prsm itself).
func opencodePlugin(command string) []byte {
	cmd, _ := json.Marshal(command)
	return []byte(opencodePluginMarker + `; ` + "`prsm hooks uninstall opencode`" + ` removes it.
// Each event below is sent, as one JSON object on stdin, to ` + "`prsm hook opencode`" + `,
// which records the tool call in the prsm session whose worktree opencode
// runs in. Its answer may carry the review's feedback (the user's notes on
// the agent's changes): it goes to the model with the tool's result or the
// user's message. A failure of prsm is logged and never stops the tool.
import { spawn } from "node:child_process";
import { randomInt } from "node:crypto";

const COMMAND = ` + string(cmd) + `;
const TIMEOUT_MS = ` + fmt.Sprint(opencodeHookTimeoutMs) + `;
const MAX_ANSWER = 4 << 20;

// send runs prsm with event on stdin; it resolves to the feedback prsm
// answered with, "" for none.
function send(client, event) {
  return new Promise((resolve) => {
    let child, timer, stderr = "", stdout = "", finished = false;
    const done = (why) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (why) {
        try {
          client?.app?.log?.({ body: { service: "prsm", level: "warn", message: why } })?.catch?.(() => {});
        } catch {}
      }
      resolve(feedbackOf(stdout));
    };
    try {
      child = spawn("/bin/sh", ["-c", "exec " + COMMAND], { stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      return done("prsm hook opencode: " + e);
    }
    timer = setTimeout(() => {
      try { child.kill("SIGKILL"); } catch {}
      done("prsm hook opencode: no answer in " + TIMEOUT_MS + " ms");
    }, TIMEOUT_MS);
    child.on("error", (e) => done("prsm hook opencode: " + e));
    child.stdout.on("data", (d) => { if (stdout.length < MAX_ANSWER) stdout += d; });
    child.stderr.on("data", (d) => { if (stderr.length < 2000) stderr += d; });
    child.on("close", (code) => done(code === 0 ? "" : stderr.trim() || "prsm hook opencode: exit " + code));
    child.stdin.on("error", () => {});
    try {
      child.stdin.end(JSON.stringify(event));
    } catch {}
  });
}

// feedbackOf is the feedback in prsm's answer, {"feedback": TEXT}; "" for
// none (or an answer that is not one).
function feedbackOf(answer) {
  try {
    const text = answer.trim() ? JSON.parse(answer)?.feedback : "";
    return typeof text === "string" ? text : "";
  } catch {
    return "";
  }
}

// hearResult appends the feedback to a tool's result, output, which
// opencode hands the model once every plugin's tool.execute.after ran: its
// text (output.output), or an MCP tool's content.
function hearResult(output, text) {
  if (!text || !output) return;
  if (typeof output.output === "string") {
    output.output = output.output + (output.output ? "\n\n" : "") + text;
  } else if (Array.isArray(output.content)) {
    output.content.push({ type: "text", text });
  } else if (output.output == null) {
    output.output = text;
  }
}

// partID is a new id of a message part, as opencode makes them ascending:
// "prt_", 12 hex digits of the time, 14 random base62 characters.
let lastMs = 0, counter = 0;
function partID() {
  const ms = Date.now();
  if (ms !== lastMs) { lastMs = ms; counter = 0; }
  counter++;
  const time = (BigInt(ms) * 0x1000n + BigInt(counter)).toString(16).padStart(12, "0").slice(-12);
  const b62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let rand = "";
  for (let i = 0; i < 14; i++) rand += b62[randomInt(62)];
  return "prt_" + time + rand;
}

// hearMessage adds the feedback to the user's message, output (its
// message and parts, before opencode saves them), as one more text part.
function hearMessage(output, text) {
  const parts = output?.parts;
  if (!text || !Array.isArray(parts)) return;
  const like = parts.find((p) => p?.messageID && p?.sessionID) ?? {};
  parts.push({
    id: partID(),
    messageID: like.messageID ?? output?.message?.id,
    sessionID: like.sessionID ?? output?.message?.sessionID,
    type: "text",
    text,
    synthetic: true,
  });
}

// A file named by its path in the workspace, not in the session's worktree,
// would be changed behind prsm's back: under prsm run ($PRSM_WORKSPACE),
// such a path is mapped onto the worktree before the tool runs.
function remap(args, worktree) {
  const ws = process.env.PRSM_WORKSPACE;
  const p = args?.filePath;
  if (!ws || !worktree || worktree === ws || typeof p !== "string") return;
  const inside = (root) => p === root || p.startsWith(root + "/");
  if (inside(ws) && !inside(worktree)) args.filePath = worktree + p.slice(ws.length);
}

export const PrsmPlugin = async ({ client, directory, worktree }) => {
  // hears: this plugin hands prsm's feedback to the model.
  const base = (name, sessionID) => ({ hook_event_name: name, session_id: sessionID ?? "", cwd: directory ?? process.cwd(), hears: true });
  return {
    "chat.message": async (input, output) => {
      try {
        const prompt = (output?.parts ?? [])
          .filter((p) => p?.type === "text" && !p.synthetic && typeof p.text === "string")
          .map((p) => p.text)
          .join("\n");
        hearMessage(output, await send(client, { ...base("chat.message", input?.sessionID), prompt }));
      } catch {}
    },
    "tool.execute.before": async (input, output) => {
      try {
        remap(output?.args, worktree);
        await send(client, { ...base("tool.execute.before", input?.sessionID), tool: input?.tool, call_id: input?.callID, args: output?.args ?? {} });
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        const heard = await send(client, {
          ...base("tool.execute.after", input?.sessionID),
          tool: input?.tool,
          call_id: input?.callID,
          args: input?.args ?? {},
          title: typeof output?.title === "string" ? output.title : "",
          exit: output?.metadata?.exit ?? null,
        });
        hearResult(output, heard);
      } catch {}
    },
    event: async ({ event }) => {
      try {
        if (event?.type === "session.idle") {
          await send(client, base("session.idle", event.properties?.sessionID));
        }
      } catch {}
    },
  };
};
`)
}

// readOpencodePlugin reads the file at path: nil when there is none; an
// error when it is not prsm's.
func readOpencodePlugin(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.HasPrefix(data, []byte(opencodePluginMarker)) {
		return nil, fmt.Errorf("%s is not prsm's plugin (it does not start with %q); move it away, nothing was changed", path, opencodePluginMarker)
	}
	return data, nil
}

// installOpencodePlugin writes prsm's plugin, or replaces an older one.
func installOpencodePlugin(out io.Writer, path string, argv []string, _ bool) error {
	command := agent.ShellJoin(argv)
	old, err := readOpencodePlugin(path)
	if err != nil {
		return err
	}
	plugin := opencodePlugin(command)
	if bytes.Equal(old, plugin) {
		fmt.Fprintf(out, "prsm's opencode plugin is already at %s; nothing changed\n", path)
		return nil
	}
	if err := agent.WriteFileAtomic(path, plugin, 0o644); err != nil {
		return err
	}
	verb := "installed"
	if old != nil {
		verb = "updated"
	}
	fmt.Fprintf(out, "%s prsm's opencode plugin %s: tool.execute.before, tool.execute.after, chat.message, session.idle\n", verb, path)
	fmt.Fprintf(out, "  command: %s\n", command)
	return nil
}

// uninstallOpencodePlugin removes prsm's plugin file, and nothing else.
func uninstallOpencodePlugin(out io.Writer, path string) error {
	old, err := readOpencodePlugin(path)
	if err != nil {
		return err
	}
	if old == nil {
		fmt.Fprintf(out, "no prsm plugin at %s; nothing changed\n", path)
		return nil
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	fmt.Fprintf(out, "removed prsm's opencode plugin %s\n", path)
	return nil
}

// opencodePluginInstalled reports whether prsm's plugin is at path.
func opencodePluginInstalled(path string) (bool, error) {
	data, err := readOpencodePlugin(path)
	return data != nil, err
}
