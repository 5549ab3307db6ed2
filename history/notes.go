package history

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/worktree"
)

// NotesRef is where prsm keeps its Agent Trace records, one note a
// commit. Share them with `git push origin refs/notes/agent-trace` and a
// fetch refspec +refs/notes/agent-trace:refs/notes/agent-trace.
const NotesRef = "refs/notes/agent-trace"

// git runs a git command in the workspace.
func (h *History) git(ctx context.Context, c *worktree.Cmd) ([]byte, error) {
	return h.Repo.Git().Run(ctx, c.Dir(h.Repo.Root))
}

// hasNotes reports whether the notes ref exists.
func (h *History) hasNotes(ctx context.Context) bool {
	_, err := h.git(ctx, worktree.NewCmd("rev-parse", "-q", "--verify").Rev(NotesRef+"^{commit}"))
	return err == nil
}

// notesOf reads the trace records of commit rev's note: none when it has
// no note. A note that holds something else than trace records (a
// foreign or broken one) gives an error that says so, with the records
// it could read.
func (h *History) notesOf(ctx context.Context, rev string) ([]*Trace, error) {
	out, err := h.noteText(ctx, rev)
	if out == nil || err != nil {
		return nil, err
	}
	return parseTraces(out)
}

// noteText is commit rev's note under NotesRef; nil when it has none.
func (h *History) noteText(ctx context.Context, rev string) ([]byte, error) {
	out, err := h.git(ctx, worktree.NewCmd("notes", "--ref="+NotesRef, "show").Rev(rev))
	if err != nil {
		var ge *worktree.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "no note found") {
			return nil, nil
		}
		return nil, err
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// parseTraces reads the JSON values of a note, one or more trace records
// (`git notes append` joins notes with a blank line).
func parseTraces(note []byte) ([]*Trace, error) {
	dec := json.NewDecoder(bytes.NewReader(note))
	var out []*Trace
	for {
		var t Trace
		err := dec.Decode(&t)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("not an Agent Trace record: %v", err)
		}
		if t.Version == "" || t.Files == nil {
			return out, errors.New("not an Agent Trace record: no version or files")
		}
		out = append(out, &t)
	}
}

// metaOf is prsm's metadata of a trace record; its zero value when it has
// none (another tool's record).
func metaOf(t *Trace) Meta {
	var m Meta
	if raw, ok := t.Metadata[MetaKey]; ok {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// noteOrigins explains, from the trace notes of the commits that hold
// them, the lines of the workspace file rel (data) that no record does
// (who[j] nil): by git blame of the workspace's content, each such line
// is line L of the file in some commit, and that commit's note may name
// the tool call that wrote L. nil where no note does. Nothing is run
// when the notes ref does not exist or every line is explained.
func (h *History) noteOrigins(ctx context.Context, rel string, data []byte, who []*prsm.Record, b *api.Blame) []*api.BlameOrigin {
	out := make([]*api.BlameOrigin, len(who))
	need := false
	for _, r := range who {
		need = need || r == nil
	}
	if !need || !h.hasNotes(ctx) {
		return out
	}
	raw, err := h.git(ctx, worktree.NewCmd("blame", "--porcelain", "--contents", "-").Paths(rel).Stdin(data))
	if err != nil {
		return out // a file HEAD does not have: no committed lines
	}
	traces := map[string][]*Trace{}
	for _, bl := range porcelainLines(raw) {
		j := bl.final - 1
		if j < 0 || j >= len(who) || who[j] != nil || strings.Trim(bl.commit, "0") == "" {
			continue
		}
		ts, ok := traces[bl.commit]
		if !ok {
			ts, err = h.notesOf(ctx, bl.commit)
			if err != nil {
				b.Warnings = append(b.Warnings, fmt.Sprintf("note of commit %.12s skipped: %v", bl.commit, err))
			}
			traces[bl.commit] = ts
		}
		if o := lineIn(ts, bl.path, bl.orig, bl.commit); o != nil {
			out[j] = o
		}
	}
	return out
}

// lineIn is the origin of line n of path by the trace records ts of
// commit rev, or nil.
func lineIn(ts []*Trace, path string, n int, rev string) *api.BlameOrigin {
	for _, t := range ts {
		meta := metaOf(t)
		for _, f := range t.Files {
			if f.Path != path {
				continue
			}
			for _, c := range f.Conversations {
				if c.Contributor != nil && c.Contributor.Type == "human" {
					continue
				}
				for _, r := range c.Ranges {
					if n >= r.StartLine && n <= r.EndLine {
						o, err := originOf(t, meta, c.URL, rev)
						if err != nil {
							// Another tool's record: its conversation.
							o = api.BlameOrigin{Source: api.OriginNote, Status: "committed", Commit: rev, ToolCallID: c.URL}
							if c.Contributor != nil {
								o.ModelID = c.Contributor.ModelID
							}
						}
						return &o
					}
				}
			}
		}
	}
	return nil
}

// blamed is one line of git blame --porcelain: the commit that holds it,
// its line there, its line in the blamed content, and its path there.
type blamed struct {
	commit      string
	orig, final int
	path        string
}

// porcelainLines reads git blame --porcelain.
func porcelainLines(out []byte) []blamed {
	var (
		res   []blamed
		paths = map[string]string{}
		cur   blamed
		inHdr bool
	)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), MaxBlameFile)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "\t"):
			if p, ok := paths[cur.commit]; ok {
				cur.path = p
			}
			res = append(res, cur)
			inHdr = false
		case !inHdr:
			f := strings.Fields(line)
			if len(f) >= 3 && len(f[0]) >= 40 {
				cur = blamed{commit: f[0]}
				cur.orig, _ = strconv.Atoi(f[1])
				cur.final, _ = strconv.Atoi(f[2])
				inHdr = true
			}
		case strings.HasPrefix(line, "filename "):
			paths[cur.commit] = strings.TrimPrefix(line, "filename ")
		}
	}
	return res
}

// writeNote adds t as the note of commit rev, on top of whatever the
// notes ref holds (someone else's notes, a fetch's merge): the ref is
// only ever extended. In process where the notes are plain
// (worktree.Objects.AddNote); else, and where rev has a note already,
// with git notes append.
func (h *History) writeNote(ctx context.Context, rev string, t *Trace) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	objs, err := h.Repo.Objects()
	if err != nil {
		return err
	}
	err = objs.AddNote(NotesRef, rev, b, time.Now())
	if !errors.Is(err, worktree.ErrNoteNotPlain) {
		return err
	}
	_, err = h.git(ctx, worktree.NewCmd("notes", "--ref="+NotesRef, "append", "-F", "-").Rev(rev).Stdin(b))
	return err
}
