package fakemodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// chatPost sends one Chat Completions request and returns the streamed chunks'
// text, tool call ids and finish reason.
func chatPost(t *testing.T, url, body string) (text string, ids []string, finish string) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						ID string `json:"id"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("chunk %q: %v", line, err)
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				ids = append(ids, tc.ID)
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if !done {
		t.Fatal("stream without [DONE]")
	}
	return text, ids, finish
}

// TestChatScript: a side request (no tools) takes no step; the step is
// the number of assistant messages, so a request sent again gets the same
// answer; past the end, the last step.
func TestChatScript(t *testing.T) {
	s, err := ChatStart([]ChatStep{
		{ToolCalls: []ChatToolCall{{ID: "call_1", Name: "write", Arguments: `{"filePath":"a"}`}}},
		{Text: "done"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools := `"tools":[{"type":"function","function":{"name":"write"}}]`

	if text, ids, finish := chatPost(t, s.URL, `{"model":"m","stream":true,"messages":[{"role":"user","content":"title?"}]}`); text != "prsm" || ids != nil || finish != "stop" {
		t.Fatalf("side request: %q %v %q", text, ids, finish)
	}
	first := `{"model":"m","stream":true,` + tools + `,"messages":[{"role":"user","content":"go"}]}`
	for i := 0; i < 2; i++ {
		if _, ids, finish := chatPost(t, s.URL, first); len(ids) != 1 || ids[0] != "call_1" || finish != "tool_calls" {
			t.Fatalf("step 0 (try %d): %v %q", i, ids, finish)
		}
	}
	second := `{"model":"m","stream":true,` + tools + `,"messages":[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"call_1"}]},{"role":"tool","tool_call_id":"call_1","content":"ok"}]}`
	if text, ids, finish := chatPost(t, s.URL, second); text != "done" || ids != nil || finish != "stop" {
		t.Fatalf("step 1: %q %v %q", text, ids, finish)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].Step != -1 || reqs[1].Step != 0 || reqs[2].Step != 0 || reqs[3].Step != 1 || reqs[3].Messages[2].ToolCallID != "call_1" {
		t.Fatalf("requests: %+v", reqs)
	}

	// Not streaming: one chat.completion.
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m",`+tools+`,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name, Arguments string
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if len(c.Choices) != 1 || c.Choices[0].FinishReason != "tool_calls" || c.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"filePath":"a"}` {
		t.Fatalf("plain answer: %+v", c)
	}
}

// TestChatCwd: {{cwd}} in a step's arguments becomes the working
// directory the request's system message names, JSON-escaped.
func TestChatCwd(t *testing.T) {
	s, err := ChatStart([]ChatStep{{ToolCalls: []ChatToolCall{{ID: "c1", Name: "create", Arguments: `{"path":"{{cwd}}/a.txt"}`}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := `{"model":"m","tools":[{"type":"function","function":{"name":"create"}}],"messages":[` +
		`{"role":"system","content":"<environment_context>\n* Current working directory: /w/my t\n* Git repository root: /w/t"},{"role":"user","content":"go"}]}`
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.ToolCalls[0].Function.Arguments; got != `{"path":"/w/my t/a.txt"}` {
		t.Fatalf("arguments %s, want the system message's cwd in them", got)
	}
}
