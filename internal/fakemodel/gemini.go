package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// GeminiStep is one scripted answer of the model's main loop: a tool call
// (Tool with Args) or, when Tool is empty, a final text answer.
type GeminiStep struct {
	Tool string
	Args map[string]any
	Text string
}

// GeminiRequest is one request the server got, for a failing test to show.
type GeminiRequest struct {
	Path string
	Side bool   // a side request (no tools offered): not a scripted step
	Body string // the request body, cut to a few KB
}

// GeminiServer is a fake of Gemini's generateContent API as Gemini CLI
// calls it with GOOGLE_GEMINI_BASE_URL: POST
// /v1beta/models/{model}:streamGenerateContent?alt=sse for the main loop
// (answered as server-sent events, one chunk each) and
// :generateContent for side requests such as the model router's, which
// wants JSON with complexity_score. A request that offers tools is the
// main loop and takes the next step; after the last one it answers with
// plain text. Other requests get a short JSON text that satisfies the side
// requests' schemas without taking a step.
type GeminiServer struct {
	// URL is the base URL to give GOOGLE_GEMINI_BASE_URL.
	URL string

	mu       sync.Mutex
	steps    []GeminiStep
	next     int
	requests []GeminiRequest
}

// NewGeminiServer starts a server that plays steps on 127.0.0.1; it stops
// when the test ends.
func NewGeminiServer(t testing.TB, steps []GeminiStep) *GeminiServer {
	t.Helper()
	s := &GeminiServer{steps: steps}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.URL = "http://" + ln.Addr().String()
	return s
}

// Played is how many scripted steps the main loop took.
func (s *GeminiServer) Played() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// Requests is every request so far, in order.
func (s *GeminiServer) Requests() []GeminiRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]GeminiRequest(nil), s.requests...)
}

// ServeHTTP answers one request of Gemini's API.
func (s *GeminiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	var req struct {
		Tools []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	main := false
	for _, t := range req.Tools {
		if len(t.FunctionDeclarations) > 0 {
			main = true
		}
	}
	s.mu.Lock()
	logged := string(body)
	if len(logged) > 4096 {
		logged = logged[:4096] + "..."
	}
	s.requests = append(s.requests, GeminiRequest{Path: r.URL.Path, Side: !main, Body: logged})
	var parts []map[string]any
	switch {
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		s.mu.Unlock()
		geminiWriteJSON(w, map[string]any{"totalTokens": 10})
		return
	case !main:
		parts = []map[string]any{{"text": `{"complexity_reasoning": "A scripted test.", "complexity_score": 10, "reasoning": "The model answered.", "next_speaker": "user"}`}}
	case s.next < len(s.steps):
		step := s.steps[s.next]
		s.next++
		if step.Tool == "" {
			parts = []map[string]any{{"text": step.Text}}
		} else {
			parts = []map[string]any{{"functionCall": map[string]any{
				"id": fmt.Sprintf("call_%d", s.next), "name": step.Tool, "args": step.Args,
			}}}
		}
	default:
		parts = []map[string]any{{"text": "Done."}}
	}
	s.mu.Unlock()
	chunk := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-2.5-flash",
	}
	if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		geminiWriteJSON(w, chunk)
		return
	}
	b, _ := json.Marshal(chunk)
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}

func geminiWriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
