package history

import (
	"context"

	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

// History is the workspace's history of kept work: its store, its
// repository, and how to read a record's contents.
type History struct {
	DB   *store.DB
	Repo *worktree.Repo
	// Content is one side ("before" or "after") of a record, its
	// rejected hunks left out (engine.Content).
	Content func(ctx context.Context, sessionID, recordID, side string) ([]byte, error)
	// Version is prsm's version, the trace records' tool.version.
	Version string
}
