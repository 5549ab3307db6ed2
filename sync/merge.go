package sync

import (
	"bytes"

	"github.com/prsm-dev/prsm/sync/linediff"
)

// Merge3 merges the changes that ours and theirs each made to base, line by
// line, the way `git merge-file -p ours base theirs` does with git's default
// settings (Myers diff, "zealous alnum" level, no diff3 markers).
//
// prsm calls it with ours = the user's current workspace file and theirs =
// the agent's new content to apply an agent change on top of user edits, and
// with base = the agent's new content, theirs = the content before the tool
// call to take an agent change back out again (reject, rewind).
//
// A change made by one side only is taken; the same change made by both is
// taken once. Changes that overlap, or that touch with no unchanged line
// between them, are a conflict unless both sides wrote the same lines there:
// then clean is false and merged is nil, and the caller must leave the
// target file alone. When clean is true, merged is byte for byte what git
// would produce. Lines are compared as raw bytes including their terminator,
// so CRLF files, a missing final newline and empty inputs need no special
// care by the caller. Merge3 does not refuse binary content the way git
// does; deciding what is text is the caller's business.
//
// A merge is bounded as a diff is (linediff): past linediff.MaxLines
// lines (base with either side) or linediff.MaxWork it is not clean, so
// the caller leaves the file alone, as it does for a conflict.
func Merge3(base, ours, theirs []byte) (merged []byte, clean bool) {
	// Same shortcuts as git: with one side unchanged the other side is the
	// result as is, without splitting it into lines. The copy keeps callers
	// from writing into each other's buffers through the result.
	switch {
	case bytes.Equal(ours, base):
		return append([]byte{}, theirs...), true
	case bytes.Equal(theirs, base), bytes.Equal(ours, theirs):
		return append([]byte{}, ours...), true
	}

	o, t, chunks, ok := merge3Chunks(base, ours, theirs)
	if !ok {
		return nil, false
	}
	for i := range chunks {
		m := &chunks[i]
		if m.mode != modeConflict {
			continue
		}
		// git's zealous refinement diffs the two sides of a conflict and
		// keeps whatever still differs as smaller conflicts; only a
		// conflict whose sides are line-for-line equal goes away. An empty
		// side is never refined.
		if m.chg1 == 0 || m.chg2 == 0 || !equalLines(o[m.i1:m.i1+m.chg1], t[m.i2:m.i2+m.chg2]) {
			return nil, false
		}
		m.mode = modeSame
	}
	return fillMerge(o, t, chunks, nil), true
}

// merge3Chunks splits the three contents into lines and pairs up the
// diffs of base with each side (mergeChunks); ok is false past the
// bounds of a diff, before any line is split when the line counts are
// over.
func merge3Chunks(base, ours, theirs []byte) (o, t [][]byte, chunks []mergeChunk, ok bool) {
	if nb := linediff.Lines(base); nb+max(linediff.Lines(ours), linediff.Lines(theirs)) > linediff.MaxLines {
		return nil, nil, nil, false
	}
	b := linediff.Split(base)
	o, t = linediff.Split(ours), linediff.Split(theirs)
	var c linediff.Classifier
	cb, co, ct := c.Classify(b), c.Classify(o), c.Classify(t)
	s1, ok1 := linediff.DiffClassifiedBounded(b, o, cb, co, c.Count())
	if !ok1 {
		return nil, nil, nil, false
	}
	s2, ok2 := linediff.DiffClassifiedBounded(b, t, cb, ct, c.Count())
	if !ok2 {
		return nil, nil, nil, false
	}
	return o, t, mergeChunks(b, o, t, s1, s2), true
}

// Chunk modes of a merge, as in xdiff.
const (
	modeConflict = 0 // both sides changed this region differently
	modeOurs     = 1 // only ours changed it
	modeTheirs   = 2 // only theirs changed it
	modeSame     = 4 // a conflict whose two sides turned out identical
)

// mergeChunk is one changed region of a merge. i0/chg0 are lines of base,
// i1/chg1 of ours and i2/chg2 of theirs.
type mergeChunk struct {
	mode     int
	i0, chg0 int
	i1, chg1 int
	i2, chg2 int
}

