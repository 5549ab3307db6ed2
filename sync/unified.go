package sync

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prsm-dev/prsm/sync/linediff"
)

// binaryCheckLen is how far IsBinary looks for a NUL byte; git looks at the
// same first 8000 bytes (buffer_is_binary), so prsm and `git diff` agree on
// which files are binary.
const binaryCheckLen = 8000

// IsBinary reports whether content must be treated as binary: records of such
// files carry no inline content and no line ranges. It is binary when a NUL
// byte appears in the first 8000 bytes (git's rule) or when the content is not
// valid UTF-8 anywhere, since text content is served as a JSON string, which
// would silently mangle invalid bytes. The UTF-8 check runs over the whole
// content, so a multi-byte rune is never judged half-read.
func IsBinary(b []byte) bool {
	if bytes.IndexByte(b[:min(len(b), binaryCheckLen)], 0) >= 0 {
		return true
	}
	return !utf8.Valid(b)
}

// UnifiedDiff returns the unified diff that turns old into new, as `diff -u`
// and `git diff` print it, so that `git apply` and `patch` accept it: a
// "--- oldName" / "+++ newName" header, then @@ hunks with context lines of
// context around each change, and "\ No newline at end of file" after a last
// line that lacks one. It returns "" when old and new are equal.
//
// The names are printed as given, so the caller picks the convention: "a/x"
// and "b/x" for `git apply` (which strips one component), "/dev/null" for the
// missing side of a creation or deletion. A name holding a quote, backslash or
// control character (a newline would break the header) is C-quoted the way git
// quotes it, which git apply understands. A name with a space gets a trailing
// tab, as GNU diff writes one before its timestamp, so that tools do not take
// the part after the space for a timestamp. A negative context counts as 0.
func UnifiedDiff(oldName, newName string, old, new []byte, context int) string {
	d, _ := UnifiedDiffMax(oldName, newName, old, new, context, -1)
	return d
}

// UnifiedDiffMax is UnifiedDiff if its text is at most max bytes (any
// size for a negative max); past it, it is "" and ok is false, found
// before any of the text is made. What a diff is served at once is
// bounded so (engine's Diff): the text of a large file's change is
// about the size of its two sides.
func UnifiedDiffMax(oldName, newName string, old, new []byte, context, max int) (d string, ok bool) {
	if bytes.Equal(old, new) {
		return "", true
	}
	fd := diffOf(old, new)
	head := "--- " + diffName(oldName) + "\n+++ " + diffName(newName) + "\n"
	var n counter
	fd.write(&n, head, context, nil)
	if max >= 0 && int(n) > max {
		return "", false
	}
	var sb strings.Builder
	sb.Grow(int(n))
	fd.write(&sb, head, context, nil)
	return sb.String(), true
}

// DiffHunks is the @@ hunks of UnifiedDiff without its header, of the
// blocks of old -> new (the one diff's, numbered as RangesAndHunks
// numbers them) that keep selects (every one when keep is nil). Blocks
// whose context would touch are shown together, as git shows them. A
// change past the diff's bounds is its one block of the whole file, as
// its record's one hunk is, written without cutting the contents into
// lines.
func DiffHunks(old, new []byte, context int, keep func(i int) bool) string {
	var sb strings.Builder
	d := diffOf(old, new)
	d.write(&sb, "", context, keep)
	return sb.String()
}

// fileDiff is a change with its one bounded diff (linediff.DiffBounded):
// the lines of both sides and the hunks, or no lines and the one hunk of
// the whole file.
type fileDiff struct {
	old, new []byte
	a, b     [][]byte
	hunks    []linediff.Hunk
}

func diffOf(old, new []byte) fileDiff {
	a, b, hunks, _ := linediff.DiffBounded(old, new)
	return fileDiff{old: old, new: new, a: a, b: b, hunks: hunks}
}

// textWriter is what a diff is written to: the text, or a counter that
// sizes it first.
type textWriter interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
}

// counter counts the bytes written to it.
type counter int

