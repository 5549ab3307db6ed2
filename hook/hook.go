// Package hook runs prsm's agent hook adapters: `prsm hook AGENT` and the
// lean prsm-hook binary hand one hook event to the agent's adapter
// (Adapter.Command; the adapters themselves, which translate an agent's
// events into session API calls, live in the agents' folders under
// agents/), and this package finds the session whose worktree holds the
// event's cwd and sends the call to that session's server, starting it
// when none runs. The server runs Claude Code's and Copilot CLI's
// mappings in process for their http hooks (ServeClaude, ServeCopilot).
//
// It links neither the store (sqlite), the git layer (go-git), the HTTP
// server (echo) nor net/http (it sends its requests through
// internal/wire): a hook process starts in a few milliseconds, as an
// agent's tool loop pays for every one. What needs those (finding a
// workspace's identity, starting a server) comes in through Adapter's
// function fields.
package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agent"
	"github.com/prsm-dev/prsm/api"
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

// sendHook sends one event's call to the server of the session whose
// worktree holds cwd (or $PRSM_SESSION_ID's), starting the server when
// none runs; outside every session it does nothing. event names the
// agent's event in error messages. Every adapter ends here.
func (a *Adapter) sendHook(ctx context.Context, cwd string, call *agent.Call, event string) error {
	t, err := a.locateSession(ctx, cwd)
	if err != nil || t == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	// The call goes straight to the server server.json names, without
	// asking it for its status first (a round trip and a listing of the
	// sessions, a tenth of the hook's time). A call that did not reach a
	// prsm server (none listens there now, or another program answered)
	// goes again, to the server connect finds or starts; one that
	// reached it is not sent twice.
	if info, ok := wire.KnownServer(t.ProjectDir); ok {
		err := agent.Deliver(ctx, &wireServer{cl: a.client(info)}, t.SessionID, call)
		if err == nil || answeredByPrsm(err) || ctx.Err() != nil {
			return hookError(err, call, event, t.ProjectDir)
		}
	}
	cctx, ccancel := context.WithTimeout(ctx, hookConnectTimeout)
	cl, err := a.connect(cctx, t)
	ccancel()
	if err != nil {
		return err
	}
	return hookError(agent.Deliver(ctx, &wireServer{cl: cl}, t.SessionID, call), call, event, t.ProjectDir)
}

// wireServer is a Server over HTTP. The answers' bodies are not needed,
// but each must be JSON: a program other than prsm that answered 2xx did
// not take the call. feedback is what the last answer said of the
// session's feedback (api.FeedbackHeader; "" when it did not say).
type wireServer struct {
	cl       *wire.Client
	feedback string
}

func (w *wireServer) post(ctx context.Context, path string, body any, extra ...wire.Header) error {
	var ans json.RawMessage
	fields, err := w.cl.DoFields(ctx, "POST", path, body, &ans, extra...)
	w.feedback = fields.Get(api.FeedbackHeader)
	return err
}

func (w *wireServer) StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) error {
	return w.post(ctx, api.RouteStartToolCall.Path(sessionID), req)
}

// CompleteToolCall asks the server to answer as soon as it holds the
// session's lock (202, the work done after): the agent need not wait for
// the records. A server that does not know the preference answers 200
// once they are stored; either is success.
func (w *wireServer) CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) error {
	return w.post(ctx, api.CompletePath(sessionID, toolCallID), req, wire.Header{Name: "Prefer", Value: "respond-async"})
}

func (w *wireServer) Turn(ctx context.Context, sessionID string, req api.TurnRequest) error {
	return w.post(ctx, api.RouteTurn.Path(sessionID), req)
}

func (w *wireServer) EndTurn(ctx context.Context, sessionID string) error {
	return w.post(ctx, api.RouteTurnEnd.Path(sessionID), nil)
}

