// Package api owns the request and response types of prsm's HTTP API: the
// wire contract of ../shared/SPEC.md, apart from the domain types of the
// root prsm package (Session, Record, Checkpoint...), which are on the wire
// too and which the types here refer to. server answers with these types,
// client sends and decodes them, and the CLI prints them; none of them needs
// engine or server for it.
package api
