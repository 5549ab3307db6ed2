package sync

import (
	"fmt"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/sync/linediff"
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
	added, removed, _, _ = RangesAndHunks(old, new)
	return added, removed
}

// RangesAndHunks is LineRanges with the change's hunks, from the one diff:
// one hunk per block of changed lines, numbered as `git diff -U0` numbers
// its @@ headers (see prsm.Hunk), with status pending. hunks is non-nil.
//
// The diff is bounded (linediff.DiffBounded): past a bound the change is
// one hunk of the whole file, its ranges every line of each side, and
// note says so, for the record's note; note is "" for a diff line by
// line. So a record's hunks, ranges and their JSON are bounded too,
// whatever the agent wrote.
func RangesAndHunks(old, new []byte) (added, removed []prsm.Range, hunks []prsm.Hunk, note string) {
	added, removed, hunks = []prsm.Range{}, []prsm.Range{}, []prsm.Hunk{}
	_, _, diff, limit := linediff.DiffBounded(old, new)
	for i, h := range diff {
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
	if limit != linediff.Within {
		note = WholeNote(limit, diff[0].OldCount+diff[0].NewCount)
	}
	return added, removed, hunks, note
}

// WholeNote is the note of a change kept as one hunk of the whole file
// because its diff passed the bound limit; lines is the lines of its two
// sides together.
func WholeNote(limit linediff.Limit, lines int) string {
	var why string
	switch limit {
	case linediff.TooManyLines:
		why = fmt.Sprintf("%d lines before and after together, more than the %d prsm diffs line by line", lines, linediff.MaxLines)
	case linediff.TooManyHunks:
		why = fmt.Sprintf("more than %d hunks, more than prsm keeps one by one", linediff.MaxHunks)
	case linediff.TooMuchWork:
		why = "its line diff took more work than prsm allows one diff, as git's diff also gives up on the best diff past a cost"
	default:
		return ""
	}
	return "one hunk of the whole file: " + why + "; accept or reject it whole"
}

// headerStart is a block side's start as an @@ header gives it: its first
// line, 1-based; for a side with no lines, the line before it.
func headerStart(start0, count int) int {
	if count == 0 {
		return start0
	}
	return start0 + 1
}
