package engine_test

// Chains of decisions around rewinds: accepting or rejecting the offers
// an undo makes, older pending records, bulk decisions, deletes and
// recreations (the Z scenarios of a second audit of review-mode rewinds),
// run by the chain harness (chainharness_test.go).

import (
	"testing"

	"github.com/prsm-dev/prsm/api"
)

// Z01: accept the offer an undo makes, then rewind to a middle checkpoint, undo.
func TestChain2AcceptOfferRewindMiddle(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.rewind(cp0)
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.acceptPending("f.txt")
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after accepting offer")
		s3 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp1")
		z.wantWT("f.txt", z.L(3, "A3"), "after rewind cp1")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo 2")
	})
}

// Z02: undo, accept offer, undo the undo, undo again: accepted content must survive.
func TestChain2UndoAcceptedOfferUndoAgain(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		s2 := z.rewind(s1)
		z.acceptPending("f.txt")
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after accepting offer")
		s3 := z.rewind(s2)
		z.wantWS("f.txt", z.base, "after undoing the undo")
		z.wantWT("f.txt", z.base, "after undoing the undo")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after undo of undo of undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo of undo of undo")
	})
}

// Z03: accept a pending record created before a checkpoint after rewinding past it.
func TestChain2AcceptOlderPendingAfterRewind(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(1)
		z.edit("p2", "f.txt", 12, "P12")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.base, "after rewind")
		z.wantWT("f.txt", z.L(10, "P10"), "after rewind")
		z.accept("p1")
		z.wantWS("f.txt", z.L(10, "P10"), "after accept p1")
		// The undo gives back the review state of s1 too: p1 pending.
		z.rewind(s1)
		z.wantWS("f.txt", z.base, "after undo")
		z.wantWT("f.txt", z.L(10, "P10", 12, "P12"), "after undo")
		z.rewind(cp1)
		z.wantWS("f.txt", z.base, "after rewind again")
		z.wantWT("f.txt", z.L(10, "P10"), "after rewind again")
	})
}

// Z04: same, then rewind to a checkpoint before the older pending record.
func TestChain2AcceptOlderPendingThenRewindBefore(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.edit("p2", "f.txt", 12, "P12")
		z.rewind(cp1)
		z.accept("p1")
		s2 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.wantWT("f.txt", z.base, "after rewind cp0")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(10, "P10"), "after undo")
		z.wantWT("f.txt", z.L(10, "P10"), "after undo")
	})
}

// Z05: two files by one Bash call; accept one, rewind, undo, accept all.
func TestChain2BashTwoFiles(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.bash2("b1", "f.txt", z.L(3, "B3"), "g.txt", "g1\n")
		z.accept("b1:0")
		z.edit("p1", "f.txt", 10, "P10")
		z.wantWS("f.txt", z.L(3, "B3"), "after accept f")
		z.wantWS("g.txt", chainAbsent, "after accept f")
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.wantWS("g.txt", chainAbsent, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "B3"), "after undo")
		z.wantWS("g.txt", chainAbsent, "after undo")
		z.wantWT("g.txt", "g1\n", "after undo")
		z.wantWT("f.txt", z.L(3, "B3", 10, "P10"), "after undo")
	})
}

// Z06: two files via two puts in a row, one accepted, one rejected; rewind middle; undo.
func TestChain2TwoPutsAcceptReject(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("g1", "g.txt", "g one\ng two\ng three\n")
		z.put("n1", "n.txt", "n\n")
		z.accept("g1")
		z.reject("n1")
		cp1 := z.cp(2)
		z.put("g2", "g.txt", "g one\ng two\ng THREE\n")
		z.put("n2", "n.txt", "n2\n")
		s1 := z.rewind(cp1)
		z.wantWS("g.txt", "g one\ng two\ng three\n", "after rewind cp1")
		z.wantWS("n.txt", chainAbsent, "after rewind cp1")
		z.wantWT("n.txt", chainAbsent, "after rewind cp1")
		z.rewind(s1)
		z.wantWS("n.txt", chainAbsent, "after undo")
		z.wantWT("n.txt", "n2\n", "after undo")
		s3 := z.rewind(cp0)
		z.wantWS("g.txt", chainAbsent, "after rewind cp0")
		z.wantWS("n.txt", chainAbsent, "after rewind cp0")
		z.rewind(s3)
		z.wantWS("g.txt", "g one\ng two\ng three\n", "after undo 2")
		z.wantWS("n.txt", chainAbsent, "after undo 2")
		z.wantWT("n.txt", "n2\n", "after undo 2")
		z.wantWT("g.txt", "g one\ng two\ng THREE\n", "after undo 2")
	})
}

