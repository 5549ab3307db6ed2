// Package web holds prsm's review page. Its source (src/) is built with npm
// and esbuild into dist/, and dist/ is committed and embedded here, so a
// plain `go build` serves the page without npm and without any network at
// run time. Rebuild with `npm run build` after changing src/; web/ci.sh
// fails when dist/ is stale.
package web

import (
	"embed"
	"io/fs"
)

//go:embed dist
var dist embed.FS

// Dist is the built page: index.html, app.js and app.css at its root.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a fixed, valid name
	}
	return sub
}
