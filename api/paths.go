package api

import "net/url"

// SessionPath is the route of session id, /sessions/{id}, with the id
// escaped: the start of every route of one session, for every client.
func SessionPath(id string) string {
	return "/sessions/" + url.PathEscape(id)
}

// CompletePath is the route of a tool call's complete.
func CompletePath(sessionID, toolCallID string) string {
	return SessionPath(sessionID) + "/tool-calls/" + url.PathEscape(toolCallID) + "/complete"
}

// HookTokensPath is the route that mints a session's hook tokens.
func HookTokensPath(sessionID string) string {
	return SessionPath(sessionID) + "/hook-tokens"
}
