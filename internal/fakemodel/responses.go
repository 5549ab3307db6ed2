package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	stdsync "sync"
	"testing"
)

// ResponsesStep is one scripted turn of the model, as OpenAI's Responses
// API streams it: exactly one of ApplyPatch (a custom_tool_call of Codex's
// apply_patch tool, the patch as its input), Exec (a function_call of
// Codex's exec_command shell tool) or Message (the final answer).
type ResponsesStep struct {
	CallID     string // the model's call_id; made up when empty
	ApplyPatch string
	Exec       string
	Workdir    string // exec_command's workdir, when set
	Message    string
}

// ResponsesServer plays a script on POST /v1/responses (stream: true).
// The step a request gets is the number of tool outputs its input
// carries, so a retried request gets the same step again, and a request
// that offers no tools (a side request: a title, a compaction) gets a
// short answer and uses up nothing. Past the script it answers with the
// last message.
type ResponsesServer struct {
	URL   string // base URL, ending in /v1
	steps []ResponsesStep

	mu       stdsync.Mutex
	requests []json.RawMessage
}

// ResponsesStart starts a server for steps on 127.0.0.1; it stops when
// the test ends.
func ResponsesStart(tb testing.TB, steps []ResponsesStep) *ResponsesServer {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &ResponsesServer{URL: "http://" + ln.Addr().String() + "/v1", steps: steps}
	for i := range s.steps {
		if s.steps[i].CallID == "" {
			s.steps[i].CallID = fmt.Sprintf("call_fake%02d", i)
		}
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return s
}

// ResponsesRequests are the bodies of the main-loop requests so far.
func (s *ResponsesServer) ResponsesRequests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.requests...)
}

// ServeHTTP answers the Responses API; other paths get an empty model
// list or a 404.
func (s *ResponsesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[]}`)
		return
	case r.Method != http.MethodPost || r.URL.Path != "/v1/responses":
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Tools []json.RawMessage `json:"tools"`
		Input []struct {
			Type string `json:"type"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "want a JSON body: "+err.Error(), http.StatusBadRequest)
		return
	}
	var item any
	if len(req.Tools) == 0 {
		item = responsesMessage("ok")
	} else {
		s.mu.Lock()
		s.requests = append(s.requests, body)
		s.mu.Unlock()
		n := 0
		for _, in := range req.Input {
			if in.Type == "function_call_output" || in.Type == "custom_tool_call_output" {
				n++
			}
		}
		item = s.item(n)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sse := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	sse("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_fake"}})
	sse("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": "resp_fake",
		"usage": map[string]any{
			"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 15,
		},
	}})
}

// item is the output item of step n.
func (s *ResponsesServer) item(n int) any {
	if n >= len(s.steps) {
		for i := len(s.steps) - 1; i >= 0; i-- {
			if s.steps[i].Message != "" {
				return responsesMessage(s.steps[i].Message)
			}
		}
		return responsesMessage("done")
	}
	st := s.steps[n]
	switch {
	case st.ApplyPatch != "":
		return map[string]any{"type": "custom_tool_call", "id": "ctc_" + st.CallID, "status": "completed",
			"call_id": st.CallID, "name": "apply_patch", "input": st.ApplyPatch}
	case st.Exec != "":
		args := map[string]any{"cmd": st.Exec, "yield_time_ms": 10000}
		if st.Workdir != "" {
			args["workdir"] = st.Workdir
		}
		b, _ := json.Marshal(args)
		return map[string]any{"type": "function_call", "id": "fc_" + st.CallID, "status": "completed",
			"call_id": st.CallID, "name": "exec_command", "arguments": string(b)}
	}
	return responsesMessage(st.Message)
}

func responsesMessage(text string) any {
	return map[string]any{"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}
