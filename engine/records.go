package engine

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/tracker"
)

// InlineLimit is the largest text content carried inline in records.
const InlineLimit = 1 << 20

// answer fills the inline contents of records for a response.
func (rc *recorder) answer(ctx context.Context, recs []*prsm.Record) (*api.Records, error) {
	if err := rc.FillContent(ctx, recs); err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []*prsm.Record{}
	}
	return &api.Records{Records: recs}, nil
}

// FillContent is Engine.FillContent's work.
func (rc *recorder) FillContent(ctx context.Context, recs []*prsm.Record) error {
	commands := map[string]string{} // by session and tool call
	for _, r := range recs {
		if err := rc.fillSummary(ctx, r, commands); err != nil {
			return err
		}
		if r.Binary {
			continue
		}
		for _, f := range []struct {
			hash string
			dst  **string
			size int64
		}{{r.OldHash, &r.OldContent, r.SizeBefore}, {r.NewHash, &r.NewContent, r.SizeAfter}, {r.PreToolHash, &r.PreToolContent, -1}} {
			if f.hash == "" || *f.dst != nil {
				continue
			}
			if f.size < 0 {
				// The content before the tool ran: mostly the old side,
				// read already; else its size is asked first, so that a
				// large one is not read only to be left out.
				if f.hash == r.OldHash {
					*f.dst = r.OldContent
					continue
				}
				n, err := store.BlobSize(ctx, rc.DB.Q(), f.hash)
				if err != nil {
					return err
				}
				f.size = n
			}
			if f.size > InlineLimit {
				continue
			}
			b, err := store.GetBlob(ctx, rc.DB.Q(), f.hash)
			if err != nil {
				return err
			}
			*f.dst = inlined(b)
		}
		legacyHunks(r)
		if r.Summary == "" {
			r.Summary = firstChangedLine(r)
		}
	}
	return nil
}

// maxSummary is the most runes of a record's summary line.
const maxSummary = 120

// fillSummary gives r the shell command of its tool call as its summary,
// when the call ran one (commands caches the calls read).
func (rc *recorder) fillSummary(ctx context.Context, r *prsm.Record, commands map[string]string) error {
	key := r.SessionID + "\x00" + r.ToolCallID
	cmd, ok := commands[key]
	if !ok {
		tc, err := store.GetToolCall(ctx, rc.DB.Q(), r.SessionID, r.ToolCallID)
		if err != nil && !errors.Is(err, prsm.ErrNotFound) {
			return err
		}
		if tc != nil {
			cmd = commandOf(tc.Args)
		}
		commands[key] = cmd
	}
	r.Summary = cmd
	return nil
}

// commandOf is the first line of the shell command in a tool call's
// arguments, "" when it ran none.
func commandOf(args json.RawMessage) string {
	var m struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	return oneLine(m.Command)
}

// changedLine is firstChangedLine of a record whose contents are not
// filled in (an event's copy): its sides read from the blob store, text
// within the inline limit only; "" when there is none or a read fails.
func (rc *recorder) changedLine(ctx context.Context, r *prsm.Record) string {
	if r.Binary {
		return ""
	}
	c := *r
	for _, f := range []struct {
		hash string
		dst  **string
		size int64
	}{{r.OldHash, &c.OldContent, r.SizeBefore}, {r.NewHash, &c.NewContent, r.SizeAfter}} {
		if f.hash == "" || f.size > InlineLimit || *f.dst != nil {
			continue
		}
		b, err := store.GetBlob(ctx, rc.DB.Q(), f.hash)
		if err != nil {
			return ""
		}
		*f.dst = inlined(b)
	}
	return firstChangedLine(&c)
}

// firstChangedLine is the first line a text record adds (or, when it adds
// none, removes, marked so), as a summary. It reads the lines off the
// content, never cutting it into a slice of lines.
func firstChangedLine(r *prsm.Record) string {
	pick := func(content *string, ranges []prsm.Range) string {
		if content == nil || len(ranges) == 0 {
			return ""
		}
		rest := *content
		for n := 1; n <= ranges[0].EndLine; n++ {
			line, after, more := strings.Cut(rest, "\n")
			if n >= ranges[0].StartLine {
				if l := oneLine(line); l != "" {
					return l
				}
			}
			if !more {
				break
			}
			rest = after
		}
		return ""
	}
	if l := pick(r.NewContent, r.AddedRanges); l != "" {
		return l
	}
	if l := pick(r.OldContent, r.RemovedRanges); l != "" {
		return "removed: " + l
	}
	return ""
}

