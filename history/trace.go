package history

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/sync/linediff"
)

// TraceVersion is the Agent Trace version prsm writes
// (github.com/cursor/agent-trace).
const TraceVersion = "0.1.0"

// MetaKey is prsm's key in a trace record's metadata.
const MetaKey = "dev.prsm"

// Trace is one Agent Trace record (the spec's "Trace Record").
type Trace struct {
	Version   string         `json:"version"`
	ID        string         `json:"id"`
	Timestamp string         `json:"timestamp"`
	VCS       *TraceVCS      `json:"vcs,omitempty"`
	Tool      *TraceTool     `json:"tool,omitempty"`
	Files     []TraceFile    `json:"files"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TraceVCS is a trace record's revision.
type TraceVCS struct {
	Type     string `json:"type"`
	Revision string `json:"revision"`
}

// TraceTool is the tool that wrote a trace record.
type TraceTool struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// TraceFile is a file's conversations.
type TraceFile struct {
	Path          string              `json:"path"`
	Conversations []TraceConversation `json:"conversations"`
}

// TraceConversation is, in prsm's records, one tool call: its lines of
// the file, and links to its session and the call. Its URL is
// CallURL's, the key of the call's details in the metadata (Meta).
type TraceConversation struct {
	URL         string            `json:"url,omitempty"`
	Contributor *TraceContributor `json:"contributor,omitempty"`
	Ranges      []TraceRange      `json:"ranges"`
	Related     []TraceRelated    `json:"related,omitempty"`
}

// TraceContributor is who wrote a conversation's lines: ai, human or
// mixed.
type TraceContributor struct {
	Type    string `json:"type"`
	ModelID string `json:"model_id,omitempty"`
}

// TraceRange is a block of lines, 1-based and inclusive, with the hash
// of its content.
type TraceRange struct {
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	ContentHash string `json:"content_hash,omitempty"`
}

// TraceRelated links a conversation to a session or a tool call.
type TraceRelated struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Meta is prsm's part of a trace record's metadata (MetaKey): each tool
// call's details, by its conversation's URL.
type Meta struct {
	Calls map[string]CallMeta `json:"calls"`
}

// CallMeta is a tool call's details in a trace record.
type CallMeta struct {
	SessionID  string    `json:"session_id"`
	AgentID    string    `json:"agent_id"`
	ToolName   string    `json:"tool_name"`
	ToolCallID string    `json:"tool_call_id"`
	Turn       int       `json:"turn"`
	Prompt     string    `json:"prompt,omitempty"`
	Time       time.Time `json:"time"`
	Records    []string  `json:"records"`
	Status     string    `json:"status"`
}

// SessionURL and CallURL name a session and a tool call in trace records.
func SessionURL(sessionID string) string { return "prsm://session/" + url.PathEscape(sessionID) }

// CallURL names a tool call in trace records.
func CallURL(sessionID, call string) string {
	return SessionURL(sessionID) + "/call/" + url.PathEscape(call)
}

// newTraceID is a random (version 4) UUID.
func newTraceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// contentHash is a range's content hash: sha256 of its lines.
func contentHash(lines [][]byte) string {
	s := sha256.New()
	for _, l := range lines {
		s.Write(l)
	}
	return "sha256:" + hex.EncodeToString(s.Sum(nil))[:16]
}

// traceBuilder gathers the lines of one trace record.
type traceBuilder struct {
	t     *Trace
	meta  Meta
	files map[string]int // path -> index in t.Files
}

func newTraceBuilder(revision, version string, now time.Time) *traceBuilder {
	t := &Trace{Version: TraceVersion, ID: newTraceID(), Timestamp: now.UTC().Format(time.RFC3339),
		Tool: &TraceTool{Name: "prsm", Version: version}, Files: []TraceFile{}}
	if revision != "" {
		t.VCS = &TraceVCS{Type: "git", Revision: revision}
	}
	return &traceBuilder{t: t, meta: Meta{Calls: map[string]CallMeta{}}, files: map[string]int{}}
}

// addFile adds the lines of data (the file rel as the record's revision
// has it) that who names a record of, one conversation a tool call;
// keep says which records count. prompts are the turns' prompts by
// session.
func (tb *traceBuilder) addFile(rel string, data []byte, who []*prsm.Record, keep func(*prsm.Record) bool, prompts func(sessionID string) map[int]string) {
	lines := linediff.Split(data)
	convs := map[string]int{}
	var file TraceFile
	for j := 0; j < len(lines); {
		r := at(who, j)
		if r == nil || !keep(r) {
			j++
			continue
		}
		call := prsm.CallOf(r.ToolCallID)
		k := j + 1
		for k < len(lines) && at(who, k) != nil && keep(at(who, k)) && prsm.CallOf(at(who, k).ToolCallID) == call && at(who, k).SessionID == r.SessionID {
			k++
		}
		u := CallURL(r.SessionID, call)
		ci, ok := convs[u]
		if !ok {
			ci = len(file.Conversations)
			convs[u] = ci
			file.Conversations = append(file.Conversations, TraceConversation{URL: u,
				Contributor: &TraceContributor{Type: "ai"},
				Related:     []TraceRelated{{Type: "session", URL: SessionURL(r.SessionID)}, {Type: "tool_call", URL: u}}})
		}
		c := &file.Conversations[ci]
		c.Ranges = append(c.Ranges, TraceRange{StartLine: j + 1, EndLine: k, ContentHash: contentHash(lines[j:k])})
		m := tb.meta.Calls[u]
		if m.ToolCallID == "" {
			m = CallMeta{SessionID: r.SessionID, AgentID: r.AgentID, ToolName: r.ToolName, ToolCallID: call,
				Turn: r.MessageIndex, Prompt: prompts(r.SessionID)[r.MessageIndex], Time: r.Timestamp.UTC(), Status: r.Status}
		}
		if !contains(m.Records, r.ID) {
			m.Records = append(m.Records, r.ID)
		}
		tb.meta.Calls[u] = m
		j = k
	}
	if len(file.Conversations) == 0 {
		return
	}
	file.Path = rel
	tb.files[rel] = len(tb.t.Files)
	tb.t.Files = append(tb.t.Files, file)
}

// addMine adds the lines of rel that are the user's own (prsm commit
// --include-mine): a conversation of a human contributor.
func (tb *traceBuilder) addMine(rel string, data []byte, who []*prsm.Record, keep func(*prsm.Record) bool) {
	lines := linediff.Split(data)
	var ranges []TraceRange
	for j := 0; j < len(lines); {
		if r := at(who, j); r != nil && keep(r) {
			j++
			continue
		}
		k := j + 1
		for k < len(lines) && (at(who, k) == nil || !keep(at(who, k))) {
			k++
		}
		ranges = append(ranges, TraceRange{StartLine: j + 1, EndLine: k, ContentHash: contentHash(lines[j:k])})
		j = k
	}
	if len(ranges) == 0 {
		return
	}
	c := TraceConversation{Contributor: &TraceContributor{Type: "human"}, Ranges: ranges}
	if i, ok := tb.files[rel]; ok {
		tb.t.Files[i].Conversations = append(tb.t.Files[i].Conversations, c)
		return
	}
	tb.files[rel] = len(tb.t.Files)
	tb.t.Files = append(tb.t.Files, TraceFile{Path: rel, Conversations: []TraceConversation{c}})
}

// done is the record.
func (tb *traceBuilder) done() *Trace {
	tb.t.Metadata = map[string]any{MetaKey: tb.meta}
	return tb.t
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// originOf is the blame origin of the conversation u of a trace record
// of commit rev.
func originOf(t *Trace, meta Meta, u, rev string) (api.BlameOrigin, error) {
	m, ok := meta.Calls[u]
	if !ok {
		return api.BlameOrigin{}, fmt.Errorf("trace %s: no details of %s", t.ID, u)
	}
	return api.BlameOrigin{Source: api.OriginNote, SessionID: m.SessionID, AgentID: m.AgentID, ToolName: m.ToolName,
		ToolCallID: m.ToolCallID, Turn: m.Turn, Prompt: m.Prompt, Time: m.Time, Status: "committed",
		Commit: rev, RecordID: strings.Join(m.Records, ",")}, nil
}