func (c *counter) Write(p []byte) (int, error)       { *c += counter(len(p)); return len(p), nil }
func (c *counter) WriteString(s string) (int, error) { *c += counter(len(s)); return len(s), nil }
func (c *counter) WriteByte(byte) error              { *c++; return nil }

// write writes the @@ blocks of the hunks keep selects to w, after head
// (a file header) unless no block is written.
func (d *fileDiff) write(w textWriter, head string, context int, keep func(i int) bool) {
	context = max(context, 0)
	a, b, all := d.a, d.b, d.hunks
	if a == nil && b == nil && len(all) == 1 {
		if keep == nil || keep(0) {
			w.WriteString(head)
			writeWhole(w, d.old, d.new, all[0])
		}
		return
	}
	hunks := all[:0:0]
	for i, h := range all {
		if keep == nil || keep(i) {
			hunks = append(hunks, h)
		}
	}
	if len(hunks) == 0 {
		return
	}

	w.WriteString(head)
	for i := 0; i < len(hunks); {
		// Merge blocks whose context would touch or overlap into one hunk.
		j := i + 1
		for j < len(hunks) && hunks[j].OldStart-oldEnd(hunks[j-1]) <= 2*context {
			j++
		}
		first, last := hunks[i], hunks[j-1]
		oldLo := max(first.OldStart-context, 0)
		newLo := first.NewStart - (first.OldStart - oldLo)
		oldHi := min(oldEnd(last)+context, len(a))
		newHi := last.NewStart + last.NewCount + (oldHi - oldEnd(last))

		writeHeader(w, oldLo, oldHi-oldLo, newLo, newHi-newLo)
		pos := oldLo
		for _, h := range hunks[i:j] {
			for _, l := range a[pos:h.OldStart] {
				writeLine(w, ' ', l)
			}
			for _, l := range a[h.OldStart:oldEnd(h)] {
				writeLine(w, '-', l)
			}
			for _, l := range b[h.NewStart : h.NewStart+h.NewCount] {
				writeLine(w, '+', l)
			}
			pos = oldEnd(h)
		}
		for _, l := range a[pos:oldHi] {
			writeLine(w, ' ', l)
		}
		i = j
	}
}

// writeWhole writes the one block h of a change that replaces every
// line: old's lines removed, new's added, read off the contents.
func writeWhole(w textWriter, old, new []byte, h linediff.Hunk) {
	writeHeader(w, 0, h.OldCount, 0, h.NewCount)
	for _, side := range []struct {
		prefix  byte
		content []byte
	}{{'-', old}, {'+', new}} {
		for data := side.content; len(data) > 0; {
			n := bytes.IndexByte(data, '\n') + 1
			if n == 0 {
				n = len(data)
			}
			writeLine(w, side.prefix, data[:n])
			data = data[n:]
		}
	}
}

// writeHeader writes a hunk's @@ line.
func writeHeader(w textWriter, oldStart, oldCount, newStart, newCount int) {
	w.WriteString("@@ -")
	w.WriteString(hunkRange(oldStart, oldCount))
	w.WriteString(" +")
	w.WriteString(hunkRange(newStart, newCount))
	w.WriteString(" @@\n")
}

// oldEnd is the old line after h's old side.
func oldEnd(h linediff.Hunk) int { return h.OldStart + h.OldCount }

// hunkRange formats one side of an @@ header the way GNU diff does: the count
// is left out when it is 1, and an empty side names the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	default:
		return strconv.Itoa(start+1) + "," + strconv.Itoa(count)
	}
}

// writeLine writes one diff line; a line without its newline is the file's
// last and gets the marker that tells patch tools not to add one.
func writeLine(w textWriter, prefix byte, line []byte) {
	w.WriteByte(prefix)
	w.Write(line)
	if !bytes.HasSuffix(line, []byte("\n")) {
		w.WriteString(noNewline)
	}
}

// noNewline ends a last line that has no newline of its own.
const noNewline = "\n\\ No newline at end of file\n"

// diffName prepares a file name for a ---/+++ header (see UnifiedDiff).
func diffName(name string) string {
	if q := QuotePath(name); q != name {
		return q
	}
	if strings.ContainsRune(name, ' ') {
		return name + "\t"
	}
	return name
}