// Z07: delete of an accepted tracked file, rewind before it, undo.
func TestChain2DeleteAcceptedTracked(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.rm("d1", "keep.txt")
		z.accept("d1")
		z.wantWS("keep.txt", chainAbsent, "after accept delete")
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.rewind(cp0)
		z.wantWS("keep.txt", "keep\n", "after rewind")
		z.wantWT("keep.txt", "keep\n", "after rewind")
		z.rewind(s1)
		z.wantWS("keep.txt", chainAbsent, "after undo")
		z.wantWT("keep.txt", chainAbsent, "after undo")
		z.wantWS("f.txt", z.base, "after undo")
		z.rewind(cp0)
		z.wantWS("keep.txt", "keep\n", "after rewind 2")
	})
}

// Z08: delete of an accepted created file, pending recreate; rewind between; undo.
func TestChain2DeleteAcceptedThenRecreate(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("n1", "n.txt", "one\n")
		z.accept("n1")
		cp1 := z.cp(1)
		z.rm("d1", "n.txt")
		z.accept("d1")
		cp2 := z.cp(2)
		z.put("n2", "n.txt", "two\n")
		s1 := z.rewind(cp2)
		z.wantWS("n.txt", chainAbsent, "after rewind cp2")
		z.wantWT("n.txt", chainAbsent, "after rewind cp2")
		s2 := z.rewind(cp1)
		z.wantWS("n.txt", "one\n", "after rewind cp1")
		z.wantWT("n.txt", "one\n", "after rewind cp1")
		z.rewind(s2)
		z.wantWS("n.txt", chainAbsent, "after undo cp1")
		z.wantWT("n.txt", chainAbsent, "after undo cp1")
		z.rewind(s1)
		z.wantWS("n.txt", chainAbsent, "after undo cp2")
		z.wantWT("n.txt", "two\n", "after undo cp2")
	})
}

// Z11: bulk reject mid-chain after an undo, then rewind, then undo.
func TestChain2BulkRejectAfterUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 10, "P10")
		z.put("g1", "g.txt", "g\n")
		s1 := z.rewind(cp0)
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWS("g.txt", chainAbsent, "after undo")
		z.bulk(false)
		z.wantWS("f.txt", z.L(3, "A3"), "after bulk reject")
		z.wantWS("g.txt", chainAbsent, "after bulk reject")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWS("g.txt", chainAbsent, "after undo 2")
	})
}

// Z12: bulk accept mid-chain after a rewind to a middle checkpoint, then rewind older, undo both.
func TestChain2BulkAcceptMid(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 3, "P3")
		cp1 := z.cp(2)
		z.edit("p2", "f.txt", 10, "P10")
		z.put("g1", "g.txt", "g\n")
		s1 := z.rewind(cp1)
		z.bulk(true)
		z.wantWS("f.txt", z.L(3, "P3"), "after bulk accept")
		z.wantWS("g.txt", chainAbsent, "after bulk accept")
		s2 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(3, "P3"), "after undo cp0")
		z.wantWT("f.txt", z.L(3, "P3"), "after undo cp0")
		z.rewind(s1) // the bulk accept was after s1: undone with the rest
		z.wantWS("f.txt", z.base, "after undo cp1")
		z.wantWS("g.txt", chainAbsent, "after undo cp1")
		z.wantWT("f.txt", z.L(3, "P3", 10, "P10"), "after undo cp1")
		z.wantWT("g.txt", "g\n", "after undo cp1")
	})
}

// Z13: same line changed twice (accepted then pending), rewind, undo, reject offer.
func TestChain2SameLineTwice(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 3, "B3")
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "B3"), "after undo")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "B3"), "after undo 2")
	})
}

