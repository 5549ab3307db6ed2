package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/server"
	"github.com/prsm-dev/prsm/worktree"
)

// The hook runs inside the agent's tool loop, so it is bounded: finding (or
// starting) the server gets hookConnectTimeout, the whole call hookTimeout,
// which stays under the 10 s timeout `prsm hooks install` gives Claude Code.
// A call a busy store answered (503 busy) is sent again by the client
// while hookTimeout leaves room for the wait (client.Client retries it
// within its context's deadline); as the server answers busy only after
// waiting five seconds for the lock itself, that is once at most.
const (
	hookConnectTimeout = 5 * time.Second
	hookTimeout        = 8 * time.Second
	// maxHookPayload bounds what is read from stdin; it matches the
	// server's body limit, since a Write's content travels on to it.
	maxHookPayload = server.DefaultBodyLimit
)

// hookCmd is `prsm hook AGENT`. Agents read exit code 2 as "block the
// tool", so nothing here is a usage error: mistakes exit 1.
func (a *app) hookCmd() *cobra.Command {
	var c *cobra.Command
	known := func() string {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return strings.Join(names, ", ")
	}
	c = &cobra.Command{
		Use:   "hook AGENT",
		Short: "Agent hook adapters, run by the agents (see `prsm hooks install AGENT`)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("prsm hook needs an agent, one of: %s", known())
			}
			return fmt.Errorf("prsm hook: unknown agent %q; prsm knows: %s", args[0], known())
		},
	}
	c.AddCommand(a.hookClaudeCmd())
	c.AddCommand(a.hookCodexCmd())
	c.AddCommand(a.hookGeminiCmd())
	c.AddCommand(a.hookOpencodeCmd())
	c.AddCommand(a.hookCopilotCmd())
	c.AddCommand(a.hookCursorCmd())
	return c
}

func (a *app) hookClaudeCmd() *cobra.Command {
	return a.hookAdapterCmd("claude", "Claude Code",
		"Claude Code hook adapter: reads one hook event (JSON) on stdin, tells the session's server; prints nothing on stdout",
		`Claude Code hook adapter. It reads one hook event (JSON) on stdin:
PreToolUse starts a tool call (the pre-tool capture), PostToolUse and
PostToolUseFailure complete it, UserPromptSubmit starts a turn (an automatic
checkpoint), Stop ends it (a tool call left open, its tool denied, is
closed, and changes no tool call made are recorded) unless background
tasks still run, whose calls stay open; other events are ignored.

The session is the one whose worktree holds the event's cwd, else
$PRSM_SESSION_ID (with $PRSM_WORKSPACE); outside any session the hook does
nothing. A Write, Edit, MultiEdit or NotebookEdit run in a session's
worktree whose file is the workspace's own is moved onto the worktree (a
JSON answer on stdout, updatedInput), so that it is recorded and reviewed;
otherwise the hook prints nothing on stdout. It never exits 2 (which would
block the tool), and gives up after a few seconds with one line on stderr
and exit 1.`,
		a.hookClaude)
}

// hookAdapterCmd is `prsm hook AGENT` for one agent (agent is its name on
// the command line, title how people write it): the agent runs it with
// one hook event on stdin, and handle does the rest. What every adapter
// shares is here: no flags parsed (a flag mistake would be a usage error,
// exit 2, which agents read as "block the tool"), a panic made an
// ordinary failure, every error one line on stderr and exit 1.
func (a *app) hookAdapterCmd(agent, title, short, long string, handle func(context.Context, io.Reader) error) *cobra.Command {
	return &cobra.Command{
		Use:                agent,
		Short:              short,
		Long:               long,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			for _, arg := range args {
				if arg == "-h" || arg == "--help" {
					return cmd.Help()
				}
			}
			// A panic would exit 2; make it an ordinary failure.
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("internal error: %v", r)
				}
				if err != nil {
					err = errors.New(oneLine("prsm hook: " + err.Error()))
				}
			}()
			if len(args) > 0 {
				return fmt.Errorf("prsm hook %s takes no arguments; it reads the hook event on stdin", agent)
			}
			if isTTY(a.stdio.In) {
				return fmt.Errorf("prsm hook %s reads a %s hook event (JSON) on stdin; %s runs it, see `prsm hooks install %s`", agent, title, title, agent)
			}
			return handle(cmd.Context(), a.stdio.In)
		},
	}
}

