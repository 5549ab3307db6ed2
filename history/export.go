package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

// TraceShow is the trace records of the note of commit rev (prsm trace
// show), each as the note holds it; none when the commit has no note.
func (h *History) TraceShow(ctx context.Context, rev string) (*api.Traces, error) {
	out, err := h.git(ctx, worktree.NewCmd("rev-parse", "-q", "--verify").Rev(rev+"^{commit}"))
	if err != nil {
		return nil, prsm.Errorf(prsm.ErrInvalid, string(api.CodeBadRev), "name a commit (a hash, a branch, HEAD~2)", "%q names no commit", rev)
	}
	commit := strings.TrimSpace(string(out))
	res := &api.Traces{Records: []json.RawMessage{}}
	note, err := h.noteText(ctx, commit)
	if note == nil || err != nil {
		return res, err
	}
	dec := json.NewDecoder(bytes.NewReader(note))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return res, nil
		} else if err != nil {
			return nil, fmt.Errorf("the note of %.12s is not JSON: %v", commit, err)
		}
		res.Records = append(res.Records, raw)
	}
}

// TraceExport is session s's uncommitted work as one trace record (prsm
// trace export): for each file it changed, the lines of the workspace
// file that its records not yet committed wrote.
func (h *History) TraceExport(ctx context.Context, s *prsm.Session) (*Trace, error) {
	recs, err := store.ListRecords(ctx, h.DB.Q(), store.RecordFilter{SessionID: s.ID})
	if err != nil {
		return nil, err
	}
	var files []string
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Commit == "" && !seen[r.RelPath] {
			seen[r.RelPath] = true
			files = append(files, r.RelPath)
		}
	}
	tb := newTraceBuilder("", h.Version, time.Now())
	keep := func(r *prsm.Record) bool { return r.SessionID == s.ID && r.Commit == "" }
	prompts := h.prompts(ctx, s.ID)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(h.Repo.Root, filepath.FromSlash(f)))
		if err != nil || binary(data) {
			continue // gone from the workspace, or binary: no lines
		}
		who, err := h.attribute(ctx, f, data, &api.Blame{})
		if err != nil {
			return nil, err
		}
		tb.addFile(f, data, who, keep, func(string) map[int]string { return prompts })
	}
	return tb.done(), nil
}
