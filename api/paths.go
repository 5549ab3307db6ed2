package api

// SessionPath is the route of session id, /sessions/{id}, with the id
// escaped: the start of every route of one session, for every client.
func SessionPath(id string) string { return RouteGetSession.Path(id) }

// CompletePath is the route of a tool call's complete.
func CompletePath(sessionID, toolCallID string) string {
	return RouteCompleteToolCall.Path(sessionID, toolCallID)
}

// HookTokensPath is the route that mints a session's hook tokens.
func HookTokensPath(sessionID string) string { return RouteMintHookToken.Path(sessionID) }
