// Package server owns prsm's HTTP face: the echo server bound to loopback,
// its guards (bearer token, sessions' hook tokens, Host check against DNS
// rebinding, body limit, JSON errors), the bounds on its connections
// (conns.go: caps, timeouts, per-write deadlines), the middleware that
// reads every request body before its answer goes out, the routes of
// SPEC.md, the SSE event stream, and the server.json file through which
// the CLI, hooks and the extension find a running server.
package server
