// Package api owns the request and response types of prsm's HTTP API: the
// wire contract of docs/SPEC.md, apart from the domain types of the
// root prsm package (Session, Record, Checkpoint...), which are on the wire
// too and which the types here refer to. server answers with these types,
// client sends and decodes them, and the CLI prints them; none of them needs
// engine or server for it. server.json (Info, ReadInfo) and the body limit
// are here too, so that the lean hook binary finds and talks to a server
// without linking it.
//
// The contract is declared here once: the routes (Routes, by RouteID),
// which the server registers and every client builds its paths from, and
// the error codes (Codes), each with its HTTP status and its meaning.
//
// The TypeScript of the VS Code extension and of the review page (one
// file, extension/src/api.gen.ts: the types, the routes and the error
// codes) and docs/reference.md's table of error codes are generated from
// this package and from prsm's domain types (internal/tsgen): after a
// change to a JSON field, a route or a code, run `go generate ./api`.
package api

//go:generate go run ../internal/tsgen
