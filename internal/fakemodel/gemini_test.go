package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The main loop (a request that offers tools) takes the steps in order,
// as server-sent events; side requests and token counts take none.
func TestGeminiServer(t *testing.T) {
	s := NewGeminiServer(t, []GeminiStep{
		{Tool: "write_file", Args: map[string]any{"file_path": "a.txt", "content": "a\n"}},
		{Text: "Done here."},
	})
	post := func(path, body string) string {
		t.Helper()
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	const tools = `{"contents": [], "tools": [{"functionDeclarations": [{"name": "write_file"}]}]}`
	side := post("/v1beta/models/m-lite:generateContent", `{"contents": []}`)
	var answer struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(side), &answer); err != nil || len(answer.Candidates) != 1 {
		t.Fatalf("side answer %s: %v", side, err)
	}
	var route map[string]any
	if err := json.Unmarshal([]byte(answer.Candidates[0].Content.Parts[0].Text), &route); err != nil || route["complexity_score"] == nil {
		t.Fatalf("the router's answer %q is not JSON with complexity_score", answer.Candidates[0].Content.Parts[0].Text)
	}
	if n := post("/v1beta/models/m:countTokens", `{}`); !strings.Contains(n, `"totalTokens"`) {
		t.Fatalf("countTokens answer %s", n)
	}
	if s.Played() != 0 {
		t.Fatalf("side requests took %d steps", s.Played())
	}
	first := post("/v1beta/models/m:streamGenerateContent?alt=sse", tools)
	if !strings.HasPrefix(first, "data: {") || !strings.Contains(first, `"functionCall":{"args":{"content":"a\n","file_path":"a.txt"},"id":"call_1","name":"write_file"}`) {
		t.Fatalf("first step %q", first)
	}
	if second := post("/v1beta/models/m:streamGenerateContent?alt=sse", tools); !strings.Contains(second, `"text":"Done here."`) {
		t.Fatalf("second step %q", second)
	}
	if after := post("/v1beta/models/m:streamGenerateContent?alt=sse", tools); !strings.Contains(after, `"text":"Done."`) {
		t.Fatalf("after the script %q", after)
	}
	if s.Played() != 2 || len(s.Requests()) != 5 || !s.Requests()[0].Side || s.Requests()[3].Side {
		t.Fatalf("played %d, requests %+v", s.Played(), s.Requests())
	}
}
