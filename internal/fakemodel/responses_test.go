package fakemodel

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The step a request gets follows the tool outputs it carries: a retry
// gets the same step again, a side request (no tools) gets a short answer
// and uses up none, and past the script the last message comes back.
func TestResponsesScript(t *testing.T) {
	s := ResponsesStart(t, []ResponsesStep{
		{CallID: "call_a", ApplyPatch: "*** Begin Patch\n*** Add File: x\n+x\n*** End Patch\n"},
		{CallID: "call_b", Exec: "touch y", Workdir: "/w"},
		{Message: "done here"},
	})
	post := func(body string) string {
		t.Helper()
		resp, err := http.Post(s.URL+"/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "event: response.completed") {
			t.Fatalf("answer %d:\n%s", resp.StatusCode, b)
		}
		return string(b)
	}
	const tools = `"tools":[{"type":"function","name":"exec_command"}]`
	first := `{` + tools + `,"input":[{"type":"message","role":"user"}]}`
	for i := 0; i < 2; i++ {
		if got := post(first); !strings.Contains(got, `"type":"custom_tool_call"`) || !strings.Contains(got, `"call_id":"call_a"`) || !strings.Contains(got, `"name":"apply_patch"`) {
			t.Fatalf("step 0 (try %d):\n%s", i, got)
		}
	}
	if got := post(`{"input":[{"type":"message","role":"user"}]}`); !strings.Contains(got, `"text":"ok"`) {
		t.Fatalf("side request:\n%s", got)
	}
	second := `{` + tools + `,"input":[{"type":"message"},{"type":"custom_tool_call"},{"type":"custom_tool_call_output"}]}`
	if got := post(second); !strings.Contains(got, `"name":"exec_command"`) || !strings.Contains(got, `\"workdir\":\"/w\"`) || !strings.Contains(got, `"call_id":"call_b"`) {
		t.Fatalf("step 1:\n%s", got)
	}
	third := `{` + tools + `,"input":[{"type":"custom_tool_call_output"},{"type":"function_call_output"}]}`
	fourth := `{` + tools + `,"input":[{"type":"custom_tool_call_output"},{"type":"function_call_output"},{"type":"function_call_output"}]}`
	for _, body := range []string{third, fourth} {
		if got := post(body); !strings.Contains(got, `"text":"done here"`) {
			t.Fatalf("final:\n%s", got)
		}
	}
	if n := len(s.ResponsesRequests()); n != 5 {
		t.Fatalf("%d main-loop requests kept, want 5", n)
	}
	resp, err := http.Get(s.URL + "/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("GET /v1/nothing: %d", resp.StatusCode)
	}
}
