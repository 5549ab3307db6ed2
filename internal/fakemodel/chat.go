package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// ChatToolCall is one tool call a scripted Chat Completions answer makes.
type ChatToolCall struct {
	ID   string // the model's tool call id, which the agent hands back
	Name string // the tool, as the agent names it ("write", "bash")
	// Arguments are the tool's arguments, a JSON object. {{cwd}} in them
	// becomes the working directory the agent's system message names
	// ("Current working directory: DIR", as Copilot CLI writes it), for
	// tools that take absolute paths only.
	Arguments string
}

// CwdVar is the placeholder ChatToolCall.Arguments may hold for the
// agent's working directory.
const CwdVar = "{{cwd}}"

// cwdLine finds the working directory an agent's system message names.
var cwdLine = regexp.MustCompile(`Current working directory: ([^\n]+)`)

// ChatStep is one scripted answer of the main loop: tool calls, or (with
// none) a final text.
type ChatStep struct {
	ToolCalls []ChatToolCall
	Text      string
}

// ChatServer is a fake OpenAI Chat Completions endpoint
// (POST /v1/chat/completions), streaming or not, that plays a script.
//
// Which step a request gets is read from the conversation it carries, not
// from a counter: the n-th request of the main loop holds n-1 assistant
// messages, so a request sent again gets the same answer. A request that
// offers no tools is a side request (opencode's title, say): it gets a
// short plain answer and uses up no step. Past the script's end, every
// answer is the last step's.
type ChatServer struct {
	// URL is the base URL agents take, ending in /v1.
	URL string

	srv   *http.Server
	ln    net.Listener
	steps []ChatStep

	mu       sync.Mutex
	requests []ChatRequest
}

// ChatRequest is what the server saw of one request.
type ChatRequest struct {
	Model    string
	Stream   bool
	Tools    []string // the names of the tools offered
	Messages []ChatMessage
	Step     int // the script step it was answered with; -1 for a side request
}

// ChatMessage is one message of a request, as far as tests look at it.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

// ChatStart starts a server on 127.0.0.1 that plays steps; Close stops it.
func ChatStart(steps []ChatStep) (*ChatServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &ChatServer{URL: "http://" + ln.Addr().String() + "/v1", ln: ln, steps: steps}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.completions)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"fake model: no %s %s","type":"not_found"}}`, r.Method, r.URL.Path)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *ChatServer) Close() error { return s.srv.Close() }

// Requests returns what the server saw so far, in order.
func (s *ChatServer) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.requests...)
}

func (s *ChatServer) completions(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Model    string        `json:"model"`
		Stream   bool          `json:"stream"`
		Messages []ChatMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error())
		return
	}
	seen := ChatRequest{Model: req.Model, Stream: req.Stream, Messages: req.Messages, Step: -1}
	for _, t := range req.Tools {
		seen.Tools = append(seen.Tools, t.Function.Name)
	}
	step := ChatStep{Text: "prsm"} // a side request's answer: a title, say
	cwd := ""
	for _, m := range req.Messages {
		var text string
		if m.Role == "system" && json.Unmarshal(m.Content, &text) == nil {
			if sub := cwdLine.FindStringSubmatch(text); sub != nil {
				cwd = sub[1]
				break
			}
		}
	}
	if len(req.Tools) > 0 && len(s.steps) > 0 {
		n := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		seen.Step = min(n, len(s.steps)-1)
		step = s.steps[seen.Step]
		step.ToolCalls = withCwd(step.ToolCalls, cwd)
	}
	s.mu.Lock()
	s.requests = append(s.requests, seen)
	s.mu.Unlock()
	model := req.Model
	if model == "" {
		model = "fake"
	}
	id := fmt.Sprintf("chatcmpl-fake-%d", time.Now().UnixNano())
	finish := "stop"
	if len(step.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": step.Text}
		if len(step.ToolCalls) > 0 {
			msg["tool_calls"] = chatToolCalls(step.ToolCalls, false)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(choices []any, extra map[string]any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model, "choices": choices}
		for k, v := range extra {
			c[k] = v
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	chunk(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	if step.Text != "" {
		chunk(delta(map[string]any{"content": step.Text}, nil), nil)
	}
	if len(step.ToolCalls) > 0 {
		chunk(delta(map[string]any{"tool_calls": chatToolCalls(step.ToolCalls, true)}, nil), nil)
	}
	chunk(delta(map[string]any{}, finish), nil)
	chunk([]any{}, map[string]any{"usage": usage})
	io.WriteString(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// withCwd is calls with CwdVar in their arguments replaced by cwd (as a
// JSON string's content); calls without it come back as they are.
func withCwd(calls []ChatToolCall, cwd string) []ChatToolCall {
	out := make([]ChatToolCall, len(calls))
	q, _ := json.Marshal(cwd)
	for i, c := range calls {
		c.Arguments = strings.ReplaceAll(c.Arguments, CwdVar, string(q[1:len(q)-1]))
		out[i] = c
	}
	return out
}

// chatToolCalls is the tool_calls array of a message, or of a stream's
// delta (which numbers them).
func chatToolCalls(calls []ChatToolCall, indexed bool) []any {
	var out []any
	for i, c := range calls {
		args := c.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		tc := map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": args}}
		if indexed {
			tc["index"] = i
		}
		out = append(out, tc)
	}
	return out
}
