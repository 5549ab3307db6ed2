package tracker

import (
	"strings"

	"github.com/prsm-dev/prsm"
)

// LineRanges reports which lines a change from old to new touched, as the
// added_ranges and removed_ranges of a record. It runs a real line diff (Myers,
// minimal except on pathological inputs, see diffLines) and returns one range
// per contiguous change block: added ranges are in new-file line numbers,
// removed ranges in old-file line numbers, both 1-based and inclusive. A pure
// insertion yields only an added range, a pure deletion only a removed one, and
// a replacement both.
//
// A last line without a trailing newline is still a line, and it differs from
// the same text with a newline, so adding or dropping only the final newline
// marks that last line as changed, just as git shows it.
//
// Both results are non-nil (possibly empty) so that a record marshals them as
// [] rather than null, which is what SPEC.md's clients expect.
func LineRanges(old, new []byte) (added, removed []prsm.Range) {
	added, removed = []prsm.Range{}, []prsm.Range{}
	for _, h := range diffLines(splitLines(old), splitLines(new)) {
		if h.oldEnd > h.oldStart {
			removed = append(removed, prsm.Range{StartLine: h.oldStart + 1, EndLine: h.oldEnd})
		}
		if h.newEnd > h.newStart {
			added = append(added, prsm.Range{StartLine: h.newStart + 1, EndLine: h.newEnd})
		}
	}
	return added, removed
}

// splitLines cuts b into lines that keep their "\n", so that a final line
// without one compares unequal to the same text with one. It converts b to a
// string once and hands out substrings of it, so lines cost no further copies.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// hunk is one change block without context: old lines [oldStart, oldEnd) were
// replaced by new lines [newStart, newEnd), 0-based. One side may be empty.
type hunk struct {
	oldStart, oldEnd int
	newStart, newEnd int
}

// diffLines returns the change blocks that turn a into b, in order.
//
// The work is split so that the common case (a few scattered edits in a large
// file) stays linear: lines are interned to ints, the common prefix and suffix
// are dropped, and lines that occur on one side only are set aside as changed
// before Myers runs, since they can never be part of a common subsequence (so
// dropping them keeps the result minimal). Myers then runs in linear space
// (divide and conquer on the middle snake) on what is left. Only when a
// sub-problem needs more than a cost limit of edits does it settle for a good
// rather than the best split, as git's xdiff does, so that two large unrelated
// files full of repeated lines ("}", blank lines) cannot take quadratic time.
func diffLines(a, b []string) []hunk {
	keepA := make([]bool, len(a))
	keepB := make([]bool, len(b))

	// Common prefix and suffix.
	lo := 0
	for lo < len(a) && lo < len(b) && a[lo] == b[lo] {
		keepA[lo], keepB[lo] = true, true
		lo++
	}
	hiA, hiB := len(a), len(b)
	for hiA > lo && hiB > lo && a[hiA-1] == b[hiB-1] {
		hiA--
		hiB--
		keepA[hiA], keepB[hiB] = true, true
	}

	if hiA > lo && hiB > lo {
		// Intern the middle lines; ids index the count tables below.
		ids := make(map[string]int32, (hiA-lo)+(hiB-lo))
		intern := func(lines []string) []int32 {
			out := make([]int32, len(lines))
			for i, l := range lines {
				id, ok := ids[l]
				if !ok {
					id = int32(len(ids))
					ids[l] = id
				}
				out[i] = id
			}
			return out
		}
		ia := intern(a[lo:hiA])
		ib := intern(b[lo:hiB])
		inA := make([]bool, len(ids))
		inB := make([]bool, len(ids))
		for _, id := range ia {
			inA[id] = true
		}
		for _, id := range ib {
			inB[id] = true
		}
		// Keep only lines that could match; remember where they came from.
		var ra, rb []int32
		var idxA, idxB []int
		for i, id := range ia {
			if inB[id] {
				ra = append(ra, id)
				idxA = append(idxA, lo+i)
			}
		}
		for i, id := range ib {
			if inA[id] {
				rb = append(rb, id)
				idxB = append(idxB, lo+i)
			}
		}
		if len(ra) > 0 && len(rb) > 0 {
			m := &myers{
				a: ra, b: rb,
				keepA: make([]bool, len(ra)), keepB: make([]bool, len(rb)),
				maxCost: costLimit(len(ra) + len(rb)),
			}
			m.compare(0, len(ra), 0, len(rb))
			for i, k := range m.keepA {
				if k {
					keepA[idxA[i]] = true
				}
			}
			for i, k := range m.keepB {
				if k {
					keepB[idxB[i]] = true
				}
			}
		}
	}

	// Kept lines pair up in order (the k-th kept line of a matches the k-th
	// kept line of b), so the blocks are the gaps between kept pairs.
	var hunks []hunk
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for i < len(a) && j < len(b) && keepA[i] && keepB[j] {
			i++
			j++
		}
		h := hunk{oldStart: i, newStart: j}
		for i < len(a) && !keepA[i] {
			i++
		}
		for j < len(b) && !keepB[j] {
			j++
		}
		h.oldEnd, h.newEnd = i, j
		if h.oldEnd == h.oldStart && h.newEnd == h.newStart {
			break // only possible if the pairing is broken; never loop forever
		}
		hunks = append(hunks, h)
	}
	return hunks
}

