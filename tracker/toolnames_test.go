package tracker

import "testing"

func TestCanonicalToolName(t *testing.T) {
	tests := map[string]string{
		// Canonical names stay, in any case.
		"Write": "Write", "Edit": "Edit", "MultiEdit": "MultiEdit",
		"NotebookEdit": "NotebookEdit", "Bash": "Bash", "Watch": "Watch",
		"EDIT": "Edit", "multiedit": "MultiEdit", "  Bash\n": "Bash",

		"write_file": "Write", "create_file": "Write", "Create": "Write",
		"write": "Write", "Write_File": "Write", "write_to_file": "Write",

		"str_replace_editor": "Edit", "str_replace_based_edit_tool": "Edit",
		"edit_file": "Edit", "apply_patch": "Edit", "replace_in_file": "Edit",
		"search_replace":             "Edit",
		"mcp__filesystem__edit_file": "Edit", "mcp__ide__edit": "Edit",
		"MCP__Some_Server__Edit_File": "Edit", "mcp__my__nested__edit": "Edit",
		"mcp__filesystem__write_file": "Write", "mcp__x__multi_edit": "MultiEdit",

		"multi_edit":    "MultiEdit",
		"notebook_edit": "NotebookEdit", "edit_notebook": "NotebookEdit",

		"run_terminal_cmd": "Bash", "shell": "Bash", "exec_command": "Bash",
		"bash": "Bash", "run_shell_command": "Bash", "terminal": "Bash",
		"execute_command": "Bash",

		// Unknown names come back trimmed, case kept.
		"Read": "Read", " Grep ": "Grep", "WebFetch": "WebFetch",
		"mcp__github__get_issue": "mcp__github__get_issue",
		"mcp__fs__read_file":     "mcp__fs__read_file",
		"mcp____edit":            "mcp____edit",
		"":                       "",
	}
	for in, want := range tests {
		if got := CanonicalToolName(in); got != want {
			t.Errorf("CanonicalToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsFileChangingTool(t *testing.T) {
	tests := map[string]bool{
		"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "Bash": true,
		"Watch": false, "Read": false, "Grep": false, "": false,
		"shell": true, "apply_patch": true, // aliases canonicalize first
	}
	for in, want := range tests {
		if got := IsFileChangingTool(in); got != want {
			t.Errorf("IsFileChangingTool(%q) = %v, want %v", in, got, want)
		}
	}
}