// oneLine is the first non-blank line of s, trimmed and cut to maxSummary
// runes. It copies nothing but the line it returns (a line may be
// megabytes long).
func oneLine(s string) string {
	for s != "" {
		var l string
		l, s, _ = strings.Cut(s, "\n")
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		n := 0
		for i := range l {
			if n == maxSummary-1 {
				if utf8.RuneCountInString(l[i:]) > 1 {
					l = l[:i] + "…"
				}
				break
			}
			n++
		}
		return strings.Clone(l) // not the content it is part of
	}
	return ""
}

// legacyHunks works out the hunks of a record stored before prsm kept
// them, from its inline contents (FillContent's); a side too large to
// inline, or a symlink, leaves it without hunks.
func legacyHunks(r *prsm.Record) {
	if r.Hunks != nil {
		return
	}
	r.Hunks = []prsm.Hunk{}
	var old, new []byte
	for _, side := range []struct {
		hash    string
		content *string
		mode    uint32
		dst     *[]byte
	}{{r.OldHash, r.OldContent, r.ModeBefore, &old}, {r.NewHash, r.NewContent, r.ModeAfter, &new}} {
		if side.hash == "" {
			continue
		}
		if side.content == nil || side.mode&0o170000 == 0o120000 {
			return
		}
		*side.dst = []byte(*side.content)
	}
	added, removed, hunks, note := sync.RangesAndHunks(old, new)
	for i := range hunks {
		hunks[i].Status = prsm.HunkStatus(r.Status, "")
	}
	r.Hunks = hunks
	if note != "" {
		// One hunk of the whole file: its ranges say so too.
		r.AddedRanges, r.RemovedRanges = added, removed
		r.Note = joinNotes(r.Note, note)
	}
}

// inlined is content as a record carries it inline: nil past InlineLimit.
func inlined(b []byte) *string {
	if len(b) > InlineLimit {
		return nil
	}
	s := string(b)
	return &s
}

// versions returns a record's before and after versions: the after side
// less the hunks rejected one by one, which never reached the files.
func (rc *recorder) versions(ctx context.Context, r *prsm.Record) (before, after sync.Version, err error) {
	return versionsFrom(r, rc.capture.blobs(ctx))
}

// versionsFrom is versions with the contents read by blobs.
func versionsFrom(r *prsm.Record, blobs tracker.BlobReader) (before, after sync.Version, err error) {
	get := func(hash string, mode uint32) (sync.Version, error) {
		if hash == "" {
			return sync.Absent, nil
		}
		b, err := blobs(hash)
		if err != nil {
			return sync.Version{}, err
		}
		return sync.Version{Present: true, Mode: mode, Content: b}, nil
	}
	if before, err = get(r.OldHash, r.ModeBefore); err != nil {
		return
	}
	if after, err = get(r.NewHash, r.ModeAfter); err != nil {
		return
	}
	// A record with hunks rejected changed the files by the rest only.
	after, err = withHunks(r, before, after, func(h prsm.Hunk) bool { return h.Status != prsm.StatusRejected })
	return
}

// Content is Engine.Content's work.
func (rc *recorder) Content(ctx context.Context, sessionID, id, side string) ([]byte, *prsm.Record, error) {
	s, err := rc.sessions.Session(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	r, err := store.GetRecord(ctx, rc.DB.Q(), s.ID, id)
	if errors.Is(err, prsm.ErrNotFound) {
		recs, lerr := store.ListRecords(ctx, rc.DB.Q(), store.RecordFilter{SessionID: s.ID, ToolCallID: id})
		if lerr != nil {
			return nil, nil, lerr
		}
		switch len(recs) {
		case 0:
			return nil, nil, recordNotFound(id)
		case 1:
			r, err = recs[0], nil
		default:
			return nil, nil, prsm.Errorf(prsm.ErrInvalid, "several_records", "name one record: "+recs[0].ID+", ...",
				"tool call %s changed %d files", id, len(recs))
		}
	}
	if err != nil {
		return nil, nil, err
	}
	var hash string
	switch side {
	case "before", "":
		hash = r.OldHash
	case "after":
		hash = r.NewHash
	default:
		return nil, nil, prsm.Errorf(prsm.ErrInvalid, "bad_side", "use side=before or side=after", "unknown side %q", side)
	}
	if hash == "" {
		return nil, r, prsm.Errorf(prsm.ErrNotFound, "no_content", "", "the file does not exist on the %s side of %s", side, r.ID)
	}
	b, err := store.GetBlob(ctx, rc.DB.Q(), hash)
	if err != nil {
		return nil, r, err
	}
	if in, ok := bigfile.Parse(b); ok {
		if side == "" {
			side = "before"
		}
		return nil, r, prsm.Errorf(prsm.ErrNotFound, "too_large", "read the file in the session's worktree",
			"the %s side of %s is %s, too large: prsm keeps no copy of its content (%s)",
			side, r.ID, prsm.Size(in.Size), r.Note)
	}
	return b, r, nil
}

func recordNotFound(id string) error {
	return prsm.Errorf(prsm.ErrNotFound, "record_not_found", "list changes with `prsm changes`", "no change %q", id)
}

// Records is Engine.Records's work.
func (rc *recorder) Records(ctx context.Context, sessionID, status, file string) ([]*prsm.Record, error) {
	f, err := rc.recordFilter(ctx, sessionID, status, file)
	if err != nil {
		return nil, err
	}
	recs, err := store.ListRecords(ctx, rc.DB.Q(), f)
	if err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []*prsm.Record{}
	}
	return recs, nil
}