// Z14: a long chain: accept, reject, rewind middle, new work, undo, selector, undo of undo.
func TestChain2LongChain(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 2, "A2")
		z.accept("a1")
		z.edit("r1", "f.txt", 5, "R5")
		z.reject("r1")
		cp1 := z.cp(2)
		z.edit("a2", "f.txt", 8, "A8")
		z.accept("a2")
		z.edit("p1", "f.txt", 11, "P11")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(2, "A2"), "after rewind cp1")
		z.wantWT("f.txt", z.L(2, "A2"), "after rewind cp1")
		z.edit("b1", "f.txt", 14, "B14")
		z.accept("b1")
		s2 := z.rewind(s1)
		z.wantWS("f.txt", z.L(2, "A2", 8, "A8"), "after undo")
		z.wantWT("f.txt", z.L(2, "A2", 8, "A8", 11, "P11"), "after undo")
		s3 := z.sel(api.RollbackRequest{Last: 1}) // p1: b1 is rewound, r1 rejected
		z.wantWS("f.txt", z.L(2, "A2", 8, "A8"), "after last 1")
		z.wantWT("f.txt", z.L(2, "A2", 8, "A8"), "after last 1")
		s4 := z.rewind(s2)
		z.wantWS("f.txt", z.L(2, "A2", 14, "B14"), "after undo of undo")
		z.wantWT("f.txt", z.L(2, "A2", 14, "B14"), "after undo of undo")
		_ = s3
		s5 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.wantWT("f.txt", z.base, "after rewind cp0")
		z.rewind(s5)
		z.wantWS("f.txt", z.L(2, "A2", 14, "B14"), "after final undo")
		z.wantWT("f.txt", z.L(2, "A2", 14, "B14"), "after final undo")
		z.rewind(s4)
		z.wantWS("f.txt", z.L(2, "A2", 8, "A8"), "after undo s4")
		z.wantWT("f.txt", z.L(2, "A2", 8, "A8"), "after undo s4")
	})
}

// Z15: reject an offer that takes something out (offered Rollback record removing a pending line).
func TestChain2RejectOfferRemoval(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(1)
		z.edit("a2", "f.txt", 10, "A10")
		z.accept("a2")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 10, "A10"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "A10"), "after undo")
		z.edit("p1", "f.txt", 16, "P16")
		s3 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind 2")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 10, "A10"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 10, "A10", 16, "P16"), "after undo 2")
		z.rejectPending("f.txt")
		z.wantWS("f.txt", z.L(3, "A3", 10, "A10"), "after reject offer")
	})
}

// Z16: rewind to a checkpoint, then to an older one, then undo the first (skipping undo of the second).
func TestChain2UndoOlderRewindFirst(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("a2", "f.txt", 7, "A7")
		z.accept("a2")
		z.edit("p1", "f.txt", 12, "P12")
		s1 := z.rewind(cp1)
		z.rewind(cp0)
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 7, "A7"), "after undo of the first")
		z.wantWT("f.txt", z.L(3, "A3", 7, "A7", 12, "P12"), "after undo of the first")
	})
}

// Z17: reject an accepted change, rewind to before it, undo: the rejection holds.
func TestChain2RejectAcceptedRewindBefore(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("a2", "f.txt", 9, "A9")
		z.accept("a2")
		z.reject("a1")
		z.wantWS("f.txt", z.L(9, "A9"), "after reject a1")
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(9, "A9"), "after undo")
		z.wantWT("f.txt", z.L(9, "A9"), "after undo")
	})
}

// Z18: pending edit of a new file, accept after rewind past a later delete.
func TestChain2AcceptCreateAfterRewindPastDelete(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("n1", "n.txt", "one\n")
		cp1 := z.cp(1)
		z.rm("d1", "n.txt")
		s1 := z.rewind(cp1)
		z.wantWS("n.txt", chainAbsent, "after rewind")
		z.wantWT("n.txt", "one\n", "after rewind")
		z.accept("n1")
		z.wantWS("n.txt", "one\n", "after accept n1")
		z.rewind(s1) // n1 pending again, as at s1
		z.wantWS("n.txt", chainAbsent, "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
	})
}

