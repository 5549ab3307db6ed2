package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	stdsync "sync"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// hookHealth is what the engine remembers, in memory only, of a session's
// hook events: a restarted server knows none until the next one comes.
type hookHealth struct {
	agent string    // agent id of the newest hook-reported tool call; "" until one
	last  time.Time // when the last hook event came
	// session is the session's own agent id, for a session whose hooks
	// never reported.
	session string
	// calls and watches count, since the current turn began, the tool
	// calls the hooks reported and the Watch records the watcher made.
	calls, watches int
}

// hookMonitor keeps, in memory, which agent's hooks reported for each
// session and when (HookHealth); hooksMu guards hooks.
type hookMonitor struct {
	*Engine
	hooksMu stdsync.Mutex
	hooks   map[string]*hookHealth
}

// hookState is the session's hook health, made on first use; the caller
// holds hooksMu.
func (hm *hookMonitor) hookState(sessionID string) *hookHealth {
	if hm.hooks == nil {
		hm.hooks = map[string]*hookHealth{}
	}
	h := hm.hooks[sessionID]
	if h == nil {
		h = &hookHealth{}
		hm.hooks[sessionID] = h
	}
	return h
}

// hookCall notes a tool call start or complete that agent's hooks
// reported. A hook that names no agent (a complete usually does not) keeps
// the agent known, or else takes the session's.
func (hm *hookMonitor) hookCall(sessionID, agent, session string) {
	hm.hooksMu.Lock()
	defer hm.hooksMu.Unlock()
	h := hm.hookState(sessionID)
	switch {
	case agent != "":
		h.agent = agent
	case h.agent == "":
		h.agent = session
	}
	h.last = time.Now().UTC()
	h.calls++
}

// hookTurn notes a turn (turnStart) or a turn end. Only a session whose
// hooks reported a tool call counts it as a hook event: `prsm run` starts
// a turn of its own, and a turn carries no agent id.
func (hm *hookMonitor) hookTurn(sessionID string, turnStart bool) {
	hm.hooksMu.Lock()
	defer hm.hooksMu.Unlock()
	h := hm.hooks[sessionID]
	if h == nil {
		return
	}
	if h.agent != "" {
		h.last = time.Now().UTC()
	}
	if turnStart {
		h.calls, h.watches = 0, 0
	}
}

// watched notes a Watch record batch of the session, whose own agent id
// is agent.
func (hm *hookMonitor) watched(sessionID, agent string) {
	hm.hooksMu.Lock()
	defer hm.hooksMu.Unlock()
	h := hm.hookState(sessionID)
	h.session = agent
	h.watches++
}

// hookAgents are the agents prsm has hook adapters for, by the names a
// session's agent id takes from the command that runs them (`prsm run --
// cursor-agent`), each with the name `prsm hooks install` knows it by.
var hookAgents = map[string]string{
	"claude":       "claude",
	"codex":        "codex",
	"gemini":       "gemini",
	"opencode":     "opencode",
	"copilot":      "copilot",
	"cursor":       "cursor",
	"cursor-agent": "cursor",
}

// forgetHooks drops an ended session's hook health.
func (hm *hookMonitor) forgetHooks(sessionID string) {
	hm.hooksMu.Lock()
	defer hm.hooksMu.Unlock()
	delete(hm.hooks, sessionID)
}

// HookHealth is Engine.HookHealth's work.
func (hm *hookMonitor) HookHealth(sessionID string) api.HookHealth {
	hm.hooksMu.Lock()
	defer hm.hooksMu.Unlock()
	out := api.HookHealth{SessionID: sessionID}
	h := hm.hooks[sessionID]
	if h == nil {
		return out
	}
	if h.agent == "" {
		// No hook ever reported: a warning only for an agent that has
		// hooks, whose changes came through the watcher.
		if name, ok := hookAgents[strings.ToLower(filepath.Base(h.session))]; ok && h.watches > 0 {
			out.Warning = fmt.Sprintf("no hooks reported from %s in this session: its changes come only through the watcher, without its tool calls; run `prsm hooks install %s`, or start it with `prsm run -- %s`", name, name, h.session)
		}
		return out
	}
	out.Agent = h.agent
	last := h.last
	out.LastHookAt = &last
	if h.watches > 0 && h.calls == 0 {
		out.Warning = fmt.Sprintf("hooks are not firing in this worktree: %s's hooks reported before, but this turn's changes came only through the watcher (%s)", h.agent, prsm.Plural(h.watches, "Watch batch"))
	}
	return out
}
