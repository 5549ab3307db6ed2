package sync

import "github.com/prsm-dev/prsm/sync/linediff"

// Onto applies the change from base to changed onto target, block by
// block: each block of lines the change replaced must be in target as it
// was in base, whole and in order (found by a diff of base and target),
// and is replaced there; a block of inserted lines goes after the line
// before it (or before the line after it). Unlike Merge3, a change that
// only touches the user's edited lines (the line next to one, say) still
// applies: prsm commit puts an agent's accepted lines on HEAD without the
// user's uncommitted edits around them. ok is false, and nothing comes
// out, when a block's lines are not in target.
func Onto(base, changed, target []byte) (out []byte, ok bool) {
	_, _, hunks, limit := linediff.DiffBounded(base, changed)
	if limit != linediff.Within {
		if string(base) == string(target) {
			return changed, true
		}
		return nil, false
	}
	bl, cl, tl := linediff.Split(base), linediff.Split(changed), linediff.Split(target)
	// where[i] is the line of target that line i of base is, unchanged;
	// -1 when it is not there.
	where := make([]int, len(bl))
	for i := range where {
		where[i] = -1
	}
	_, _, th, tlimit := linediff.DiffBounded(base, target)
	if tlimit != linediff.Within {
		return nil, false
	}
	i, j := 0, 0
	for _, h := range th {
		for i < h.OldStart {
			where[i] = j
			i, j = i+1, j+1
		}
		i, j = h.OldStart+h.OldCount, h.NewStart+h.NewCount
	}
	for i < len(bl) && j < len(tl) {
		where[i] = j
		i, j = i+1, j+1
	}
	pos := 0 // the next line of target to copy
	for _, h := range hunks {
		var from, to int // the lines of target the block replaces
		if h.OldCount > 0 {
			from = where[h.OldStart]
			for k := h.OldStart; k < h.OldStart+h.OldCount; k++ {
				if where[k] < 0 || where[k] != from+k-h.OldStart {
					return nil, false
				}
			}
			to = from + h.OldCount
		} else {
			switch {
			case h.OldStart > 0 && where[h.OldStart-1] >= 0:
				from = where[h.OldStart-1] + 1
			case h.OldStart < len(bl) && where[h.OldStart] >= 0:
				from = where[h.OldStart]
			case h.OldStart == 0:
				from = 0
			case h.OldStart == len(bl):
				from = len(tl)
			default:
				return nil, false
			}
			to = from
		}
		if from < pos {
			return nil, false
		}
		out = appendLines(out, tl[pos:from])
		out = appendLines(out, cl[h.NewStart:h.NewStart+h.NewCount])
		pos = to
	}
	out = appendLines(out, tl[pos:])
	if out == nil {
		out = []byte{}
	}
	return out, true
}
