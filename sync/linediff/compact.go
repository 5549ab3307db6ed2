package linediff

// group is a run of changed lines [start, end) in one file; an empty group
// (start == end) sits just above line start. Between any two unchanged lines
// there is exactly one group, possibly empty, which keeps the groups of both
// files in step while one of them is slid.
type group struct{ start, end int }

func groupInit(f *diffFile) group {
	g := group{}
	for f.isChanged(g.end) {
		g.end++
	}
	return g
}

// next moves g to the following group; false at the end of the file.
func (g *group) next(f *diffFile) bool {
	if g.end == f.n() {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; f.isChanged(g.end); g.end++ {
	}
	return true
}

// previous moves g to the preceding group; false at the start of the file.
func (g *group) previous(f *diffFile) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; f.isChanged(g.start - 1); g.start-- {
	}
	return true
}

// slideDown moves g one line down if its first line equals the line after
// it, absorbing a group it bumps into.
func (g *group) slideDown(f *diffFile) bool {
	if g.end < f.n() && f.class[g.start] == f.class[g.end] {
		f.setChanged(g.start, false)
		g.start++
		f.setChanged(g.end, true)
		g.end++
		for f.isChanged(g.end) {
			g.end++
		}
		return true
	}
	return false
}

// slideUp moves g one line up if its last line equals the line before it,
// absorbing a group it bumps into.
func (g *group) slideUp(f *diffFile) bool {
	if g.start > 0 && f.class[g.start-1] == f.class[g.end-1] {
		g.start--
		f.setChanged(g.start, true)
		g.end--
		f.setChanged(g.end, false)
		for f.isChanged(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// changeCompact slides each group of changed lines in f as far down as it
// goes, merging groups that touch, and then back up to line up with a change
// in the other file o where it can. This is git's default slider placement
// (without the indent heuristic, which merge-file does not use).
func changeCompact(f, o *diffFile) {
	g := groupInit(f)
	gOther := groupInit(o)
	mustStep := func(ok bool) {
		if !ok {
			panic("linediff: group sync broken")
		}
	}
	for {
		if g.end != g.start {
			var earliestEnd, endMatchingOther, groupSize int
			for {
				groupSize = g.end - g.start
				endMatchingOther = -1
				for g.slideUp(f) {
					mustStep(gOther.previous(o))
				}
				earliestEnd = g.end
				if gOther.end > gOther.start {
					endMatchingOther = g.end
				}
				for g.slideDown(f) {
					mustStep(gOther.next(o))
					if gOther.end > gOther.start {
						endMatchingOther = g.end
					}
				}
				if groupSize == g.end-g.start {
					break
				}
			}
			if g.end != earliestEnd && endMatchingOther != -1 {
				for gOther.end == gOther.start {
					mustStep(g.slideUp(f))
					mustStep(gOther.previous(o))
				}
			}
		}
		if !g.next(f) {
			break
		}
		mustStep(gOther.next(o))
	}
	if gOther.next(o) {
		panic("linediff: group sync broken at end of file")
	}
}

// buildScript turns the changed marks into hunks, in file order; ok is
// false past maxHunks of them (unless it is negative). They are counted
// first, so that the list is made once.
func buildScript(fa, fb *diffFile, maxHunks int) (hunks []Hunk, ok bool) {
	n := 0
	if !eachHunk(fa, fb, func(Hunk) bool { n++; return maxHunks < 0 || n <= maxHunks }) {
		return nil, false
	}
	if n == 0 {
		return nil, true
	}
	hunks = make([]Hunk, n)
	eachHunk(fa, fb, func(h Hunk) bool { n--; hunks[n] = h; return true })
	return hunks, true
}

// eachHunk calls f with each hunk of the changed marks, the last first,
// while f returns true; false when f stopped it.
func eachHunk(fa, fb *diffFile, f func(Hunk) bool) bool {
	for i1, i2 := fa.n(), fb.n(); i1 >= 0 || i2 >= 0; i1, i2 = i1-1, i2-1 {
		if fa.isChanged(i1-1) || fb.isChanged(i2-1) {
			l1, l2 := i1, i2
			for fa.isChanged(i1 - 1) {
				i1--
			}
			for fb.isChanged(i2 - 1) {
				i2--
			}
			if !f(Hunk{OldStart: i1, OldCount: l1 - i1, NewStart: i2, NewCount: l2 - i2}) {
				return false
			}
		}
	}
	return true
}
