package engine

import "github.com/prsm-dev/prsm/engine/workspace"

// WorkspaceEntry is a workspace file as ReadWorkspaceFile found it.
type WorkspaceEntry = workspace.Entry

// ReadWorkspaceFile reads the user's workspace file rel (a record's
// RelPath): the bytes of a regular file up to limit, the target of a link
// (never followed), nothing else (workspace.Writer.Read: a path out of
// the workspace, through a linked directory or into .git is refused).
func (e *Engine) ReadWorkspaceFile(rel string, limit int64) (*WorkspaceEntry, error) {
	return e.ws.Read(rel, limit)
}
