package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prsm-dev/prsm/sync"
)

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table prints aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = printable(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() { t.tw.Flush() }

// What prsm prints for a person never lets a byte the agent wrote (a
// file's lines, a name, a summary, a note) steer the terminal: names go
// through quoteName, other text through printable, a file's lines through
// visibleLine. Colour is prsm's own, never the file's. --json output is
// left exact: JSON escapes control bytes itself.

// quoteName is a path as prsm shows it: as git quotes names (core.quotePath
// semantics, "a\nb"), so that a newline, an escape or a bell in it shows.
func quoteName(p string) string { return sync.QuotePath(p) }

// printable is one line of text as prsm shows it: control bytes in caret
// notation (^[ for ESC, ^M for CR, ^J for a newline), and the runes that
// sync.HiddenRune names as <U+202E> (or \xff for a byte that is not
// UTF-8).
func printable(s string) string { return visible(s, "") }

// printableLines is printable for text of several lines: newlines and
// tabs stay.
func printableLines(s string) string { return visible(s, "\n\t") }

// visibleLine is a file's line (a diff's, without its newline) as a
// terminal shows it: printable, tabs kept.
func visibleLine(s string) string { return visible(s, "\t") }

// visible escapes the control bytes of s but those in keep
// (sync.Visible).
func visible(s, keep string) string { return sync.Visible(s, keep) }

// fields prints "key: value" lines aligned.
func fields(w io.Writer, kv ...string) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[i], printable(kv[i+1]))
	}
	tw.Flush()
}

// age renders how long ago t was, coarsely.
func age(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Local().Format("2006-01-02")
}

func sleep(ctx context.Context, ms int) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(ms) * time.Millisecond):
	}
}
