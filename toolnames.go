package prsm

import "strings"

// The table lives here, beside the Record that carries its names, so that
// the hook adapters (package hook, and the lean prsm-hook binary) name tools
// as the tracker does without linking it.

// Canonical tool names, as records carry them in tool_name (SPEC.md, Record).
// Every agent's own names map onto these so that clients group and filter
// records the same way whichever agent made them.
const (
	ToolWrite        = "Write"
	ToolEdit         = "Edit"
	ToolMultiEdit    = "MultiEdit"
	ToolNotebookEdit = "NotebookEdit"
	ToolBash         = "Bash"
	// ToolWatch names records made by the file watcher and by reconcile,
	// for changes no tool call announced.
	ToolWatch = "Watch"
)

// toolAliases maps lower-cased tool names of the agents prsm knows to canonical
// names. Add a row here to teach prsm a new agent's tools.
//
// apply_patch (Codex) and the other patch tools map to Edit: they edit files
// in place, possibly several, and a multi-file call already becomes one
// record per file with :0, :1 ... suffixes; MultiEdit stays for "several edits
// to one file" as Claude Code means it.
var toolAliases = map[string]string{
	// Canonical names, so that any casing of them comes back canonical.
	"write":        ToolWrite,
	"edit":         ToolEdit,
	"multiedit":    ToolMultiEdit,
	"notebookedit": ToolNotebookEdit,
	"bash":         ToolBash,
	"watch":        ToolWatch,

	// Whole-file writes.
	"write_file":    ToolWrite,
	"create_file":   ToolWrite,
	"create":        ToolWrite,
	"write_to_file": ToolWrite, // Cline

	// In-place edits.
	"str_replace_editor":          ToolEdit, // Anthropic text editor tool
	"str_replace_based_edit_tool": ToolEdit, // its newer name
	"edit_file":                   ToolEdit, // Cursor, MCP filesystem servers
	"apply_patch":                 ToolEdit, // Codex; see above
	"replace_in_file":             ToolEdit, // Cline
	"search_replace":              ToolEdit, // Cursor

	"multi_edit": ToolMultiEdit,

	"notebook_edit": ToolNotebookEdit,
	"edit_notebook": ToolNotebookEdit, // Cursor

	// Shell commands.
	"run_terminal_cmd":  ToolBash, // Cursor
	"shell":             ToolBash, // Codex
	"exec_command":      ToolBash, // Codex
	"run_shell_command": ToolBash, // Gemini CLI
	"terminal":          ToolBash,
	"execute_command":   ToolBash, // Cline
}

// mcpAliases maps the tool part of an MCP tool name (mcp__<server>__<tool>) to a
// canonical name. It is narrower than toolAliases on purpose: an MCP tool runs
// in some other program, and only the file-editing ones, whatever the server
// is called, are known to act on the worktree; any other MCP tool keeps its
// own name.
var mcpAliases = map[string]string{
	"edit":        ToolEdit,
	"edit_file":   ToolEdit,
	"write":       ToolWrite,
	"write_file":  ToolWrite,
	"create_file": ToolWrite,
	"multi_edit":  ToolMultiEdit,
}

// CanonicalToolName maps an agent's tool name to the canonical name records
// carry, ignoring case and surrounding space. Names it does not know come back
// trimmed but otherwise as given, so nothing an agent reports is lost.
func CanonicalToolName(name string) string {
	name = strings.TrimSpace(name)
	lower := strings.ToLower(name)
	if c, ok := toolAliases[lower]; ok {
		return c
	}
	if rest, ok := strings.CutPrefix(lower, "mcp__"); ok {
		if i := strings.LastIndex(rest, "__"); i > 0 {
			if c, ok := mcpAliases[rest[i+2:]]; ok {
				return c
			}
		}
	}
	return name
}