// costLimit is the number of edits a single bisection may explore before it
// settles for a heuristic split: the square root of the problem size, at least
// 256, as in git's xdiff. Ordinary edits never come near it.
func costLimit(n int) int {
	c := 1
	for c*c < n {
		c++
	}
	return max(c, 256)
}

// myers holds one linear-space Myers run over interned lines. compare marks the
// lines of a common subsequence in keepA and keepB; everything unmarked is
// changed.
type myers struct {
	a, b         []int32
	keepA, keepB []bool
	maxCost      int
	v1, v2       []int // scratch for bisect, reused across calls
}

// compare diffs a[aLo:aHi] against b[bLo:bHi].
func (m *myers) compare(aLo, aHi, bLo, bHi int) {
	for {
		for aLo < aHi && bLo < bHi && m.a[aLo] == m.b[bLo] {
			m.keepA[aLo], m.keepB[bLo] = true, true
			aLo++
			bLo++
		}
		for aLo < aHi && bLo < bHi && m.a[aHi-1] == m.b[bHi-1] {
			aHi--
			bHi--
			m.keepA[aHi], m.keepB[bHi] = true, true
		}
		if aLo == aHi || bLo == bHi {
			return // the rest is a pure insertion or deletion
		}
		x, y, ok := m.bisect(aLo, aHi, bLo, bHi)
		if !ok {
			return // no usable split: treat the rest as replaced
		}
		// Recurse on the smaller half and loop on the larger one, which
		// bounds the stack depth even when heuristic splits are lopsided.
		if (x-aLo)+(y-bLo) < (aHi-x)+(bHi-y) {
			m.compare(aLo, x, bLo, y)
			aLo, bLo = x, y
		} else {
			m.compare(x, aHi, y, bHi)
			aHi, bHi = x, y
		}
	}
}

// bisect finds a point (x, y) on a shortest edit path through
// a[aLo:aHi] x b[bLo:bHi] by running Myers forward and backward until the two
// meet (the middle snake), so that the halves can be diffed separately. Past
// maxCost edits it returns the point the furthest-reaching path got to
// instead. ok is false when no split would make progress. The caller has
// stripped the common prefix and suffix, so both sides are non-empty and the
// meeting point is never a corner.
func (m *myers) bisect(aLo, aHi, bLo, bHi int) (x, y int, ok bool) {
	n, mm := aHi-aLo, bHi-bLo
	maxD := (n + mm + 1) / 2
	if maxD > m.maxCost+1 {
		maxD = m.maxCost + 1
	}
	off := maxD + 1
	size := 2*off + 1
	if cap(m.v1) < size {
		m.v1 = make([]int, size)
		m.v2 = make([]int, size)
	}
	v1, v2 := m.v1[:size], m.v2[:size]
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	a, b := m.a[aLo:aHi], m.b[bLo:bHi]
	delta := n - mm
	front := delta%2 != 0
	// Diagonals that ran off an edge are skipped from then on.
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	bestF, bestFx, bestFy := -1, 0, 0 // furthest forward point
	bestB, bestBx, bestBy := -1, 0, 0 // furthest backward point, in reversed coordinates

	for d := 0; d < maxD; d++ {
		for k1 := -d + k1start; k1 <= d-k1end; k1 += 2 {
			i := off + k1
			var x1 int
			if k1 == -d || (k1 != d && v1[i-1] < v1[i+1]) {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < mm && a[x1] == b[y1] {
				x1++
				y1++
			}
			v1[i] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > mm:
				k1start += 2
			default:
				if x1+y1 > bestF {
					bestF, bestFx, bestFy = x1+y1, x1, y1
				}
				if front {
					j := off + delta - k1
					if j >= 0 && j < size && v2[j] != -1 && x1 >= n-v2[j] {
						return aLo + x1, bLo + y1, true
					}
				}
			}
		}
		for k2 := -d + k2start; k2 <= d-k2end; k2 += 2 {
			i := off + k2
			var x2 int
			if k2 == -d || (k2 != d && v2[i-1] < v2[i+1]) {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < mm && a[n-x2-1] == b[mm-y2-1] {
				x2++
				y2++
			}
			v2[i] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > mm:
				k2start += 2
			default:
				if x2+y2 > bestB {
					bestB, bestBx, bestBy = x2+y2, x2, y2
				}
				if !front {
					j := off + delta - k2
					if j >= 0 && j < size && v1[j] != -1 {
						x1 := v1[j]
						y1 := x1 - (delta - k2)
						if x1 >= n-x2 {
							return aLo + x1, bLo + y1, true
						}
					}
				}
			}
		}
	}

	// Too expensive (or, without the limit, no meeting): split where one
	// direction made the most progress. Any point is a valid split; this one
	// keeps the long matched runs that were found.
	if bestF >= bestB {
		x, y = bestFx, bestFy
	} else {
		x, y = n-bestBx, mm-bestBy
	}
	if (x == 0 && y == 0) || (x == n && y == mm) || x < 0 || y < 0 || x > n || y > mm {
		return 0, 0, false
	}
	return aLo + x, bLo + y, true
}
