package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync/linediff"
)

// MaxBlameFile bounds the workspace file blame reads.
const MaxBlameFile = 32 << 20

// Blame says who wrote each line of the workspace file path (relative to
// the workspace, or absolute inside it), lines start to end (1-based,
// inclusive; 0 for the file's first and last). It is exact:
//   - each session's records of the file, oldest first, carry their
//     lines forward: a record's changed lines are its own, its unchanged
//     ones keep the origin they had, and what changed in the worktree
//     between two records (a reject, a rewind, the user's edit) holds no
//     record's lines;
//   - the workspace's lines are matched, by a diff, to each session's
//     last version of the file; a line takes the newest record that
//     explains it, and a line none does is the user's, unless the trace
//     note of the commit that holds it names an agent (notes.go).
//
// Rejected and rewound records are out of the worktree and explain no
// line.
func (h *History) Blame(ctx context.Context, path string, start, end int) (*api.Blame, error) {
	rel, data, err := h.readFile(path)
	if err != nil {
		return nil, err
	}
	n := linediff.Lines(data)
	if start < 0 || end < 0 || (end > 0 && start > end) || start > n || end > n {
		return nil, prsm.Errorf(prsm.ErrInvalid, "bad_param", "give -L A,B with 1 <= A <= B <= the file's lines",
			"lines %d-%d are not in %s (%d lines)", start, end, rel, n)
	}
	if start == 0 {
		start = 1
	}
	if end == 0 {
		end = n
	}
	b := &api.Blame{Path: rel, Lines: []api.BlameLine{}, Origins: []api.BlameOrigin{}}
	who, err := h.attribute(ctx, rel, data, b)
	if err != nil {
		return nil, err
	}
	notes := h.noteOrigins(ctx, rel, data, who, b)
	origins := newOrigins(ctx, h.DB.Q(), b)
	split := linediff.Split(data)
	for j := start - 1; j < end; j++ {
		o := -1
		switch {
		case who[j] != nil:
			o = origins.of(who[j])
		case notes[j] != nil:
			o = origins.add(notes[j].Commit+"/"+notes[j].SessionID+"/"+notes[j].ToolCallID, *notes[j])
		}
		b.Lines = append(b.Lines, api.BlameLine{Line: j + 1, Text: lineText(split[j]), Origin: o})
	}
	return b, nil
}

// attribute is the record that wrote each line of data, the content of
// the file rel (nil: none did): Blame's work, for any content of the
// file (prsm commit's trace records attribute the committed content).
// Warnings go to b.
func (h *History) attribute(ctx context.Context, rel string, data []byte, b *api.Blame) ([]*prsm.Record, error) {
	who := make([]*prsm.Record, linediff.Lines(data))
	sessions, err := store.ListSessions(ctx, h.DB.Q(), "")
	if err != nil {
		return nil, err
	}
	for _, s := range sessions {
		text, lines, err := h.sessionFile(ctx, s.ID, rel, b)
		if err != nil {
			return nil, err
		}
		if lines == nil {
			continue
		}
		// The lines that are the session's, unchanged, take the
		// session's origins, unless a newer record explains them.
		each(text, data, func(i, j int) {
			if r := at(lines, i); r != nil && (who[j] == nil || r.Seq > who[j].Seq) {
				who[j] = r
			}
		})
	}
	return who, nil
}

// readFile reads the workspace file path for Blame: a regular text file
// inside the workspace, reached through no symlink.
func (h *History) readFile(path string) (rel string, data []byte, err error) {
	root := h.Repo.Root
	rel, err = safepath.Rel(root, path)
	if err != nil {
		return "", nil, prsm.Errorf(prsm.ErrInvalid, "invalid_path", "name a file inside the workspace", "%v", err)
	}
	abs, err := safepath.Join(root, rel)
	if err != nil {
		return "", nil, prsm.Errorf(prsm.ErrInvalid, "invalid_path", "name a file inside the workspace", "%v", err)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, prsm.Errorf(prsm.ErrNotFound, "not_found", "", "%s: no such file in the workspace", rel)
	case err != nil:
		return "", nil, err
	case !fi.Mode().IsRegular():
		return "", nil, prsm.Errorf(prsm.ErrConflict, "not_a_file", "", "%s is not a regular file", rel)
	case fi.Size() > MaxBlameFile:
		return "", nil, prsm.Errorf(prsm.ErrConflict, "binary_file", "", "%s is %d bytes, over blame's limit of %d", rel, fi.Size(), MaxBlameFile)
	}
	if data, err = os.ReadFile(abs); err != nil {
		return "", nil, err
	}
	if binary(data) {
		return "", nil, prsm.Errorf(prsm.ErrConflict, "binary_file", "", "%s is a binary file: it has no lines to blame", rel)
	}
	return rel, data, nil
}

// binary reports whether data is a binary file's, as git tells: a NUL
// in its first 8000 bytes. It has no lines to blame or trace.
func binary(data []byte) bool { return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 }

