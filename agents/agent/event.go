package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// MaxPayload bounds what is read of one hook event; it matches the
// server's body limit, since a Write's content travels on to it.
const MaxPayload = api.DefaultBodyLimit

// ErrBadEvent marks a hook event that cannot be read: not JSON, no event
// name, a tool event without a tool. Nothing was sent for it.
var ErrBadEvent = errors.New("bad hook event")

// ErrOtherSession marks a hook event of another session than the one the
// caller may send events for. Nothing was sent for it.
var ErrOtherSession = errors.New("hook event of another session")

// Call is what one event asks of the server.
type Call struct {
	Kind       string // CallStart, CallComplete, CallTurn, CallTurnEnd
	ToolCallID string
	Start      api.ToolCallRequest
	Complete   api.CompleteRequest
	Turn       api.TurnRequest
	// Ask, when set, asks for the session's feedback after the call, to
	// carry in the answer to the event (Agent.Feedback). Deliver fills
	// Heard with it (nil: nothing to hear, or the ask failed: HeardErr);
	// the answer once out, Confirm marks it delivered.
	Ask      *Ask
	Heard    *api.Delivery
	HeardErr error
	confirm  func(context.Context) error
}

// Confirm tells the server that the answer carrying Heard is out, so
// that its items are marked delivered; nothing when there was none.
func (c *Call) Confirm(ctx context.Context) error {
	if c.confirm == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	return c.confirm(ctx)
}

// confirmTimeout bounds a confirm: the agent waits for the hook's exit.
const confirmTimeout = 2 * time.Second

// The kinds of Call.
const (
	CallStart    = "start"
	CallComplete = "complete"
	CallTurn     = "turn"
	CallTurnEnd  = "turn-end"
)

// Server takes the calls of hook events: a session's server over HTTP
// (hook's), or the engine in process (the server's own http hook route).
type Server interface {
	StartToolCall(ctx context.Context, sessionID string, req api.ToolCallRequest) error
	CompleteToolCall(ctx context.Context, sessionID, toolCallID string, req api.CompleteRequest) error
	Turn(ctx context.Context, sessionID string, req api.TurnRequest) error
	EndTurn(ctx context.Context, sessionID string) error
	FeedbackServer
}

// Deliver sends the server call of one event.
func Deliver(ctx context.Context, cl Server, sessionID string, call *Call) error {
	var err error
	switch call.Kind {
	case CallStart:
		err = cl.StartToolCall(ctx, sessionID, call.Start)
	case CallComplete:
		err = cl.CompleteToolCall(ctx, sessionID, call.ToolCallID, call.Complete)
	case CallTurn:
		err = cl.Turn(ctx, sessionID, call.Turn)
	case CallTurnEnd:
		err = cl.EndTurn(ctx, sessionID)
	}
	if err == nil && call.Ask != nil {
		// The feedback's ask failing fails no event: what was not taken
		// waits for the next one.
		call.Heard, call.HeardErr = cl.TakeFeedback(ctx, sessionID, *call.Ask)
		if call.Heard != nil && len(call.Heard.IDs) == 0 {
			call.Heard = nil
		}
		if call.Heard != nil {
			ids := call.Heard.IDs
			call.confirm = func(ctx context.Context) error { return cl.ConfirmFeedback(ctx, sessionID, ids) }
		}
	}
	return err
}

// ReadEvent reads one hook event, bounded: an agent's payload is never
// larger than MaxPayload.
func ReadEvent(in io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(in, MaxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read hook event: %w", err)
	}
	if len(data) > MaxPayload {
		return nil, fmt.Errorf("hook event is larger than %d MiB", MaxPayload>>20)
	}
	return data, nil
}

// DecodeEvent reads one hook event (ReadEvent) into an agent's payload
// type, which must name its event (event).
func DecodeEvent[T any](in io.Reader, event func(*T) string) (*T, error) {
	data, err := ReadEvent(in)
	if err != nil {
		return nil, err
	}
	var p T
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("malformed hook event (want one JSON object): %v", err)
	}
	if event(&p) == "" {
		return nil, errors.New("malformed hook event: no hook_event_name")
	}
	return &p, nil
}

// DerivedCallID is an agent's own tool call id where the server takes
// it. Otherwise it is a hash, prefixed with the agent's name, of the
// refused id or, when there is none, of what both events of the call
// carry alike (parts, then the tool's input).
func DerivedCallID(agent, id string, input json.RawMessage, parts ...string) string {
	if prsm.ValidToolCallID(id) {
		return id
	}
	h := sha256.New()
	if id != "" {
		fmt.Fprintf(h, "tool_use_id\x00%s", id)
	} else {
		for _, part := range parts {
			fmt.Fprintf(h, "%s\x00", part)
		}
		h.Write(CanonicalJSON(input))
	}
	return agent + "-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// CanonicalJSON re-encodes a JSON value with sorted keys and no spacing,
// so that the same value hashes the same however it was written.
func CanonicalJSON(raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// Label keeps the printable runes of s, at most max bytes: what the server
// accepts as an agent id.
func Label(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// OneLine makes an error message one printable line of bounded length:
// Claude Code shows it in the transcript.
func OneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	const max = 500
	if len(s) > max {
		s = Label(s, max-3) + "..."
	}
	return s
}