// recordFilter is what Records lists: checked, the session resolved.
func (rc *recorder) recordFilter(ctx context.Context, sessionID, status, file string) (store.RecordFilter, error) {
	f := store.RecordFilter{Status: status}
	if sessionID != "" {
		s, err := rc.sessions.Session(ctx, sessionID)
		if err != nil {
			return f, err
		}
		f.SessionID = s.ID
	}
	switch status {
	case "", prsm.StatusPending, prsm.StatusAccepted, prsm.StatusRejected, prsm.StatusPartial, prsm.StatusRewound:
	default:
		return f, prsm.Errorf(prsm.ErrInvalid, "invalid_status", "use pending, accepted, rejected, partial or rewound", "unknown status %q", status)
	}
	if file != "" {
		rel, err := rc.relPath(file)
		if err != nil {
			return f, err
		}
		f.RelPath = rel
	}
	return f, nil
}

// EachRecord is Engine.EachRecord's work.
func (rc *recorder) EachRecord(ctx context.Context, sessionID, status, file string, n int, fn func([]*prsm.Record) error) error {
	f, err := rc.recordFilter(ctx, sessionID, status, file)
	if err != nil {
		return err
	}
	f.Limit = n
	for {
		page, err := store.ListRecords(ctx, rc.DB.Q(), f)
		if err != nil {
			return err
		}
		if err := rc.FillContent(ctx, page); err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
			f.AfterSeq = page[len(page)-1].Seq
		}
		if len(page) < n {
			return nil
		}
	}
}

// relPath turns a user-given file (workspace-relative, or absolute inside
// the workspace) into a relative path.
func (rc *recorder) relPath(file string) (string, error) {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(rc.Repo.Root, p)
	}
	rel, err := safepath.Rel(rc.Repo.Root, p)
	if err != nil {
		return "", prsm.Errorf(prsm.ErrInvalid, "invalid_path", "name a file inside the workspace", "%s: %v", file, err)
	}
	return rel, nil
}

// RecordsOf is Engine.RecordsOf's work.
func (rc *recorder) RecordsOf(ctx context.Context, sessionID, id string) ([]*prsm.Record, error) {
	s, err := rc.sessions.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return rc.recordsOf(ctx, s, id)
}

func (rc *recorder) recordsOf(ctx context.Context, s *prsm.Session, id string) ([]*prsm.Record, error) {
	if strings.TrimSpace(id) == "" {
		return nil, recordNotFound(id)
	}
	if r, err := store.GetRecord(ctx, rc.DB.Q(), s.ID, id); err == nil {
		return []*prsm.Record{r}, nil
	} else if !errors.Is(err, prsm.ErrNotFound) {
		return nil, err
	}
	recs, err := store.ListRecords(ctx, rc.DB.Q(), store.RecordFilter{SessionID: s.ID, ToolCallID: id})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, recordNotFound(id)
	}
	return recs, nil
}

// sortRecords orders records by sequence, newest first when desc.
func sortRecords(recs []*prsm.Record, desc bool) {
	sort.Slice(recs, func(i, j int) bool {
		if desc {
			return recs[i].Seq > recs[j].Seq
		}
		return recs[i].Seq < recs[j].Seq
	})
}
