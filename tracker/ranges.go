package tracker

import (
	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/internal/linediff"
)

// LineRanges reports which lines a change from old to new touched, as the
// added_ranges and removed_ranges of a record. It takes them from
// linediff, the same diff that sync's merges and UnifiedDiff use (git's
// Myers diff), and returns one range per hunk: added ranges are in new-file
// line numbers, removed ranges in old-file line numbers, both 1-based and
// inclusive. A pure insertion yields only an added range, a pure deletion
// only a removed one, and a replacement both.
//
// A last line without a trailing newline is still a line, and it differs from
// the same text with a newline, so adding or dropping only the final newline
// marks that last line as changed, just as git shows it.
//
// Both results are non-nil (possibly empty) so that a record marshals them as
// [] rather than null, which is what SPEC.md's clients expect.
func LineRanges(old, new []byte) (added, removed []prsm.Range) {
	added, removed, _ = RangesAndHunks(old, new)
	return added, removed
}

// RangesAndHunks is LineRanges with the change's hunks, from the one diff:
// one hunk per block of changed lines, numbered as `git diff -U0` numbers
// its @@ headers (see prsm.Hunk), with status pending. hunks is non-nil.
func RangesAndHunks(old, new []byte) (added, removed []prsm.Range, hunks []prsm.Hunk) {
	added, removed, hunks = []prsm.Range{}, []prsm.Range{}, []prsm.Hunk{}
	for i, h := range linediff.Diff(linediff.Split(old), linediff.Split(new)) {
		hunks = append(hunks, prsm.Hunk{
			Index:    i,
			OldStart: headerStart(h.OldStart, h.OldCount),
			OldLines: h.OldCount,
			NewStart: headerStart(h.NewStart, h.NewCount),
			NewLines: h.NewCount,
			Status:   prsm.StatusPending,
		})
		if h.OldCount > 0 {
			removed = append(removed, prsm.Range{StartLine: h.OldStart + 1, EndLine: h.OldStart + h.OldCount})
		}
		if h.NewCount > 0 {
			added = append(added, prsm.Range{StartLine: h.NewStart + 1, EndLine: h.NewStart + h.NewCount})
		}
	}
	return added, removed, hunks
}

// headerStart is a block side's start as an @@ header gives it: its first
// line, 1-based; for a side with no lines, the line before it.
func headerStart(start0, count int) int {
	if count == 0 {
		return start0
	}
	return start0 + 1
}
