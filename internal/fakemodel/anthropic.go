package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// AnthropicStep is one scripted answer of the model: tool calls (one
// assistant message of tool_use blocks, stop_reason tool_use), or, with
// none, the final answer Text (stop_reason end_turn).
type AnthropicStep struct {
	Text  string
	Tools []AnthropicToolUse
}

// AnthropicToolUse is one tool_use block: its id (the agent passes it on
// as tool_use_id), the tool's name and its input.
type AnthropicToolUse struct {
	ID    string
	Name  string
	Input any
}

// AnthropicScript is the steps of one conversation: the one whose first
// message contains Marker, or with Marker "" every conversation no other
// script claims. A subagent's conversation starts with the prompt its
// Agent tool call gave, so a marker in that prompt gives it a script of
// its own.
type AnthropicScript struct {
	Marker string
	Steps  []AnthropicStep
}

// AnthropicServer plays a script over Anthropic's Messages API
// (POST /v1/messages, streamed as server-sent events or not), as Claude
// Code calls it. A request of an agent loop (one that offers tools) gets
// the step of its conversation's script numbered by the assistant
// messages it already carries, so a retried request gets the same step
// again and nothing is skipped; past the script's end, and for every side
// request (a title, a summary, no tools offered), the answer is a short
// text. Token counting
// (POST /v1/messages/count_tokens) is answered too.
type AnthropicServer struct {
	// URL is the server's base URL, for ANTHROPIC_BASE_URL.
	URL string

	srv     *httptest.Server
	scripts []AnthropicScript

	mu       sync.Mutex
	requests []AnthropicRequest
}

// AnthropicRequest is what the server saw of one Messages request.
type AnthropicRequest struct {
	Path     string
	Stream   bool
	Tools    []string // the offered tools' names
	Script   int      // the script answered (its index), -1 for none
	Step     int      // the scripted step answered, -1 for a side request
	Messages json.RawMessage
}

// NewAnthropic starts a server on 127.0.0.1 that plays steps in every
// conversation; Close stops it.
func NewAnthropic(steps ...AnthropicStep) *AnthropicServer {
	return NewAnthropicScripts(AnthropicScript{Steps: steps})
}

// NewAnthropicScripts starts a server on 127.0.0.1 that plays each
// conversation's script; Close stops it.
func NewAnthropicScripts(scripts ...AnthropicScript) *AnthropicServer {
	s := &AnthropicServer{scripts: scripts}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// script is the index of the script of a conversation that starts with
// first, -1 for none.
func (s *AnthropicServer) script(first json.RawMessage) int {
	fallback := -1
	for i, sc := range s.scripts {
		if sc.Marker == "" {
			if fallback < 0 {
				fallback = i
			}
		} else if strings.Contains(string(first), sc.Marker) {
			return i
		}
	}
	return fallback
}

// Close stops the server.
func (s *AnthropicServer) Close() { s.srv.Close() }

// Requests returns the requests seen so far, in order.
func (s *AnthropicServer) Requests() []AnthropicRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AnthropicRequest(nil), s.requests...)
}

// StepsServed is how many distinct scripted steps were answered, of
// every script.
func (s *AnthropicServer) StepsServed() int {
	seen := map[[2]int]bool{}
	for _, r := range s.Requests() {
		if r.Step >= 0 {
			seen[[2]int{r.Script, r.Step}] = true
		}
	}
	return len(seen)
}

// anthropicMessagesRequest is the part of a Messages request the server
// reads.
type anthropicMessagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (s *AnthropicServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":100}`)
		return
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		// Anything else (a quota or settings check): an empty success.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
		return
	}
	var req anthropicMessagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error())
		return
	}
	var raw struct {
		Messages json.RawMessage `json:"messages"`
	}
	json.Unmarshal(body, &raw)
	seen := AnthropicRequest{Path: r.URL.Path, Stream: req.Stream, Script: -1, Step: -1, Messages: raw.Messages}
	for _, t := range req.Tools {
		seen.Tools = append(seen.Tools, t.Name)
	}
	step := AnthropicStep{Text: "OK."}
	if len(req.Tools) > 0 && len(req.Messages) > 0 {
		n := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		step = AnthropicStep{Text: "Done."}
		if i := s.script(req.Messages[0].Content); i >= 0 {
			seen.Script = i
			if steps := s.scripts[i].Steps; n < len(steps) {
				step, seen.Step = steps[n], n
			}
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, seen)
	s.mu.Unlock()
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	blocks, stop, err := step.blocks()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	id := fmt.Sprintf("msg_fake%04d", len(s.Requests()))
	usage := map[string]int{"input_tokens": 100, "output_tokens": 10}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1},
	}})
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			input, _ := json.Marshal(b["input"])
			// The input in two pieces, as a model streams it.
			half := len(input) / 2
			for _, part := range []string{string(input[:half]), string(input[half:])} {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	send("message_stop", map[string]any{"type": "message_stop"})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// blocks is the step's content blocks and stop reason.
func (st AnthropicStep) blocks() ([]map[string]any, string, error) {
	if len(st.Tools) == 0 {
		text := st.Text
		if strings.TrimSpace(text) == "" {
			text = "Done."
		}
		return []map[string]any{{"type": "text", "text": text}}, "end_turn", nil
	}
	var out []map[string]any
	if st.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": st.Text})
	}
	for _, t := range st.Tools {
		if t.ID == "" || t.Name == "" {
			return nil, "", fmt.Errorf("scripted tool_use needs an id and a name: %+v", t)
		}
		input := t.Input
		if input == nil {
			input = map[string]any{}
		}
		out = append(out, map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": input})
	}
	return out, "tool_use", nil
}