// Z19: undo offer accepted for one file, rejected for another, then undo all.
func TestChain2OfferSplitAcrossFiles(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		z.put("g1", "g.txt", "g\n")
		s1 := z.rewind(cp0)
		s2 := z.rewind(s1)
		z.wantWS("f.txt", z.base, "after undo")
		z.wantWS("g.txt", chainAbsent, "after undo")
		z.acceptPending("f.txt")
		z.rejectPending("g.txt")
		z.wantWS("f.txt", z.L(10, "P10"), "after accept f")
		z.wantWS("g.txt", chainAbsent, "after reject g")
		s3 := z.rewind(s2)
		z.wantWS("f.txt", z.base, "after undo of undo")
		z.wantWS("g.txt", chainAbsent, "after undo of undo")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(10, "P10"), "after undo 3")
		z.wantWS("g.txt", chainAbsent, "after undo 3")
	})
}

// Z20: Bash call with two files, reject whole call, rewind between, undo.
func TestChain2BashRejectThenRewind(t *testing.T) {
	chainRun(t, chainBashRejectThenRewind)
}

// chainBashRejectThenRewind is Z20's chain (TestChainCappedWatcher runs
// it too).
func chainBashRejectThenRewind(z *chain) {
	cp0 := z.cp(1)
	z.edit("a1", "f.txt", 3, "A3")
	z.accept("a1")
	cp1 := z.cp(2)
	z.bash2("b1", "f.txt", z.L(3, "A3", 12, "B12"), "g.txt", "g\n")
	z.reject("b1")
	z.bash2("b2", "f.txt", z.L(3, "A3", 16, "B16"), "n.txt", "n\n")
	z.accept("b2")
	s1 := z.rewind(cp1)
	z.wantWS("f.txt", z.L(3, "A3"), "after rewind")
	z.wantWS("n.txt", chainAbsent, "after rewind")
	z.rewind(s1)
	z.wantWS("f.txt", z.L(3, "A3", 16, "B16"), "after undo")
	z.wantWS("n.txt", "n\n", "after undo")
	z.wantWS("g.txt", chainAbsent, "after undo")
	s3 := z.rewind(cp0)
	z.wantWS("f.txt", z.base, "after rewind cp0")
	z.wantWS("n.txt", chainAbsent, "after rewind cp0")
	z.rewind(s3)
	z.wantWS("f.txt", z.L(3, "A3", 16, "B16"), "after undo 2")
	z.wantWS("n.txt", "n\n", "after undo 2")
}

// Z21: rewinding twice to the same safety checkpoint.
func TestChain2UndoTwice(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.rewind(s1)
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after second undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after second undo")
		z.acceptPending("f.txt")
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after accept")
	})
}

// Z22: reject the accepted rollback record (the part the workspace followed) after an undo.
func TestChain2RejectAcceptedRollbackPart(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("a2", "f.txt", 8, "A8")
		z.accept("a2")
		z.edit("p1", "f.txt", 13, "P13")
		s1 := z.rewind(cp0)
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 8, "A8"), "after undo")
		all, _ := z.eng.Records(z.ctx, z.s.ID, "accepted", "f.txt")
		var last string
		for _, r := range all {
			if r.ToolName == "Rollback" {
				last = r.ID
			}
		}
		if last == "" {
			return
		}
		z.reject(last)
		z.wantWS("f.txt", z.base, "after rejecting the undo's accepted part")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.wantWT("f.txt", z.base, "after rewind 2")
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undo 2")
	})
}

// Z23: create accepted, modify accepted, delete pending; rewind middle; undo; rewind older; undo.
func TestChain2CreateModifyDelete(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("n1", "n.txt", "a\nb\nc\nd\ne\n")
		z.accept("n1")
		cp1 := z.cp(2)
		z.put("n2", "n.txt", "a\nb\nC\nd\ne\n")
		z.accept("n2")
		z.rm("d1", "n.txt")
		s1 := z.rewind(cp1)
		z.wantWS("n.txt", "a\nb\nc\nd\ne\n", "after rewind cp1")
		z.wantWT("n.txt", "a\nb\nc\nd\ne\n", "after rewind cp1")
		z.rewind(s1)
		z.wantWS("n.txt", "a\nb\nC\nd\ne\n", "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
		s3 := z.rewind(cp0)
		z.wantWS("n.txt", chainAbsent, "after rewind cp0")
		z.rewind(s3)
		z.wantWS("n.txt", "a\nb\nC\nd\ne\n", "after undo 2")
		z.wantWT("n.txt", chainAbsent, "after undo 2")
	})
}

