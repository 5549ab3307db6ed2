// Package linediff is prsm's one line diff: the 3-way merges of sync, the
// added and removed line ranges of a record and its unified diffs (package
// sync) all come from it, so a record's ranges name exactly the lines its merge
// and its diff show.
//
// It follows the algorithm of git's xdiff (Myers' O(ND) diff with xdiff's
// pre-filtering, cost cut-offs and group sliding) step for step rather than
// using a generic diff: wherever several minimal diffs exist, which one is
// picked decides whether a 3-way merge is clean and what it produces, and
// prsm promises the result `git merge-file` would give (and the hunks `git
// diff` shows). Any "improvement" here breaks that promise, so keep the
// tie-breaking exactly as it is. Like git's, the diff is not always minimal:
// very common lines (blank lines, braces) inside a rewritten region may be
// reported as changed, and past a cost limit it settles for a good rather
// than the best split so that large rewrites stay fast.
//
// Its files are an agent's, so what a diff may cost is bounded (see
// MaxLines, MaxHunks and MaxWork): DiffBounded and the merges of sync give
// up on lines past a bound and treat the change as one block of the
// whole file, the way git's diff settles for a cheaper answer past its
// cost limit. Below the bounds nothing changes.
//
// Attribution: the algorithm follows git's xdiff (libxdiff by Davide Libenzi,
// as modified in git, LGPL-2.1); this is an independent Go implementation of
// it, with no C code copied.
package linediff

import (
	"bytes"
	"unsafe"
)

// Tuning constants of xdiff's Myers implementation. They shape which diff is
// found when the edit cost gets high, so they are part of git compatibility.
const (
	xdMaxCostMin  = 256  // lower bound of the cost at which the search gives up on minimality
	xdHeurMinCost = 256  // cost above which a long snake may end the search early
	xdSnakeCnt    = 20   // length of a "good" snake for that heuristic
	xdKHeur       = 4    // how far ahead of the cost a snake must reach to be taken
	xdMaxEqLimit  = 1024 // cap on the "line is too common" threshold
	xdScanWindow  = 100  // how far the common-line run scan looks each way
	xdKpdisRun    = 4    // ratio of common to unmatched lines that still gets discarded
)

// Split cuts data after every '\n'. Each line keeps its terminator, so
// CRLF, a missing final newline and the bytes of the line all take part in
// comparisons, exactly as git compares records. The lines share data's
// memory; an empty data has no lines.
func Split(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	lines := make([][]byte, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i+1:i+1])
		data = data[i+1:]
	}
	return lines
}

// diffFile is one side of a 2-way diff.
type diffFile struct {
	lines [][]byte
	class []int // equal lines (byte for byte) share a class id
	// changed[i+1] tells whether line i is not part of the common
	// subsequence; changed[0] and changed[n+1] are always false so that group
	// scans can run off either end without bounds checks.
	changed []bool
	// The core algorithm works on a reduced sequence: the lines between
	// dstart and dend (the common prefix and suffix trimmed) minus the lines
	// that cannot match anyway. rindex maps a reduced index to a line number
	// and rclass holds that line's class.
	rindex       []int
	rclass       []int
	dstart, dend int
}

func (f *diffFile) n() int                   { return len(f.lines) }
func (f *diffFile) isChanged(i int) bool     { return f.changed[i+1] }
func (f *diffFile) setChanged(i int, v bool) { f.changed[i+1] = v }

// Hunk is one change of a 2-way diff, 0-based: lines [OldStart,
// OldStart+OldCount) of the first file became lines [NewStart,
// NewStart+NewCount) of the second. One side may be empty; its start is then
// where the other side's lines were (the index of the line after them).
type Hunk struct {
	OldStart, OldCount int
	NewStart, NewCount int
}

// The bounds of one diff. A diff's memory grows with its lines (it
// allocates about 120 bytes a line, the lines' own bytes aside), its
// time with its work, and what is made of its hunks (a record's hunks
// and line ranges, their JSON, the page's view) with their count; all
// three are an agent's to choose. Past any bound DiffBounded gives the
// one hunk of the whole file (WholeHunk) and says which bound it passed.
const (
	// MaxLines is the most lines a diff works on, its two files
	// together: a diff of them allocates about 60 MB at most, a merge
	// (base with each side) about 110 MB. Counting them costs no
	// memory, so a larger file is never split into lines.
	MaxLines = 1 << 19
	// MaxHunks is the most hunks a diff reports: more are not a change
	// anyone reviews hunk by hunk.
	MaxHunks = 5000
	// MaxWork bounds the steps of one diff's Myers search (diagonals
	// tried and matching lines followed): a second or two of work. Real
	// edits take a few steps a line; files of a few distinct lines
	// shuffled take far more, and git takes as long for them.
	MaxWork = 1 << 25
)

