// Package hook holds prsm's agent hook adapters: it reads one hook event of
// an agent (Claude Code, Codex, Gemini CLI, Copilot CLI, opencode, Cursor),
// maps it onto the session API (a tool call's start or complete, a turn's
// start or end), finds the session whose worktree holds the event's cwd,
// and sends the call to that session's server. `prsm hook AGENT` and the
// lean prsm-hook binary run it as a command (Adapter); the server runs the
// same mapping in process for Claude Code's http hooks (ServeClaude).
//
// It links neither the store (sqlite), the git layer (go-git), the HTTP
// server (echo) nor net/http (it sends its requests through
// internal/wire): a hook process starts in a few milliseconds, as an
// agent's tool loop pays for every one. What needs those (finding a
// workspace's identity, starting a server) comes in through Adapter's
// function fields.
package hook

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

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/internal/wire"
)

// The hook runs inside the agent's tool loop, so it is bounded: finding (or
// starting) the server gets hookConnectTimeout, the whole call hookTimeout,
// which stays under the 10 s timeout `prsm hooks install` gives Claude Code.
// A call a busy store answered (503 busy) is sent again by the client
// while hookTimeout leaves room for the wait (wire.RetryBusy retries it
// within its context's deadline); as the server answers busy only after
// waiting five seconds for the lock itself, that is once at most.
const (
	hookConnectTimeout = 5 * time.Second
	hookTimeout        = 8 * time.Second
	// maxHookPayload bounds what is read from stdin; it matches the
	// server's body limit, since a Write's content travels on to it.
	maxHookPayload = api.DefaultBodyLimit
)

// Adapter runs the hook adapters as a command: one event on In, the
// answer an agent reads (if any) on Stdout.
type Adapter struct {
	// Stdout receives the answer an agent reads (Claude Code's
	// updatedInput), Stderr what a failure left to say.
	Stdout, Stderr io.Writer
	// Getenv reads the environment ($PRSM_SESSION_ID, $PRSM_WORKSPACE,
	// $PRSM_HOOK_TOKEN, $PRSM_COPILOT_EVENT); os.Getenv when nil.
	Getenv func(string) string
	// Discover finds the git working tree that holds dir
	// (worktree.Discover).
	Discover func(ctx context.Context, dir string) (*Repo, error)
	// StartServer starts the server of the workspace at root, whose state
	// is in projectDir, in the background; it returns once the server
	// answers, or with why it did not.
	StartServer func(ctx context.Context, projectDir, root string) error
}

// Repo is what the adapters need to know of a git working tree.
// `prsm hook locate DIR` prints it as JSON for the lean binary.
type Repo struct {
	// Root is the working tree's real path.
	Root string `json:"root"`
	// CommonDir is the real path of its repository's common git directory.
	CommonDir string `json:"common_dir"`
	// Identity names the workspace's project dir under PRSM_HOME/projects.
	Identity string `json:"identity"`
}

func (a *Adapter) getenv(name string) string {
	if a.Getenv == nil {
		return os.Getenv(name)
	}
	return a.Getenv(name)
}

// Run handles one event of agent read from in; ok is false for an agent
// prsm has no adapter for.
func (a *Adapter) Run(ctx context.Context, agent string, in io.Reader) (ok bool, err error) {
	handle, ok := map[string]func(context.Context, io.Reader) error{
		"claude":   a.Claude,
		"codex":    a.Codex,
		"gemini":   a.Gemini,
		"opencode": a.Opencode,
		"copilot":  a.Copilot,
		"cursor":   a.Cursor,
	}[agent]
	if !ok {
		return false, nil
	}
	return true, handle(ctx, in)
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

// readHookEvent reads one hook event, bounded: an agent's payload is
// never larger than maxHookPayload.
func readHookEvent(in io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(in, maxHookPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read hook event: %w", err)
	}
	if len(data) > maxHookPayload {
		return nil, fmt.Errorf("hook event is larger than %d MiB", maxHookPayload>>20)
	}
	return data, nil
}

// decodeHookEvent reads one hook event (readHookEvent) into an agent's
// payload type, which must name its event (event).
func decodeHookEvent[T any](in io.Reader, event func(*T) string) (*T, error) {
	data, err := readHookEvent(in)
	if err != nil {
		return nil, err
	}
	var p T
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("malformed hook event (want one JSON object): %v", err)
	}
	if event(&p) == "" {
		return nil, errors.New("malformed hook event: no hook_event_name")
	}
	return &p, nil
}