// claudePayload is the part of a Claude Code hook event prsm uses; other
// fields are ignored, and so are optional ones that are missing. Raw fields
// are passed on as they come: their shapes differ between versions.
type claudePayload struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	PermissionMode string          `json:"permission_mode"`
	AgentID        string          `json:"agent_id"`   // only inside a subagent
	AgentType      string          `json:"agent_type"` // a subagent's (or a --agent session's) type
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   json.RawMessage `json:"tool_response"` // PostToolUse
	Error          json.RawMessage `json:"error"`         // PostToolUseFailure
	IsInterrupt    json.RawMessage `json:"is_interrupt"`  // PostToolUseFailure
	Prompt         string          `json:"prompt"`        // UserPromptSubmit
	// BackgroundTasks (Stop, 2.1.328) lists the work still in flight:
	// background subagents and shells.
	BackgroundTasks json.RawMessage `json:"background_tasks"`
}

// hookCall is what one event asks of the server.
type hookCall struct {
	kind       string // hookStart, hookComplete, hookTurn, hookTurnEnd
	toolCallID string
	start      api.ToolCallRequest
	complete   api.CompleteRequest
	turn       api.TurnRequest
}

const (
	hookStart    = "start"
	hookComplete = "complete"
	hookTurn     = "turn"
	hookTurnEnd  = "turn-end"
)

// readClaudePayload reads and decodes one hook event.
func readClaudePayload(in io.Reader) (*claudePayload, error) {
	data, err := io.ReadAll(io.LimitReader(in, maxHookPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read hook event: %w", err)
	}
	if len(data) > maxHookPayload {
		return nil, fmt.Errorf("hook event is larger than %d MiB", maxHookPayload>>20)
	}
	var p claudePayload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("malformed hook event (want one JSON object): %v", err)
	}
	if p.HookEventName == "" {
		return nil, errors.New("malformed hook event: no hook_event_name")
	}
	return &p, nil
}

// call maps an event to its server call; nil means the event needs none
// (SessionStart, SessionEnd, Notification and any event prsm does not
// know).
func (p *claudePayload) call() (*hookCall, error) {
	switch p.HookEventName {
	case "PreToolUse", "PostToolUse", "PostToolUseFailure":
	case "UserPromptSubmit":
		if n, ok := parseTaskNotification(p.Prompt); ok {
			return n.call(p)
		}
		// message_index is left out: the server counts the turns.
		return &hookCall{kind: hookTurn, turn: api.TurnRequest{Prompt: p.Prompt}}, nil
	case "Stop":
		if p.backgroundRunning() {
			// The main agent stopped, but a background subagent or shell
			// still works: its open calls must stay open for what it
			// writes. The next turn or a Stop with nothing in flight
			// closes them (the task's notification is no turn).
			return nil, nil
		}
		// The turn is over: a tool call still open was denied.
		return &hookCall{kind: hookTurnEnd}, nil
	default:
		return nil, nil
	}
	if strings.TrimSpace(p.ToolName) == "" {
		return nil, fmt.Errorf("malformed %s event: no tool_name", p.HookEventName)
	}
	id, agent := p.toolCallID(), p.agentID()
	if p.HookEventName == "PreToolUse" {
		return &hookCall{kind: hookStart, toolCallID: id, start: api.ToolCallRequest{
			ToolCallID: id, ToolName: p.ToolName, Args: p.ToolInput, AgentID: agent, Cwd: p.Cwd,
		}}, nil
	}
	result := p.ToolResponse
	if p.HookEventName == "PostToolUseFailure" {
		failure := map[string]json.RawMessage{"error": p.Error, "is_interrupt": p.IsInterrupt}
		for k, v := range failure {
			if len(v) == 0 {
				delete(failure, k)
			}
		}
		b, err := json.Marshal(failure)
		if err != nil {
			return nil, err
		}
		result = b
	}
	// The tool's name, arguments and agent go along, so that a complete
	// whose pre-tool capture never arrived still makes a full record.
	return &hookCall{kind: hookComplete, toolCallID: id, complete: api.CompleteRequest{
		Result: result, ToolName: p.ToolName, Args: p.ToolInput, AgentID: agent, Cwd: p.Cwd,
	}}, nil
}