// Z24: pending delete rejected, rewind before creation, undo.
func TestChain2RejectedDeleteRewind(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("n1", "n.txt", "agent\n")
		z.accept("n1")
		z.rm("d1", "n.txt")
		z.reject("d1")
		z.wantWT("n.txt", "agent\n", "after reject delete")
		s1 := z.rewind(cp0)
		z.wantWS("n.txt", chainAbsent, "after rewind")
		z.rewind(s1)
		z.wantWS("n.txt", "agent\n", "after undo")
		z.wantWT("n.txt", "agent\n", "after undo")
	})
}

// Z26: rewind, reject an older pending record, undo.
func TestChain2RejectOlderPendingAfterRewind(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(1)
		z.edit("p2", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.reject("p1")
		z.wantWS("f.txt", z.base, "after reject p1")
		z.wantWT("f.txt", z.base, "after reject p1")
		z.rewind(s1)
		z.wantWS("f.txt", z.base, "after undo")
		z.wantWT("f.txt", z.L(10, "P10", 14, "P14"), "after undo")
		z.rewind(cp1)
		z.wantWS("f.txt", z.base, "after rewind cp1 again")
	})
}

// Z27: two rewinds to the same checkpoint with new work between; undo second then first.
func TestChain2TwoRewindsSameCp(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 7, "P7")
		s1 := z.rewind(cp0)
		z.edit("b1", "f.txt", 11, "B11")
		z.accept("b1")
		z.edit("q1", "f.txt", 15, "Q15")
		s2 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(11, "B11"), "after undo 2")
		z.wantWT("f.txt", z.L(11, "B11", 15, "Q15"), "after undo 2")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 1")
		z.wantWT("f.txt", z.L(3, "A3", 7, "P7"), "after undo 1")
	})
}

// Z28: a brought-back create, accepted, then more edits; rewind before creation; undo.
func TestChain2BroughtBackCreateAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("n1", "n.txt", "a\nb\nc\n")
		cp1 := z.cp(2)
		z.reject("n1")
		z.rewind(cp1)
		z.acceptPending("n.txt")
		z.wantWS("n.txt", "a\nb\nc\n", "after accept offer")
		z.put("n2", "n.txt", "a\nb\nC\n")
		z.accept("n2")
		z.put("n3", "n.txt", "A\nb\nC\n")
		s2 := z.rewind(cp0)
		z.wantWS("n.txt", chainAbsent, "after rewind cp0")
		z.wantWT("n.txt", chainAbsent, "after rewind cp0")
		z.rewind(s2)
		z.wantWS("n.txt", "a\nb\nC\n", "after undo")
		z.wantWT("n.txt", "A\nb\nC\n", "after undo")
	})
}

// Z29: accept the offered record after a second undo with intermediate accepted new work.
func TestChain2OfferAfterNewWork(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 7, "P7")
		s1 := z.rewind(cp0)
		z.edit("b1", "f.txt", 11, "B11")
		z.accept("b1")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.acceptPending("f.txt")
		z.wantWS("f.txt", z.L(3, "A3", 7, "P7"), "after accepting offer")
		z.wantWT("f.txt", z.L(3, "A3", 7, "P7"), "after accepting offer")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 7, "P7"), "after undo 2")
	})
}

// Z30: checkpoint taken after an undo (rollback records before it); accept offer; new work; rewind to it.
func TestChain2CheckpointAfterUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.rewind(s1)
		cp2 := z.cp(5)
		z.edit("c1", "f.txt", 16, "C16")
		z.accept("c1")
		z.acceptPending("f.txt")
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10", 16, "C16"), "after accepts")
		s3 := z.rewind(cp2) // p1 pending again, as at cp2
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp2")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after rewind cp2")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10", 16, "C16"), "after undo")
	})
}

// Z31: checkpoint after undo, offer still pending, new pending work, rewind to it; then accept the offer.
func TestChain2CheckpointAfterUndoOfferPending(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.rewind(s1)
		cp2 := z.cp(5)
		z.edit("c1", "f.txt", 16, "C16")
		s3 := z.rewind(cp2)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp2")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after rewind cp2")
		z.acceptPending("f.txt")
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after accepting offer")
		z.rewind(s3) // the accept was after s3: p1 pending again
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10", 16, "C16"), "after undo")
	})
}