// readClaudePayload reads and decodes one Claude Code hook event.
func readClaudePayload(in io.Reader) (*claudePayload, error) {
	return decodeHookEvent(in, func(p *claudePayload) string { return p.HookEventName })
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
	if p.HookEventName == "PostToolUse" && p.inBackground() {
		// A shell sent to the background answers as it starts; what it
		// writes later is its own. Its call stays open until the task's
		// notification (or the turn's end) completes it.
		return nil, nil
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
	return derivedCallID("claude", p.ToolUseID, p.ToolInput, p.SessionID, strings.TrimSpace(p.ToolName))
}

// derivedCallID is an agent's own tool call id where the server takes
// it. Otherwise it is a hash, prefixed with the agent's name, of the
// refused id or, when there is none, of what both events of the call
// carry alike (parts, then the tool's input).
func derivedCallID(agent, id string, input json.RawMessage, parts ...string) string {
	if prsm.ValidToolCallID(id) {
		return id
	}
	h := sha256.New()
	if id != "" {
		fmt.Fprintf(h, "tool_use_id\x00%s", id)
	} else {
		for _, part := range parts {
			fmt.Fprintf(h, "%s\x00", part)
		}
		h.Write(canonicalJSON(input))
	}
	return agent + "-" + hex.EncodeToString(h.Sum(nil))[:32]
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

// Target is the session an event belongs to and where its server is.
type Target struct {
	SessionID  string
	ProjectDir string // PRSM_HOME/projects/<identity>
	Worktree   string // the session's worktree, when found from cwd
	Workspace  string // the workspace root, when known from the environment
}

// locateSession finds the session of an event: the one whose worktree
// holds cwd, else $PRSM_SESSION_ID in the workspace $PRSM_WORKSPACE (or
// cwd). nil means the event is outside every session.
func (a *Adapter) locateSession(ctx context.Context, cwd string) (*Target, error) {
	home, err := prsm.Home()
	if err != nil {
		return nil, err
	}
	if cwd != "" {
		if t := SessionOfPath(home, cwd); t != nil {
			return t, nil
		}
	}
	sid := strings.TrimSpace(a.getenv("PRSM_SESSION_ID"))
	if sid == "" {
		return nil, nil
	}
	ws := a.getenv("PRSM_WORKSPACE")
	if ws == "" {
		ws = cwd
	}
	if ws == "" {
		return nil, fmt.Errorf("PRSM_SESSION_ID is %s but PRSM_WORKSPACE is not set", sid)
	}
	if a.Discover == nil {
		return nil, fmt.Errorf("find the workspace of session %s: no way to find it", sid)
	}
	repo, err := a.Discover(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("find the workspace of session %s: %w", sid, err)
	}
	return &Target{SessionID: sid, ProjectDir: prsm.ProjectDir(home, repo.Identity), Workspace: repo.Root}, nil
}

// SessionIn reads the session out of a path under
// projectDir/worktrees/<session-id>/ (compared as SessionOfPath does):
// how the server, whose project dir is projectDir, finds an event's
// session.
func SessionIn(projectDir, dir string) *Target {
	if dir == "" || projectDir == "" {
		return nil
	}
	dir = safepath.Real(dir)
	roots := []string{projectDir}
	if r := safepath.Real(projectDir); r != projectDir {
		roots = append(roots, r)
	}
	for _, root := range roots {
		rel, err := filepath.Rel(filepath.Join(root, "worktrees"), dir)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		sid := strings.Split(rel, string(filepath.Separator))[0]
		if sid == "." {
			return nil // the worktrees directory itself
		}
		return &Target{SessionID: sid, ProjectDir: projectDir, Worktree: filepath.Join(projectDir, "worktrees", sid)}
	}
	return nil
}

// SessionOfPath reads the session out of a path under
// PRSM_HOME/projects/<identity>/worktrees/<session-id>/. Both paths are
// compared with their symlinks resolved, by filepath.Rel.
func SessionOfPath(home, dir string) *Target {
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
		return &Target{SessionID: parts[2], ProjectDir: projectDir, Worktree: filepath.Join(projectDir, "worktrees", parts[2])}
	}
	return nil
}

// Claude handles one Claude Code hook event.
func (a *Adapter) Claude(ctx context.Context, in io.Reader) error {
	p, err := readClaudePayload(in)
	if err != nil {
		return err
	}
	// A write aimed at the workspace goes to the worktree (the capture
	// names the moved path too); Claude Code reads the answer on exit 0,
	// so a failed send is only reported: the write must not escape.
	answer := a.claudeIntoWorktree(ctx, p)
	call, err := p.call()
	if err != nil || call == nil {
		return err
	}
	err = a.sendHook(ctx, p.Cwd, call, p.HookEventName)
	if answer == nil {
		return err
	}
	if err != nil {
		fmt.Fprintln(a.Stderr, OneLine("prsm hook: "+err.Error()))
	}
	return json.NewEncoder(a.Stdout).Encode(answer)
}

// sendHook sends one event's call to the server of the session whose
// worktree holds cwd (or $PRSM_SESSION_ID's), starting the server when
// none runs; outside every session it does nothing. event names the
// agent's event in error messages. Every adapter ends here.
func (a *Adapter) sendHook(ctx context.Context, cwd string, call *hookCall, event string) error {
	t, err := a.locateSession(ctx, cwd)
	if err != nil || t == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	// The call goes straight to the server server.json names, without
	// asking it for its status first (a round trip and a listing of the
	// sessions, 0.8 ms of the hook's 8.5). A call that did not reach a
	// prsm server (none listens there now, or another program answered)
	// goes again, to the server connect finds or starts; one that
	// reached it is not sent twice.
	if info, ok := wire.KnownServer(t.ProjectDir); ok {
		err := hookRequest(ctx, wireServer{a.client(info)}, t.SessionID, call)
		if err == nil || answeredByPrsm(err) || ctx.Err() != nil {
			return hookError(err, call, event)
		}
	}
	cctx, ccancel := context.WithTimeout(ctx, hookConnectTimeout)
	cl, err := a.connect(cctx, t)
	ccancel()
	if err != nil {
		return err
	}
	return hookError(hookRequest(ctx, wireServer{cl}, t.SessionID, call), call, event)
}

// Server takes the calls of hook events: a session's server over HTTP
// (wireServer), or the engine in process (the server's own http hook
// route).
type Server interface {
	StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) error
	CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) error
	Turn(ctx context.Context, sessionID string, req api.TurnRequest) error
	EndTurn(ctx context.Context, sessionID string) error
}