// maxWork is MaxWork, but for tests.
var maxWork = MaxWork

// Limit is the bound a diff passed, if any.
type Limit int

const (
	Within       Limit = iota // the diff is line by line
	TooManyLines              // more than MaxLines lines
	TooManyHunks              // more than MaxHunks hunks
	TooMuchWork               // more than MaxWork steps
)

func (l Limit) String() string {
	switch l {
	case Within:
		return "within the bounds"
	case TooManyLines:
		return "too many lines"
	case TooManyHunks:
		return "too many hunks"
	case TooMuchWork:
		return "too much work"
	}
	return "unknown limit"
}

// Lines is the number of lines Split cuts data into, counted without
// cutting it.
func Lines(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// WholeHunk is the hunk that replaces every line of a file of na lines
// by every line of a file of nb lines: what a diff past its bounds
// reports. It is nil when both files are empty.
func WholeHunk(na, nb int) []Hunk {
	if na == 0 && nb == 0 {
		return nil
	}
	return []Hunk{{OldStart: 0, OldCount: na, NewStart: 0, NewCount: nb}}
}

// DiffBounded is Diff of the contents old and new, within the bounds. a
// and b are their lines (Split's) when the diff ran; they are nil when it
// did not need to (equal contents, or an empty side, whose one hunk is
// the whole file anyway) or gave up (limit says why): hunks is then
// WholeHunk of the two. Below the bounds hunks are Diff's.
func DiffBounded(old, new []byte) (a, b [][]byte, hunks []Hunk, limit Limit) {
	if bytes.Equal(old, new) {
		return nil, nil, nil, Within
	}
	na, nb := Lines(old), Lines(new)
	switch {
	case na == 0 || nb == 0:
		return nil, nil, WholeHunk(na, nb), Within
	case na+nb > MaxLines:
		return nil, nil, WholeHunk(na, nb), TooManyLines
	}
	a, b = Split(old), Split(new)
	var c Classifier
	hunks, limit = diff(a, b, c.Classify(a), c.Classify(b), c.Count(), MaxHunks)
	if limit != Within {
		return nil, nil, WholeHunk(na, nb), limit
	}
	return a, b, hunks, Within
}

// Diff diffs a against b the way git's default (Myers) diff does and
// returns the hunks in file order, separated by at least one unchanged
// line. It returns nil when a and b are equal. It has no bounds;
// DiffBounded is the diff of files an agent wrote.
func Diff(a, b [][]byte) []Hunk {
	var c Classifier
	return DiffClassified(a, b, c.Classify(a), c.Classify(b), c.Count())
}

// Classifier numbers distinct lines, so that the diff compares small ints
// instead of bytes. One Classifier can serve several files (a 3-way merge
// shares one among base, ours and theirs to hash each line once). The zero
// value is ready to use. It keeps the lines it saw, not copies: they must
// not change while it is in use.
type Classifier struct{ ids map[string]int }

// Classify returns the class of each line: equal lines (byte for byte) get
// the same class, in every file this Classifier classified.
func (c *Classifier) Classify(lines [][]byte) []int {
	if c.ids == nil {
		// No size hint: a file of a few distinct lines needs a few
		// entries, and a large map grows a table at a time.
		c.ids = map[string]int{}
	}
	out := make([]int, len(lines))
	for i, l := range lines {
		// The key shares the line's bytes rather than copying them: a
		// file of distinct lines would otherwise be held twice.
		key := unsafe.String(unsafe.SliceData(l), len(l))
		id, ok := c.ids[key]
		if !ok {
			id = len(c.ids)
			c.ids[key] = id
		}
		out[i] = id
	}
	return out
}

// Count is the number of classes handed out so far.
func (c *Classifier) Count() int { return len(c.ids) }

// DiffClassified is Diff for lines already classified by one Classifier;
// nclass is its Count after classifying both.
func DiffClassified(a, b [][]byte, ca, cb []int, nclass int) []Hunk {
	hunks, _ := diff(a, b, ca, cb, nclass, -1)
	return hunks
}

// DiffClassifiedBounded is DiffClassified within MaxWork (a merge's
// diffs, whose lines the caller bounds; their hunks are not reviewed, so
// their count is not bounded): ok is false past it, and hunks nil.
func DiffClassifiedBounded(a, b [][]byte, ca, cb []int, nclass int) (hunks []Hunk, ok bool) {
	hunks, limit := diff(a, b, ca, cb, nclass, -1)
	return hunks, limit == Within
}

// diff is the diff of classified lines, within MaxWork and, unless it is
// negative, maxHunks; past either, hunks is nil and limit says which.
func diff(a, b [][]byte, ca, cb []int, nclass, maxHunks int) (hunks []Hunk, limit Limit) {
	fa := &diffFile{lines: a, class: ca, changed: make([]bool, len(a)+2)}
	fb := &diffFile{lines: b, class: cb, changed: make([]bool, len(b)+2)}
	trimEnds(fa, fb)
	cleanupRecords(fa, fb, nclass)
	if !runMyers(fa, fb) {
		return nil, TooMuchWork
	}
	changeCompact(fa, fb)
	changeCompact(fb, fa)
	hunks, ok := buildScript(fa, fb, maxHunks)
	if !ok {
		return nil, TooManyHunks
	}
	return hunks, Within
}

// trimEnds skips the common prefix and suffix; those lines match trivially.
func trimEnds(fa, fb *diffFile) {
	na, nb := fa.n(), fb.n()
	lim := min(na, nb)
	i := 0
	for i < lim && fa.class[i] == fb.class[i] {
		i++
	}
	fa.dstart, fb.dstart = i, i
	lim -= i
	j := 0
	for j < lim && fa.class[na-1-j] == fb.class[nb-1-j] {
		j++
	}
	fa.dend = na - j - 1
	fb.dend = nb - j - 1
}

// bogoSqrt is xdiff's cheap power-of-two square root estimate.
func bogoSqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// cleanupRecords marks lines that have no equal in the other file as changed
// up front, and so are very common lines that sit in a run of such lines.
// Besides speed this decides where very common lines (blank lines, braces)
// end up, so it must match git.
func cleanupRecords(fa, fb *diffFile, nclass int) {
	countA := make([]int, nclass)
	countB := make([]int, nclass)
	for _, c := range fa.class {
		countA[c]++
	}
	for _, c := range fb.class {
		countB[c]++
	}
	reduce(fa, countB)
	reduce(fb, countA)
}

// reduce fills f.rindex and f.rclass; other holds how often each class
// occurs in the other file.
func reduce(f *diffFile, other []int) {
	// dis: 0 = no match in the other file, 1 = some, 2 = too many.
	dis := make([]byte, f.n()+1)
	mlim := min(bogoSqrt(f.n()), xdMaxEqLimit)
	f.rindex = make([]int, 0, max(f.dend-f.dstart+1, 0))
	f.rclass = make([]int, 0, max(f.dend-f.dstart+1, 0))
	for i := f.dstart; i <= f.dend; i++ {
		nm := other[f.class[i]]
		switch {
		case nm == 0:
			dis[i] = 0
		case nm >= mlim:
			dis[i] = 2
		default:
			dis[i] = 1
		}
	}
	for i := f.dstart; i <= f.dend; i++ {
		if dis[i] == 1 || (dis[i] == 2 && !cleanMultiMatch(dis, i, f.dstart, f.dend)) {
			f.rindex = append(f.rindex, i)
			f.rclass = append(f.rclass, f.class[i])
		} else {
			f.setChanged(i, true)
		}
	}
}

// cleanMultiMatch reports whether the too-common line i sits inside a run of
// unmatched lines and is better treated as changed too.
func cleanMultiMatch(dis []byte, i, s, e int) bool {
	if i-s > xdScanWindow {
		s = i - xdScanWindow
	}
	if e-i > xdScanWindow {
		e = i + xdScanWindow
	}
	rdis0, rpdis0 := 0, 1
scanBack:
	for r := 1; i-r >= s; r++ {
		switch dis[i-r] {
		case 0:
			rdis0++
		case 2:
			rpdis0++
		default:
			break scanBack
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
scanFwd:
	for r := 1; i+r <= e; r++ {
		switch dis[i+r] {
		case 0:
			rdis1++
		case 2:
			rpdis1++
		default:
			break scanFwd
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*xdKpdisRun < rpdis1+rdis1
}
