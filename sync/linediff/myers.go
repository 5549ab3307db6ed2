package linediff

import (
	"math"
)

// myers carries the state of one Myers run over the reduced sequences.
type myers struct {
	fa, fb *diffFile
	a, b   []int // reduced class sequences
	// kv holds the forward and the backward furthest-reaching vectors; both
	// are indexed by diagonal k = i1 - i2, which may be negative, hence the
	// offsets fo and bo.
	kv     []int
	fo, bo int
	mxcost int
	// work is the steps left before the search gives up (MaxWork):
	// below zero, every compare returns at once.
	work int
}

// split is the middle point of a box and whether each half must still be
// solved minimally.
type split struct {
	i1, i2       int
	minLo, minHi bool
}

// runMyers marks the changed lines of the reduced sequences; false when
// it gave up past MaxWork (the marks are then half made).
func runMyers(fa, fb *diffFile) bool {
	na, nb := len(fa.rindex), len(fb.rindex)
	ndiags := na + nb + 3
	m := &myers{
		fa: fa, fb: fb,
		a: fa.rclass, b: fb.rclass,
		kv:     make([]int, 2*ndiags+2),
		fo:     nb + 1,
		bo:     ndiags + nb + 1,
		mxcost: max(bogoSqrt(ndiags), xdMaxCostMin),
		work:   maxWork,
	}
	m.compare(0, na, 0, nb, false)
	return m.work >= 0
}

// compare marks the changed lines of the box [off1,lim1) x [off2,lim2) by
// divide and conquer around the middle snake.
func (m *myers) compare(off1, lim1, off2, lim2 int, needMin bool) {
	if m.work < 0 {
		return
	}
	for off1 < lim1 && off2 < lim2 && m.a[off1] == m.b[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && m.a[lim1-1] == m.b[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			m.fb.setChanged(m.fb.rindex[off2], true)
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			m.fa.setChanged(m.fa.rindex[off1], true)
		}
	default:
		spl := m.split(off1, lim1, off2, lim2, needMin)
		m.compare(off1, spl.i1, off2, spl.i2, spl.minLo)
		m.compare(spl.i1, lim1, spl.i2, lim2, spl.minHi)
	}
}

// split searches forward from (off1, off2) and backward from (lim1, lim2)
// until the paths meet. When the cost grows large it settles for a good
// enough point, as xdiff does, so big rewrites stay fast.
func (m *myers) split(off1, lim1, off2, lim2 int, needMin bool) split {
	a, b, kv, fo, bo := m.a, m.b, m.kv, m.fo, m.bo
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid

	kv[fo+fmid] = off1
	kv[bo+bmid] = lim1

	for ec := 1; ; ec++ {
		gotSnake := false

		// Widen the forward diagonal range by one each way, or shrink it
		// where it would leave the box; the slot just outside gets a
		// sentinel so the loop below needs no bounds checks.
		if fmin > dmin {
			fmin--
			kv[fo+fmin-1] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			kv[fo+fmax+1] = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if kv[fo+d-1] >= kv[fo+d+1] {
				i1 = kv[fo+d-1] + 1
			} else {
				i1 = kv[fo+d+1]
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && a[i1] == b[i2] {
				i1++
				i2++
			}
			m.work -= 1 + i1 - prev1
			if i1-prev1 > xdSnakeCnt {
				gotSnake = true
			}
			kv[fo+d] = i1
			if odd && bmin <= d && d <= bmax && kv[bo+d] <= i1 {
				return split{i1: i1, i2: i2, minLo: true, minHi: true}
			}
		}

		if bmin > dmin {
			bmin--
			kv[bo+bmin-1] = math.MaxInt
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			kv[bo+bmax+1] = math.MaxInt
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if kv[bo+d-1] < kv[bo+d+1] {
				i1 = kv[bo+d-1]
			} else {
				i1 = kv[bo+d+1] - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && a[i1-1] == b[i2-1] {
				i1--
				i2--
			}
			m.work -= 1 + prev1 - i1
			if prev1-i1 > xdSnakeCnt {
				gotSnake = true
			}
			kv[bo+d] = i1
			if !odd && fmin <= d && d <= fmax && i1 <= kv[fo+d] {
				return split{i1: i1, i2: i2, minLo: true, minHi: true}
			}
		}

		if m.work < 0 {
			// Over MaxWork: the diff gives up, and any point of the box
			// does (compare returns at once from here on).
			return split{i1: off1, i2: off2}
		}
		if needMin {
			continue
		}

		// The cost is high and a long snake showed up: take the diagonal
		// that got furthest (penalised by its distance from the middle) if
		// it ends in a long enough run of matches.
		if gotSnake && ec > xdHeurMinCost {
			best := 0
			var spl split
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := kv[fo+d]
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > xdKHeur*ec && v > best &&
					off1+xdSnakeCnt <= i1 && i1 < lim1 &&
					off2+xdSnakeCnt <= i2 && i2 < lim2 {
					for k := 1; a[i1-k] == b[i2-k]; k++ {
						if k == xdSnakeCnt {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = true, false
				return spl
			}

			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := kv[bo+d]
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > xdKHeur*ec && v > best &&
					off1 < i1 && i1 <= lim1-xdSnakeCnt &&
					off2 < i2 && i2 <= lim2-xdSnakeCnt {
					for k := 0; a[i1+k] == b[i2+k]; k++ {
						if k == xdSnakeCnt-1 {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = false, true
				return spl
			}
		}

		// Too expensive: split at whichever end got furthest.
		if ec >= m.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(kv[fo+d], lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1 = lim2 + d
					i2 = lim2
				}
				if fbest < i1+i2 {
					fbest = i1 + i2
					fbest1 = i1
				}
			}
			bbest, bbest1 := math.MaxInt, math.MaxInt
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, kv[bo+d])
				i2 := i1 - d
				if i2 < off2 {
					i1 = off2 + d
					i2 = off2
				}
				if i1+i2 < bbest {
					bbest = i1 + i2
					bbest1 = i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return split{i1: fbest1, i2: fbest - fbest1, minLo: true, minHi: false}
			}
			return split{i1: bbest1, i2: bbest - bbest1, minLo: false, minHi: true}
		}
	}
}