// wireServer is a Server over HTTP. The answers' bodies are not needed,
// but each must be JSON: a program other than prsm that answered 2xx did
// not take the call.
type wireServer struct{ cl *wire.Client }

func (w wireServer) post(ctx context.Context, path string, body any, extra ...wire.Header) error {
	var ans json.RawMessage
	return w.cl.Do(ctx, "POST", path, body, &ans, extra...)
}

func (w wireServer) StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) error {
	return w.post(ctx, api.SessionPath(sessionID)+"/tool-calls", req)
}

// CompleteToolCall asks the server to answer as soon as it holds the
// session's lock (202, the work done after): the agent need not wait for
// the records. A server that does not know the preference answers 200
// once they are stored; either is success.
func (w wireServer) CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) error {
	return w.post(ctx, api.CompletePath(sessionID, toolCallID), req, wire.Header{Name: "Prefer", Value: "respond-async"})
}

func (w wireServer) Turn(ctx context.Context, sessionID string, req api.TurnRequest) error {
	return w.post(ctx, api.SessionPath(sessionID)+"/turns", req)
}

func (w wireServer) EndTurn(ctx context.Context, sessionID string) error {
	return w.post(ctx, api.SessionPath(sessionID)+"/turn-end", nil)
}

// hookRequest sends the server call of one event.
func hookRequest(ctx context.Context, cl Server, sessionID string, call *hookCall) error {
	var err error
	switch call.kind {
	case hookStart:
		err = cl.StartToolCall(ctx, sessionID, call.start)
	case hookComplete:
		err = cl.CompleteToolCall(ctx, sessionID, call.toolCallID, call.complete)
	case hookTurn:
		err = cl.Turn(ctx, sessionID, call.turn)
	case hookTurnEnd:
		err = cl.EndTurn(ctx, sessionID)
	}
	return err
}

// answeredByPrsm reports whether err is an error answer of the prsm
// server the call was meant for: every prsm answer carries a code, and
// one that refuses the token is another prsm server's (another
// workspace's server took the dead one's port).
func answeredByPrsm(err error) bool {
	var ae *wire.Error
	return errors.As(err, &ae) && ae.Code != "" && ae.Code != "unauthorized"
}

