package api

import "time"

// LoginCodeRequest is the body of POST /ui/codes; it may be empty.
type LoginCodeRequest struct {
	// LoginFile asks for a login file: a form that posts the code, for a
	// browser to open instead of an address that carries the code.
	LoginFile bool `json:"login_file"`
}

// LoginCode is the answer of POST /ui/codes.
type LoginCode struct {
	Code string `json:"code"`
	// URL logs in when visited (GET), once: for the user to paste.
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
	// LoginFile is the login file's absolute path, when one was asked for.
	LoginFile string `json:"login_file,omitempty"`
}

// WorkspaceFile is the answer of GET /ui/api/sessions/{id}/file-changes/{tc}/workspace:
// the user's current version of a record's file, which a conflict shows
// beside the agent's.
type WorkspaceFile struct {
	RelPath string  `json:"rel_path"`
	Present bool    `json:"present"`
	Binary  bool    `json:"binary"`
	Symlink bool    `json:"symlink"`
	Size    int64   `json:"size"`
	Content *string `json:"content"` // nil when absent, binary or over engine.InlineLimit
}