// sessionFile is the last version of the file rel in session sessionID's
// records, and the record that wrote each of its lines (nil: none did).
// lines is nil when the session has no text record of the file.
//
// A record whose before is the record before's after, and whose hunks
// are all in its after (none rejected), moves the lines by its stored
// hunks, reading no content; the others (the first, and those after a
// reject, a rewind or an edit of the worktree between two records) are
// diffed from their contents. The last version's content is read once,
// at the end.
func (h *History) sessionFile(ctx context.Context, sessionID, rel string, b *api.Blame) (text []byte, lines []*prsm.Record, err error) {
	recs, err := store.ListRecords(ctx, h.DB.Q(), store.RecordFilter{SessionID: sessionID, RelPath: rel})
	if err != nil {
		return nil, nil, err
	}
	var last *prsm.Record // the record whose after lines stands for; nil: none
	after := func(r *prsm.Record) ([]byte, error) {
		_, a, err := h.sides(ctx, r)
		return a, err
	}
	for _, r := range recs {
		if r.Status == prsm.StatusRejected || r.Status == prsm.StatusRewound {
			continue // out of the worktree: the next record's before says what is there
		}
		if r.Binary {
			last, lines = nil, nil
			continue
		}
		if last != nil && r.OldHash == last.NewHash && !hasRejected(last) && !hasRejected(r) &&
			(r.Hunks != nil || r.OldHash == r.NewHash) {
			lines = moveLines(lines, r.Hunks, r)
			last = r
			continue
		}
		before, a, err := h.sides(ctx, r)
		var prev []byte // what the lines stand for now
		if err == nil && last != nil {
			prev, err = after(last)
		}
		switch {
		case errors.Is(err, prsm.ErrNotFound):
			// A side too large to keep: no lines known.
			b.Warnings = append(b.Warnings, fmt.Sprintf("change %s of %s: its content is not kept", r.ID, rel))
			last, lines = nil, nil
			continue
		case err != nil:
			return nil, nil, err
		}
		if last == nil || !bytes.Equal(prev, before) {
			lines = follow(prev, before, lines, nil)
		}
		lines = follow(before, a, lines, r)
		last = r
	}
	if last == nil {
		return nil, nil, nil
	}
	if text, err = after(last); err != nil {
		return nil, nil, err
	}
	if len(lines) != linediff.Lines(text) {
		return nil, nil, fmt.Errorf("blame of %s: the hunks of session %s's records do not add up to its last version", rel, sessionID)
	}
	return text, lines, nil
}

// hasRejected reports whether some hunk of r is rejected: its after
// content still holds it.
func hasRejected(r *prsm.Record) bool {
	for _, h := range r.Hunks {
		if h.Status == prsm.StatusRejected {
			return true
		}
	}
	return false
}

// moveLines is who after the change whose hunks are hunks (stored, as
// -U0 headers have them): the changed lines are r's.
func moveLines(who []*prsm.Record, hunks []prsm.Hunk, r *prsm.Record) []*prsm.Record {
	out := make([]*prsm.Record, 0, len(who)+8)
	i := 0
	for _, h := range hunks {
		start := h.OldStart - 1 // 0-based; a side with no lines names the line before
		if h.OldLines == 0 {
			start = h.OldStart
		}
		for i < start && i < len(who) {
			out = append(out, who[i])
			i++
		}
		for k := 0; k < h.NewLines; k++ {
			out = append(out, r)
		}
		i += h.OldLines
	}
	if i < len(who) {
		out = append(out, who[i:]...)
	}
	return out
}

// follow gives each line of new the origin of the line of old it is,
// unchanged; changed lines get changed.
func follow(old, new []byte, oldWho []*prsm.Record, changed *prsm.Record) []*prsm.Record {
	who := make([]*prsm.Record, linediff.Lines(new))
	for j := range who {
		who[j] = changed
	}
	each(old, new, func(i, j int) { who[j] = at(oldWho, i) })
	return who
}

// each calls f(i, j) for every line i of a that is line j of b,
// unchanged, by their diff.
func each(a, b []byte, f func(i, j int)) {
	_, _, hunks, _ := linediff.DiffBounded(a, b)
	na, nb := linediff.Lines(a), linediff.Lines(b)
	i, j := 0, 0
	for _, h := range hunks {
		for j < h.NewStart && i < na {
			f(i, j)
			i, j = i+1, j+1
		}
		i, j = h.OldStart+h.OldCount, h.NewStart+h.NewCount
	}
	for j < nb && i < na {
		f(i, j)
		i, j = i+1, j+1
	}
}

func at(who []*prsm.Record, i int) *prsm.Record {
	if i < len(who) {
		return who[i]
	}
	return nil
}

// lineText is a line without its line break.
func lineText(l []byte) string {
	return strings.TrimSuffix(strings.TrimSuffix(string(l), "\n"), "\r")
}

// origins numbers the origins of a Blame: one per record, with its
// turn's prompt.
type origins struct {
	ctx     context.Context
	q       store.Querier
	b       *api.Blame
	index   map[string]int
	prompts map[string]map[int]string
}

func newOrigins(ctx context.Context, q store.Querier, b *api.Blame) *origins {
	return &origins{ctx: ctx, q: q, b: b, index: map[string]int{}, prompts: map[string]map[int]string{}}
}

// of is the index of record r's origin.
func (o *origins) of(r *prsm.Record) int {
	key := r.SessionID + "/" + r.ID
	if i, ok := o.index[key]; ok {
		return i
	}
	p, ok := o.prompts[r.SessionID]
	if !ok {
		p, _ = store.TurnPrompts(o.ctx, o.q, r.SessionID) // no prompt is no error
		o.prompts[r.SessionID] = p
	}
	status := r.Status
	if status == prsm.StatusPartial {
		status = prsm.StatusAccepted // its lines left are the accepted hunks'
	}
	return o.add(key, api.BlameOrigin{Source: api.OriginRecord, SessionID: r.SessionID, AgentID: r.AgentID, RecordID: r.ID,
		ToolName: r.ToolName, ToolCallID: prsm.CallOf(r.ToolCallID), Turn: r.MessageIndex, Prompt: p[r.MessageIndex],
		Time: r.Timestamp, Status: status, Commit: r.Commit})
}

// add is the index of the origin named key, og when it is new.
func (o *origins) add(key string, og api.BlameOrigin) int {
	if i, ok := o.index[key]; ok {
		return i
	}
	o.b.Origins = append(o.b.Origins, og)
	o.index[key] = len(o.b.Origins) - 1
	return o.index[key]
}