// hookError is the hook's error for what one event's call returned. A
// session that is gone or has ended is outside every session: nothing to
// do.
func hookError(err error, call *hookCall, event string) error {
	var ae *wire.Error
	if errors.As(err, &ae) && (ae.Code == "session_not_found" || ae.Code == "session_ended") {
		return nil
	}
	if err != nil {
		what := event
		if call.toolCallID != "" {
			what += " " + call.toolCallID
		}
		// The message only: a wire.Error must not reach explain,
		// which could turn it into exit 2.
		return fmt.Errorf("%s: %s", what, err.Error())
	}
	return nil
}

// hookToken is $PRSM_HOOK_TOKEN: the hook token of its session that
// `prsm run` puts in the agent's environment, so that the agent never
// holds the server's own token; "" for an agent started outside `prsm
// run`.
func (a *Adapter) hookToken() string {
	return strings.TrimSpace(a.getenv(api.HookTokenEnv))
}

// client is a client of the server info describes that sends the hook
// token, and the server's own token (server.json's) only when there is
// none: then the agent was started outside `prsm run`, and this hook,
// which runs as the user, reads no more than the agent itself could.
func (a *Adapter) client(info *api.Info) *wire.Client {
	cl := wire.New(info)
	if tok := a.hookToken(); tok != "" {
		cl.Token = tok
	}
	return cl
}

// liveTimeout bounds the question whether a server answers.
const liveTimeout = 3 * time.Second

// live is a client of the server of the project dir dir, if it answers.
// With the server's token the hook asks GET /status (wire.LiveServer); a
// hook token authorizes no such question, so with one it asks GET
// /healthz, and the call itself then finds out whether this server takes
// the token.
func (a *Adapter) live(ctx context.Context, dir string) (*wire.Client, bool) {
	if a.hookToken() == "" {
		info, ok := wire.LiveServer(ctx, dir)
		if !ok {
			return nil, false
		}
		return wire.New(info), true
	}
	info, ok := wire.KnownServer(dir)
	if !ok {
		return nil, false
	}
	cl := a.client(info)
	ctx, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	var h api.Health
	if err := cl.Do(ctx, "GET", "/healthz", nil, &h); err != nil || !h.OK {
		return nil, false
	}
	return cl, true
}

// connect finds the session's server, starting one in the background
// when none runs; ctx bounds the whole of it. A server that is being
// started keeps starting after a give-up, ready for the next event.
func (a *Adapter) connect(ctx context.Context, t *Target) (*wire.Client, error) {
	if cl, ok := a.live(ctx, t.ProjectDir); ok {
		return cl, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("server not reachable: %v", err)
	}
	if a.StartServer == nil {
		return nil, errors.New("server not running, and this hook cannot start it")
	}
	root, err := a.WorkspaceRoot(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("server not running, and it cannot be started: %v", err)
	}
	if err := a.StartServer(ctx, t.ProjectDir, root); err != nil {
		return nil, fmt.Errorf("server not reachable: %v", err)
	}
	if cl, ok := a.live(ctx, t.ProjectDir); ok {
		return cl, nil
	}
	return nil, errors.New("server not reachable: it started, but does not answer")
}

// WorkspaceRoot finds the workspace a stopped server would serve, so that
// it can be started: $PRSM_WORKSPACE, the workspace of the last
// server.json, or the main working tree of the session worktree's
// repository. A candidate counts only if its identity is the project's.
func (a *Adapter) WorkspaceRoot(ctx context.Context, t *Target) (string, error) {
	identity := filepath.Base(t.ProjectDir)
	var candidates []string
	if t.Workspace != "" {
		candidates = append(candidates, t.Workspace)
	}
	if info, err := api.ReadInfo(t.ProjectDir); err == nil && info.Workspace != "" {
		candidates = append(candidates, info.Workspace)
	}
	if a.Discover == nil {
		return "", fmt.Errorf("cannot find the workspace of %s", t.ProjectDir)
	}
	if t.Worktree != "" {
		if wt, err := a.Discover(ctx, t.Worktree); err == nil && filepath.Base(wt.CommonDir) == ".git" {
			candidates = append(candidates, filepath.Dir(wt.CommonDir))
		}
	}
	for _, dir := range candidates {
		if repo, err := a.Discover(ctx, dir); err == nil && repo.Identity == identity {
			return repo.Root, nil
		}
	}
	return "", fmt.Errorf("cannot find the workspace of %s", t.ProjectDir)
}

// OneLine makes an error message one printable line of bounded length:
// Claude Code shows it in the transcript.
func OneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	const max = 500
	if len(s) > max {
		s = label(s, max-3) + "..."
	}
	return s
}
