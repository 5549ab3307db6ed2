// Package api owns the request and response types of prsm's HTTP API: the
// wire contract of docs/SPEC.md, apart from the domain types of the
// root prsm package (Session, Record, Checkpoint...), which are on the wire
// too and which the types here refer to. server answers with these types,
// client sends and decodes them, and the CLI prints them; none of them needs
// engine or server for it. server.json (Info, ReadInfo), the body limit and
// the routes both Go clients build (SessionPath, CompletePath) are here
// too, so that the lean hook binary finds and talks to a server without
// linking it.
//
// The TypeScript types of the VS Code extension and of the review page are
// generated from this package and from prsm's domain types (internal/tsgen):
// after a change to a JSON field of either, run `go generate ./api`.
package api

//go:generate go run ../internal/tsgen