// toolCallID is tool_use_id, which pairs PreToolUse with PostToolUse. Old
// Claude Code versions do not send it; then the id is derived from what
// both events carry alike (session, tool name, tool input), so the pair
// still meets. Two identical calls in one session then share an id: the
// second is taken for a repeat of the first, and its changes are left to
// the watcher. An id the server would refuse is hashed the same way.
func (p *claudePayload) toolCallID() string {
	if prsm.ValidToolCallID(p.ToolUseID) {
		return p.ToolUseID
	}
	h := sha256.New()
	if p.ToolUseID != "" {
		fmt.Fprintf(h, "tool_use_id\x00%s", p.ToolUseID)
	} else {
		fmt.Fprintf(h, "%s\x00%s\x00", p.SessionID, strings.TrimSpace(p.ToolName))
		h.Write(canonicalJSON(p.ToolInput))
	}
	return "claude-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// canonicalJSON re-encodes a JSON value with sorted keys and no spacing, so
// that the same value hashes the same however it was written.
func canonicalJSON(raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// agentID is "claude", or "claude/<type>" inside a subagent: agent_id is
// sent only there, agent_type names the kind of subagent (and alone, a
// session started with --agent, which is still the main agent).
func (p *claudePayload) agentID() string {
	if p.AgentID == "" {
		return "claude"
	}
	name := p.AgentType
	if strings.TrimSpace(name) == "" {
		name = p.AgentID
	}
	return label("claude/"+strings.TrimSpace(name), 100)
}

// label keeps the printable runes of s, at most max bytes: what the server
// accepts as an agent id.
func label(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hookTarget is the session an event belongs to and where its server is.
type hookTarget struct {
	sessionID  string
	projectDir string // PRSM_HOME/projects/<identity>
	worktree   string // the session's worktree, when found from cwd
	workspace  string // the workspace root, when known from the environment
}

// locateSession finds the session of an event: the one whose worktree
// holds cwd, else $PRSM_SESSION_ID in the workspace $PRSM_WORKSPACE (or
// cwd). nil means the event is outside every session.
func locateSession(ctx context.Context, cwd string, getenv func(string) string) (*hookTarget, error) {
	home, err := prsm.Home()
	if err != nil {
		return nil, err
	}
	if cwd != "" {
		if t := sessionOfPath(home, cwd); t != nil {
			return t, nil
		}
	}
	sid := strings.TrimSpace(getenv("PRSM_SESSION_ID"))
	if sid == "" {
		return nil, nil
	}
	ws := getenv("PRSM_WORKSPACE")
	if ws == "" {
		ws = cwd
	}
	if ws == "" {
		return nil, fmt.Errorf("PRSM_SESSION_ID is %s but PRSM_WORKSPACE is not set", sid)
	}
	repo, err := worktree.Discover(ctx, nil, ws)
	if err != nil {
		return nil, fmt.Errorf("find the workspace of session %s: %w", sid, err)
	}
	return &hookTarget{sessionID: sid, projectDir: prsm.ProjectDir(home, repo.Identity), workspace: repo.Root}, nil
}

// sessionOfPath reads the session out of a path under
// PRSM_HOME/projects/<identity>/worktrees/<session-id>/. Both paths are
// compared with their symlinks resolved, by filepath.Rel.
func sessionOfPath(home, dir string) *hookTarget {
	dir = safepath.Real(dir)
	roots := []string{home}
	if r := safepath.Real(home); r != home {
		roots = append(roots, r)
	}
	for _, root := range roots {
		projects := filepath.Join(root, "projects")
		rel, err := filepath.Rel(projects, dir)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) < 3 || parts[1] != "worktrees" {
			continue
		}
		projectDir := filepath.Join(projects, parts[0])
		return &hookTarget{sessionID: parts[2], projectDir: projectDir, worktree: filepath.Join(projectDir, "worktrees", parts[2])}
	}
	return nil
}

// hookClaude handles one Claude Code hook event.
func (a *app) hookClaude(ctx context.Context, in io.Reader) error {
	p, err := readClaudePayload(in)
	if err != nil {
		return err
	}
	// A write aimed at the workspace goes to the worktree (the capture
	// names the moved path too); Claude Code reads the answer on exit 0,
	// so a failed send is only reported: the write must not escape.
	answer := claudeIntoWorktree(ctx, p, os.Getenv)
	call, err := p.call()
	if err != nil || call == nil {
		return err
	}
	err = a.sendHook(ctx, p.Cwd, call, p.HookEventName)
	if answer == nil {
		return err
	}
	if err != nil {
		fmt.Fprintln(a.stdio.Err, oneLine("prsm hook: "+err.Error()))
	}
	return json.NewEncoder(a.stdio.Out).Encode(answer)
}

// sendHook sends one event's call to the server of the session whose
// worktree holds cwd (or $PRSM_SESSION_ID's), starting the server when
// none runs; outside every session it does nothing. event names the
// agent's event in error messages. Every adapter ends here.
func (a *app) sendHook(ctx context.Context, cwd string, call *hookCall, event string) error {
	t, err := locateSession(ctx, cwd, os.Getenv)
	if err != nil || t == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	// The call goes straight to the server server.json names, without
	// asking it for its status first (a round trip and a listing of the
	// sessions, 0.8 ms of the hook's 8.5). A call that did not reach a
	// prsm server (none listens there now, or another program answered)
	// goes again, to the server hookConnect finds or starts; one that
	// reached it is not sent twice.
	if _, cl, ok := knownServer(t.projectDir); ok {
		err := hookRequest(ctx, cl, t.sessionID, call)
		if err == nil || answeredByPrsm(err) || ctx.Err() != nil {
			return hookError(err, call, event)
		}
	}
	cctx, ccancel := context.WithTimeout(ctx, hookConnectTimeout)
	cl, err := a.hookConnect(cctx, t)
	ccancel()
	if err != nil {
		return err
	}
	return hookError(hookRequest(ctx, cl, t.sessionID, call), call, event)
}

// hookRequest sends the server call of one event.
func hookRequest(ctx context.Context, cl *client.Client, sessionID string, call *hookCall) error {
	var err error
	switch call.kind {
	case hookStart:
		_, err = cl.StartToolCall(ctx, sessionID, call.start)
	case hookComplete:
		_, err = cl.CompleteToolCall(ctx, sessionID, call.toolCallID, call.complete)
	case hookTurn:
		_, err = cl.Turn(ctx, sessionID, call.turn)
	case hookTurnEnd:
		_, err = cl.EndTurn(ctx, sessionID)
	}
	return err
}

// answeredByPrsm reports whether err is an error answer of the prsm
// server the call was meant for: every prsm answer carries a code, and
// one that refuses the token is another prsm server's (another
// workspace's server took the dead one's port).
func answeredByPrsm(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Code != "" && ae.Code != "unauthorized"
}

// hookError is the hook's error for what one event's call returned. A
// session that is gone or has ended is outside every session: nothing to
// do.
func hookError(err error, call *hookCall, event string) error {
	var ae *client.APIError
	if errors.As(err, &ae) && (ae.Code == "session_not_found" || ae.Code == "session_ended") {
		return nil
	}
	if err != nil {
		what := event
		if call.toolCallID != "" {
			what += " " + call.toolCallID
		}
		// The message only: a client.APIError must not reach explain,
		// which could turn it into exit 2.
		return fmt.Errorf("%s: %s", what, err.Error())
	}
	return nil
}

// hookConnect finds the session's server, starting one in the background
// when none runs; ctx bounds the whole of it. A server that is being
// started keeps starting after a give-up, ready for the next event.
func (a *app) hookConnect(ctx context.Context, t *hookTarget) (*client.Client, error) {
	if _, c, ok := liveServer(ctx, t.projectDir); ok {
		return c, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("server not reachable: %v", err)
	}
	repo, err := t.workspaceRepo(ctx)
	if err != nil {
		return nil, fmt.Errorf("server not running, and it cannot be started: %v", err)
	}
	_, c, err := a.startBackground(ctx, &project{repo: repo, dir: t.projectDir}, "")
	if err != nil {
		return nil, fmt.Errorf("server not reachable: %v", err)
	}
	return c, nil
}

// workspaceRepo finds the workspace a stopped server would serve, so that
// it can be started: $PRSM_WORKSPACE, the workspace of the last server.json,
// or the main working tree of the session worktree's repository. A
// candidate counts only if its identity is the project's.
func (t *hookTarget) workspaceRepo(ctx context.Context) (*worktree.Repo, error) {
	identity := filepath.Base(t.projectDir)
	var candidates []string
	if t.workspace != "" {
		candidates = append(candidates, t.workspace)
	}
	if info, err := server.ReadInfo(t.projectDir); err == nil && info.Workspace != "" {
		candidates = append(candidates, info.Workspace)
	}
	if t.worktree != "" {
		if wt, err := worktree.Discover(ctx, nil, t.worktree); err == nil && filepath.Base(wt.CommonDir) == ".git" {
			candidates = append(candidates, filepath.Dir(wt.CommonDir))
		}
	}
	for _, dir := range candidates {
		if repo, err := worktree.Discover(ctx, nil, dir); err == nil && repo.Identity == identity {
			return repo, nil
		}
	}
	return nil, fmt.Errorf("cannot find the workspace of %s", t.projectDir)
}

// oneLine makes an error message one printable line of bounded length:
// Claude Code shows it in the transcript.
func oneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	const max = 500
	if len(s) > max {
		s = label(s, max-3) + "..."
	}
	return s
}
