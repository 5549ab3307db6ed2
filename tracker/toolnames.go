package tracker

import "github.com/prsm-dev/prsm"

// Canonical tool names, as records carry them in tool_name (SPEC.md, Record);
// the table that maps each agent's names onto them is prsm.CanonicalToolName.
const (
	ToolWrite        = prsm.ToolWrite
	ToolEdit         = prsm.ToolEdit
	ToolMultiEdit    = prsm.ToolMultiEdit
	ToolNotebookEdit = prsm.ToolNotebookEdit
	ToolBash         = prsm.ToolBash
	// ToolWatch names records made by the file watcher and by reconcile,
	// for changes no tool call announced.
	ToolWatch = prsm.ToolWatch
)

// CanonicalToolName is prsm.CanonicalToolName: an agent's tool name as
// records carry it.
func CanonicalToolName(name string) string { return prsm.CanonicalToolName(name) }

// ChangesNamedFileOnly reports whether a tool (canonical name) changes only
// the one file its arguments name, as the edit tools do; a shell may change
// any file.
func ChangesNamedFileOnly(canonical string) bool {
	switch canonical {
	case ToolWrite, ToolEdit, ToolMultiEdit, ToolNotebookEdit:
		return true
	}
	return false
}

// IsFileChangingTool reports whether a tool is expected to change files, which
// is what earns a tool call its automatic checkpoint (SPEC.md rule 5). It takes
// a canonical name but canonicalizes again, so an alias gives the same answer.
// Watch is not one: its records describe changes already made.
func IsFileChangingTool(canonical string) bool {
	switch CanonicalToolName(canonical) {
	case ToolWrite, ToolEdit, ToolMultiEdit, ToolNotebookEdit, ToolBash:
		return true
	}
	return false
}
