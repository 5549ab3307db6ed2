// Package fakemodel owns the scripted model servers the real-agent tests
// point each agent CLI at: each speaks one vendor's API (Anthropic's
// Messages, OpenAI's Responses and Chat Completions, Gemini's
// generateContent) well enough to play a fixed script of tool calls and a
// final answer, on 127.0.0.1:0, and answers an agent's side requests
// (titles, token counts, routing, quota checks) without using up a
// scripted step. Tests only.
package fakemodel