// TakeFeedback asks for what the session's agent has not heard yet, for
// the event's answer to carry; when the call's answer said none waits,
// without a request.
func (w *wireServer) TakeFeedback(ctx context.Context, sessionID string, req api.TakeFeedbackRequest) (*api.Delivery, error) {
	if w.feedback == api.FeedbackNone {
		return &api.Delivery{IDs: []int64{}}, nil
	}
	var d api.Delivery
	if err := w.cl.Do(ctx, "POST", api.RouteTakeFeedback.Path(sessionID), req, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// ConfirmFeedback says that the answer carrying ids is out.
func (w *wireServer) ConfirmFeedback(ctx context.Context, sessionID string, ids []int64) error {
	return w.post(ctx, api.RouteConfirmFeedback.Path(sessionID), api.ConfirmFeedbackRequest{IDs: ids})
}

// answeredByPrsm reports whether err is an error answer of the prsm
// server the call was meant for: every prsm answer carries a code, and
// one that refuses the token is another prsm server's (another
// workspace's server took the dead one's port).
func answeredByPrsm(err error) bool {
	var ae *wire.Error
	return errors.As(err, &ae) && ae.Code != "" && ae.Code != "unauthorized"
}

// hookError is the hook's error for what one event's call to the server
// of the project dir projectDir returned. A session that is gone or has
// ended is outside every session: nothing to do. A server of another
// version than this hook's is named as such (versionNote).
func hookError(err error, call *agent.Call, event, projectDir string) error {
	var ae *wire.Error
	if errors.As(err, &ae) && (ae.Code == "session_not_found" || ae.Code == "session_ended") {
		return nil
	}
	if err != nil {
		what := event
		if call.ToolCallID != "" {
			what += " " + call.ToolCallID
		}
		// The message only: a wire.Error must not reach explain,
		// which could turn it into exit 2.
		return fmt.Errorf("%s: %s%s", what, err.Error(), versionNote(err, projectDir))
	}
	return nil
}

// versionNote is what an error answer of the server of projectDir adds
// when that server (its server.json's version) is not of this hook's
// version, else "": prsm and prsm-hook installed apart, or a server left
// running across an upgrade. Requests and answers are JSON objects whose
// unknown fields both sides ignore, so most calls work across versions;
// a route the server does not serve (an older server) is said plainly.
// The hook fails as on any other error (exit 1, never the exit 2 that
// blocks the agent's tool); the event is not recorded, though the
// worktree's changes are (the next call's or turn's scan finds them).
func versionNote(err error, projectDir string) string {
	var ae *wire.Error
	if !errors.As(err, &ae) {
		return ""
	}
	info, rerr := api.ReadInfo(projectDir)
	if rerr != nil || info.Version == prsm.Version {
		return ""
	}
	server := "version " + info.Version
	if info.Version == "" {
		server = "of a version older than " + prsm.Version
	}
	fix := "restart it with the prsm of this hook's version (prsm stop; the next hook event starts it), " +
		"and install prsm and prsm-hook together (make install, or both from one release)"
	if unknownRoute(ae) {
		return fmt.Sprintf(": the workspace's prsm server is %s and does not serve this call, which this hook (version %s) sends; %s",
			server, prsm.Version, fix)
	}
	return fmt.Sprintf(" (the workspace's prsm server is %s, this hook %s: %s)", server, prsm.Version, fix)
}

// unknownRoute reports whether ae is the answer of a server that has no
// such route (or not for this method): its router's own 404 or 405, not
// the not-found of an object it looked for; or, to a hook token (prsm
// run's agents), its refusal of a route it does not count among the hook
// routes, which every route this hook sends is.
func unknownRoute(ae *wire.Error) bool {
	switch api.Code(ae.Code) {
	case api.CodeNotFound:
		return ae.Status == 404 && ae.Msg == "Not Found"
	case api.CodeMethodNotAllowed:
		return ae.Status == 405
	case api.CodeHookTokenScope:
		return ae.Status == 403 && ae.Msg == "a hook token only sends the hook events of its session"
	}
	return false
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
	if err := cl.Do(ctx, api.RouteHealthz.Method(), api.RouteHealthz.Path(), nil, &h); err != nil || !h.OK {
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
