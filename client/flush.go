package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/prsm-dev/prsm/api"
)

// Flush asks the server to record at once what changed in the session's
// worktree that no tool call claimed (as a Watch tool call).
func (c *Client) Flush(ctx context.Context, sessionID string) (*api.Records, error) {
	var recs api.Records
	return &recs, c.Do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(sessionID)+"/flush", nil, &recs)
}

// EndTurn tells the server that the agent's turn ended (Claude Code's
// Stop): it closes the tool calls still in flight, which lost their
// PostToolUse, and records what no tool call claimed.
func (c *Client) EndTurn(ctx context.Context, sessionID string) (*api.Records, error) {
	var recs api.Records
	return &recs, c.Do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(sessionID)+"/turn-end", nil, &recs)
}
