package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/prsm-dev/prsm/api"
)

// writeCodes writes the union of the error codes of api.Codes, each with
// its status and its meaning.
func writeCodes(b *bytes.Buffer) {
	b.WriteString("\n/** The code of an error answer (ErrorBody.code): docs/reference.md has the table. */\nexport type ErrorCode =\n")
	for _, c := range api.Codes {
		fmt.Fprintf(b, "  | '%s' // %d: %s\n", c.Code, c.Status, c.Meaning)
	}
	b.Truncate(b.Len() - 1)
	// The semicolon goes on its own line: the last line ends in a comment.
	b.WriteString("\n  ;\n")
}

// writeRoutes writes api.Routes: ROUTES with each route's method and
// pattern, and paths, one function per route that builds its path from
// its parameters, each escaped as one segment (pathSegment).
func writeRoutes(b *bytes.Buffer) {
	b.WriteString(`
/** A method of the API. */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A route of the API: its method, and its path pattern, where ':name' is a parameter. */
export interface Route {
  readonly method: Method;
  readonly pattern: string;
}

/** The routes of the API, by operation (api.Routes in Go). */
export const ROUTES = {
`)
	for _, r := range api.Routes {
		fmt.Fprintf(b, "  %s: { method: '%s', pattern: '%s' },\n", r.Name, r.Method, r.Pattern)
	}
	b.WriteString(`} as const satisfies Record<string, Route>;

/** The name of a route of the API. */
export type RouteName = keyof typeof ROUTES;

/**
 * Escapes one path segment. The characters a segment may hold as they are
 * (RFC 3986 pchar: ':' of "tc:0" record ids, '@', ...) stay unescaped, so
 * an id reads in a log as it is; the server unescapes every parameter.
 */
export function pathSegment(s: string): string {
  return encodeURIComponent(s).replace(/%(3A|40|21|24|26|27|28|29|2A|2B|2C|3B|3D)/gi, (m) => decodeURIComponent(m));
}

/** The path of each route, from its parameters (escaped here); a query is the caller's. */
export const paths = {
`)
	for _, r := range api.Routes {
		params := r.Params()
		args := make([]string, len(params))
		for i, p := range params {
			args[i] = p + ": string"
		}
		path := r.Pattern
		for _, p := range params {
			path = strings.Replace(path, ":"+p, "${pathSegment("+p+")}", 1)
		}
		quote := "'"
		if len(params) > 0 {
			quote = "`"
		}
		fmt.Fprintf(b, "  %s: (%s): string => %s%s%s,\n", r.Name, strings.Join(args, ", "), quote, path, quote)
	}
	b.WriteString("} as const satisfies Record<RouteName, (...params: string[]) => string>;\n")
}

// referenceDoc is the doc whose table of error codes tsgen writes.
const referenceDoc = "docs/reference.md"

// The markers around the table in referenceDoc.
const (
	tableStart = "<!-- error codes: generated from api.Codes by internal/tsgen; do not edit -->\n"
	tableEnd   = "<!-- end of error codes -->\n"
)

// withCodeTable is doc with the table of api.Codes between its markers.
func withCodeTable(doc []byte) ([]byte, error) {
	i := bytes.Index(doc, []byte(tableStart))
	j := bytes.Index(doc, []byte(tableEnd))
	if i < 0 || j < i {
		return nil, fmt.Errorf("%s has no %q ... %q markers", referenceDoc, strings.TrimSpace(tableStart), strings.TrimSpace(tableEnd))
	}
	var t bytes.Buffer
	t.Write(doc[:i+len(tableStart)])
	t.WriteString("\n| Code | Status | Meaning |\n|---|---|---|\n")
	for _, c := range api.Codes {
		fmt.Fprintf(&t, "| `%s` | %d %s | %s |\n", c.Code, c.Status, http.StatusText(c.Status), c.Meaning)
	}
	t.WriteString("\n")
	t.Write(doc[j:])
	return t.Bytes(), nil
}