// mergeChunks walks both edit scripts in base order and pairs them up. A
// change ending strictly before the other side's next change is taken
// alone; anything else (overlap, or touching ends) becomes a conflict unless
// both hunks are the very same edit. Regions that touch are coalesced.
func mergeChunks(base, ours, theirs [][]byte, s1, s2 []linediff.Hunk) []mergeChunk {
	chunks := make([]mergeChunk, 0, len(s1)+len(s2)) // at most one a hunk
	add := func(mode, i0, chg0, i1, chg1, i2, chg2 int) {
		if n := len(chunks); n > 0 {
			m := &chunks[n-1]
			if i1 <= m.i1+m.chg1 || i2 <= m.i2+m.chg2 {
				if mode != m.mode {
					m.mode = modeConflict
				}
				m.chg0 = i0 + chg0 - m.i0
				m.chg1 = i1 + chg1 - m.i1
				m.chg2 = i2 + chg2 - m.i2
				return
			}
		}
		chunks = append(chunks, mergeChunk{mode: mode, i0: i0, chg0: chg0, i1: i1, chg1: chg1, i2: i2, chg2: chg2})
	}

	p1, p2 := 0, 0
	for p1 < len(s1) && p2 < len(s2) {
		x1, x2 := s1[p1], s2[p2]
		if x1.OldStart+x1.OldCount < x2.OldStart {
			add(modeOurs, x1.OldStart, x1.OldCount, x1.NewStart, x1.NewCount, x2.NewStart-x2.OldStart+x1.OldStart, x1.OldCount)
			p1++
			continue
		}
		if x2.OldStart+x2.OldCount < x1.OldStart {
			add(modeTheirs, x2.OldStart, x2.OldCount, x1.NewStart-x1.OldStart+x2.OldStart, x2.OldCount, x2.NewStart, x2.NewCount)
			p2++
			continue
		}
		if x1.OldStart != x2.OldStart || x1.OldCount != x2.OldCount || x1.NewCount != x2.NewCount ||
			!equalLines(ours[x1.NewStart:x1.NewStart+x1.NewCount], theirs[x2.NewStart:x2.NewStart+x2.NewCount]) {
			// Widen both sides to the union of the two base ranges.
			off := x1.OldStart - x2.OldStart
			ffo := off + x1.OldCount - x2.OldCount
			i0, i1, i2 := x1.OldStart, x1.NewStart, x2.NewStart
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := x1.OldStart + x1.OldCount - i0
			chg1 := x1.NewStart + x1.NewCount - i1
			chg2 := x2.NewStart + x2.NewCount - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			add(modeConflict, i0, chg0, i1, chg1, i2, chg2)
		}
		// Identical edits add no chunk: the lines are copied from ours
		// along with the unchanged text.
		e1, e2 := x1.OldStart+x1.OldCount, x2.OldStart+x2.OldCount
		if e1 >= e2 {
			p2++
		}
		if e2 >= e1 {
			p1++
		}
	}
	for ; p1 < len(s1); p1++ {
		x1 := s1[p1]
		add(modeOurs, x1.OldStart, x1.OldCount, x1.NewStart, x1.NewCount, x1.OldStart+len(theirs)-len(base), x1.OldCount)
	}
	for ; p2 < len(s2); p2++ {
		x2 := s2[p2]
		add(modeTheirs, x2.OldStart, x2.OldCount, x2.OldStart+len(ours)-len(base), x2.OldCount, x2.NewStart, x2.NewCount)
	}
	return chunks
}

// fillMerge writes the merge result: ours with the regions that only
// theirs changed taken from theirs. conflict, when given, writes each
// conflicting chunk (ours up to it is written already); without it the
// chunks must be conflict-free.
func fillMerge(ours, theirs [][]byte, chunks []mergeChunk, conflict func(out []byte, m mergeChunk) []byte) []byte {
	size := 0
	for _, l := range ours {
		size += len(l)
	}
	out := make([]byte, 0, size+size/8)
	i := 0 // next line of ours not yet written
	for _, m := range chunks {
		switch m.mode {
		case modeOurs:
			out = appendLines(out, ours[i:m.i1+m.chg1])
		case modeTheirs:
			// Unchanged lines before the chunk are equal on both sides;
			// git copies them from theirs here, at the matching offset.
			out = appendLines(out, theirs[m.i2-m.i1+i:m.i2+m.chg2])
		case modeConflict:
			if conflict == nil {
				continue
			}
			out = conflict(appendLines(out, ours[i:m.i1]), m)
		default:
			// modeSame: its lines are written from ours together with
			// whatever comes next.
			continue
		}
		i = m.i1 + m.chg1
	}
	return appendLines(out, ours[i:])
}

func appendLines(dst []byte, lines [][]byte) []byte {
	for _, l := range lines {
		dst = append(dst, l...)
	}
	return dst
}

func equalLines(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Merge3Markers is Merge3 that never fails: where both sides changed a
// region differently, the result holds both, between git's conflict
// markers (<<<<<<< oursName, =======, >>>>>>> theirsName), for a person to
// settle in an editor. Elsewhere it is Merge3's result. Past the bounds
// of a merge the whole file is one conflict: all of ours against all of
// theirs.
func Merge3Markers(base, ours, theirs []byte, oursName, theirsName string) []byte {
	if merged, clean := Merge3(base, ours, theirs); clean {
		return merged
	}
	o, t, chunks, ok := merge3Chunks(base, ours, theirs)
	if !ok {
		out := make([]byte, 0, len(ours)+len(theirs)+len(oursName)+len(theirsName)+32)
		return appendConflict(out, [][]byte{ours}, [][]byte{theirs}, oursName, theirsName)
	}
	return fillMerge(o, t, chunks, func(out []byte, m mergeChunk) []byte {
		return appendConflict(out, o[m.i1:m.i1+m.chg1], t[m.i2:m.i2+m.chg2], oursName, theirsName)
	})
}

// appendConflict appends a conflict's two sides, each given as its lines
// (or as one run of them), between git's markers.
func appendConflict(out []byte, ours, theirs [][]byte, oursName, theirsName string) []byte {
	side := func(lines [][]byte) {
		for _, l := range lines {
			out = append(out, l...)
			if len(l) > 0 && l[len(l)-1] != '\n' {
				out = append(out, '\n') // a marker starts a line of its own
			}
		}
	}
	out = append(out, "<<<<<<< "+oursName+"\n"...)
	side(ours)
	out = append(out, "=======\n"...)
	side(theirs)
	return append(out, ">>>>>>> "+theirsName+"\n"...)
}

// HasConflictMarkers reports whether content still holds a line of
// git's conflict markers (<<<<<<< , =======, >>>>>>> ).
func HasConflictMarkers(content []byte) bool {
	for len(content) > 0 {
		l := content
		if i := bytes.IndexByte(content, '\n'); i >= 0 {
			l, content = content[:i+1], content[i+1:]
		} else {
			content = nil
		}
		l = bytes.TrimRight(l, "\r\n")
		if bytes.HasPrefix(l, []byte("<<<<<<< ")) || bytes.HasPrefix(l, []byte(">>>>>>> ")) || bytes.Equal(l, []byte("=======")) {
			return true
		}
	}
	return false
}
